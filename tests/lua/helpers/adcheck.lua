-- SPDX-License-Identifier: MIT
-- Shared checks of the ad tests (tests/lua/ad_*.lua, lib_*.lua):
--   local C = dofile("helpers/adcheck.lua")   (ctest runs them in tests/lua)
local C = {}
local fmt = string.format

-- |a - b| <= tol * max(1, |a|, |b|)
function C.close(a, b, tol)
  if a == b then return true end
  return math.abs(a - b) <= tol * math.max(1, math.abs(a), math.abs(b))
end

-- ad.check_grad at rtol (default 1e-6), atol 1e-8
function C.grad(name, f, theta, rtol)
  local ok, r = ad.check_grad(f, theta, {rtol = rtol or 1e-6, atol = 1e-8})
  assert(ok, fmt("%s: gradient check failed, max rel err %g at %d", name, r.max_rel_err, r.worst))
  return r
end

-- ad.hessian against central differences of ad.grad (step 1e-5 max(1, |x|)),
-- and symmetric; its gradient equal to ad.grad's
function C.hessian(name, f, theta, tol)
  tol = tol or 1e-6
  local _, g, H = ad.hessian(f, theta)
  local _, g2 = ad.grad(f, theta)
  for i = 1, #theta do assert(g[i] == g2[i], name .. ": hessian's gradient differs") end
  for j = 1, #theta do
    local tp, tm, h = {}, {}, 1e-5 * math.max(1, math.abs(theta[j]))
    for i = 1, #theta do tp[i], tm[i] = theta[i], theta[i] end
    tp[j], tm[j] = theta[j] + h, theta[j] - h
    local _, gp = ad.grad(f, tp)
    local _, gm = ad.grad(f, tm)
    for i = 1, #theta do
      local fd = (gp[i] - gm[i]) / (2 * h)
      assert(C.close(H[i][j], fd, tol), fmt("%s: H[%d][%d] = %g, fd %g", name, i, j, H[i][j], fd))
      assert(C.close(H[i][j], H[j][i], 1e-12), name .. ": H not symmetric")
    end
  end
  return H
end

-- f(...) raises an error containing `text` (plain)
function C.fails(text, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error containing " .. text)
  assert(tostring(err):find(text, 1, true), fmt("error '%s' does not contain '%s'", tostring(err), text))
end

return C
