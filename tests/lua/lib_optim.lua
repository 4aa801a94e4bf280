-- ranks: nompi 1
-- SPDX-License-Identifier: MIT
-- lib/optim.lua: L-BFGS and gradient descent on Rosenbrock, a quadratic, a
-- logistic regression (gradients from ad.grad), a log barrier that is
-- infinite beyond its domain, and bad input.

local optim = require "mplua.optim"

local function maxdiff(a, b)
  local m = 0
  for i = 1, #a do m = math.max(m, math.abs(a[i] - b[i])) end
  return m
end

local function copy(t)
  local r = {}
  for i = 1, #t do r[i] = t[i] end
  return r
end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- Minimizes with both methods and checks the argmin, convergence and x0.
local function check(name, fg, x0, xstar, tol, gd_opts, lb_opts)
  local saved = copy(x0)
  for _, method in ipairs{"lbfgs", "gd"} do
    local x, f, info = optim[method](fg, x0, method == "gd" and gd_opts or lb_opts)
    local err = maxdiff(x, xstar)
    assert(info.converged, string.format("%s/%s: not converged: %s", name, method, info.message))
    assert(err <= tol, string.format("%s/%s: |x - x*| = %g > %g", name, method, err, tol))
    local f2 = fg(x)
    assert(f == f2, name .. "/" .. method .. ": f is not fg(x)")
    assert(#info.g == #x0 and info.nfev >= info.iter and info.iter > 0, name .. ": info fields")
    assert(same(x0, saved), name .. "/" .. method .. ": x0 was modified")
  end
end

-- 1. Rosenbrock, 2-d and 10-d, through ad.grad
local function rosen(x)
  local s = 0
  for i = 1, #x - 1 do s = s + 100 * (x[i + 1] - x[i] ^ 2) ^ 2 + (1 - x[i]) ^ 2 end
  return s
end
local function rosen_fg(x) return ad.grad(rosen, x) end
for _, n in ipairs{2, 10} do
  local x0, ones = {}, {}
  for i = 1, n do x0[i], ones[i] = (i % 2 == 1) and -1.2 or 1.0, 1 end
  -- gd zigzags down the valley: it needs many iterations and a looser tolerance
  check("rosenbrock" .. n, rosen_fg, x0, ones, 1e-3, {maxiter = 100000}, nil)
  local x, _, info = optim.lbfgs(rosen_fg, x0)
  assert(maxdiff(x, ones) < 1e-6, "rosenbrock: lbfgs should be precise")
  assert(info.iter < 200, "rosenbrock: lbfgs took " .. info.iter .. " iterations")
end

-- 2. Convex quadratic 0.5 x'Ax - b'x with A = D + u u' (SPD); the minimum
--    solves A x = b, and we build b from a chosen x*.
local D, u, xstar = {1, 2, 5, 10, 20}, {1, -1, 0.5, 0.25, 2}, {3, -1, 0.5, 2, -4}
local function Ax(x)
  local ux, r = 0, {}
  for i = 1, #x do ux = ux + u[i] * x[i] end
  for i = 1, #x do r[i] = D[i] * x[i] + u[i] * ux end
  return r
end
local b = Ax(xstar)
local function quad_fg(x) -- analytic gradient A x - b
  local y, f, g = Ax(x), 0, {}
  for i = 1, #x do f = f + 0.5 * x[i] * y[i] - b[i] * x[i]; g[i] = y[i] - b[i] end
  return f, g
end
check("quadratic", quad_fg, {0, 0, 0, 0, 0}, xstar, 1e-6, nil, nil)
local _, _, qinfo = optim.lbfgs(quad_fg, {0, 0, 0, 0, 0})
assert(qinfo.iter <= 20, "quadratic: lbfgs took " .. qinfo.iter .. " iterations")

-- 3. Logistic regression: negative log likelihood from ad, the reference
--    argmin from Newton's method on ad.hessian.
local N, P = 300, 3
local X, y, seed = {}, {}, 2024
local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
local beta_true = {0.5, -1, 2}
for i = 1, N do
  X[i] = {1, rnd() * 2 - 1, rnd() * 2 - 1}
  local eta = 0
  for j = 1, P do eta = eta + X[i][j] * beta_true[j] end
  y[i] = rnd() < 1 / (1 + math.exp(-eta)) and 1 or 0
end
local function nll(beta) return -ad.bernoulli_logit_lpmf(y, ad.matvec(X, beta)) end
local function nll_fg(beta) return ad.grad(nll, beta) end
local newton = {0, 0, 0}
for _ = 1, 30 do
  local _, g, H = ad.hessian(nll, newton)
  -- solve H d = g by Gaussian elimination (3x3, SPD)
  local A = {}
  for i = 1, P do A[i] = copy(H[i]); A[i][P + 1] = g[i] end
  for k = 1, P do
    for i = k + 1, P do
      local m = A[i][k] / A[k][k]
      for j = k, P + 1 do A[i][j] = A[i][j] - m * A[k][j] end
    end
  end
  local d = {}
  for i = P, 1, -1 do
    local s = A[i][P + 1]
    for j = i + 1, P do s = s - A[i][j] * d[j] end
    d[i] = s / A[i][i]
  end
  for i = 1, P do newton[i] = newton[i] - d[i] end
end
check("logistic", nll_fg, {0, 0, 0}, newton, 1e-5, nil, nil)

-- 4. A log barrier: f = sum(c_i x_i - log x_i) is +inf (ad: nan) for x_i <= 0,
--    and the first steps from x0 cross the barrier. Minimum at x_i = 1/c_i.
local c = {1, 10, 0.5}
local nonfinite = 0
local function barrier_fg(x)
  local f, g = ad.grad(function(t) return ad.sum(ad.mul(c, t)) - ad.sum(ad.log(t)) end, x)
  if f ~= f or f == math.huge then nonfinite = nonfinite + 1 end
  return f, g
end
-- gd sees only f in its line search: the decrease it needs for gtol 1e-8 is below
-- what f can resolve here (it stalls at max|g| ~4e-7), so ask for less
check("barrier", barrier_fg, {3, 3, 3}, {1, 0.1, 2}, 1e-5, {gtol = 2e-7}, nil)
assert(nonfinite > 0, "barrier: the line searches never met the barrier")
-- and one that returns math.huge by hand, starting next to the boundary
local walls = 0
local function wall_fg(x)
  if x[1] <= 0 then walls = walls + 1; return math.huge, {0} end
  return 1e-3 / x[1] + x[1], {-1e-3 / x[1] ^ 2 + 1}
end
check("wall", wall_fg, {0.5}, {math.sqrt(1e-3)}, 1e-6, {gtol = 1e-6}, nil)
assert(walls > 0, "wall: the line searches never met the wall")

-- 5. Options: callback sees every iteration and can stop; maxiter is honoured.
local seen = 0
local x, _, info = optim.lbfgs(rosen_fg, {-1.2, 1}, {callback = function(it, xc, f, g)
  assert(it == seen + 1 and #xc == 2 and type(f) == "number" and #g == 2, "callback arguments")
  seen = it
  return it == 5
end})
assert(seen == 5 and info.iter == 5 and not info.converged and info.status == "callback" and
       info.message == "stopped by callback",
       "callback stop: " .. info.message)
x, _, info = optim.gd(rosen_fg, {-1.2, 1}, {maxiter = 7})
assert(info.iter == 7 and not info.converged and info.status == "maxiter" and #x == 2, "gd maxiter")
_, _, info = optim.lbfgs(quad_fg, xstar)
assert(info.converged and info.iter == 0, "start at the minimum: nothing to do")

-- 6. `converged` means converged (max|g| <= gtol max(1, |f|)); a stall or the
--    iteration limit has its own status. Before: gd's default ftol = 0 still
--    stopped after 3 iterations without decrease with converged = true, and
--    lbfgs reported converged through ftol with max|g| above gtol.
local function gnorm(g) local m = 0 for i = 1, #g do m = math.max(m, math.abs(g[i])) end return m end
local function honest(name, f, info, gtol)
  assert(info.converged == (info.status == "converged"), name .. ": converged and status disagree")
  if info.converged then
    assert(gnorm(info.g) <= gtol * math.max(1, math.abs(f)),
           string.format("%s: converged with max|g| %g > gtol %g", name, gnorm(info.g), gtol))
  end
end
-- an ill-conditioned quadratic on a large offset: gd's accepted steps lower f
-- by less than an ulp, far from the minimum x2 = 0 (|g2| = 1 > gtol*f = 0.1)
local function offset_fg(x) return 1e7 + 0.5 * (1e10 * x[1] ^ 2 + x[2] ^ 2), {1e10 * x[1], x[2]} end
x, _, info = optim.gd(offset_fg, {1e-3, 1}, {ftol = 0, maxiter = 2000})
honest("gd offset", 1e7, info, 1e-8)
assert(not info.converged and info.status == "maxiter" and info.iter == 2000 and x[2] > 0.9,
       "gd offset, ftol = 0 (off): " .. info.status .. " " .. info.message)
-- the default ftol (1e-15) stops the same run as "stalled", not converged
x, _, info = optim.gd(offset_fg, {1e-3, 1})
honest("gd offset", 1e7, info, 1e-8)
assert(info.status == "stalled" and not info.converged and info.iter < 100, "gd stalled: " .. info.status)
-- lbfgs asked for gtol 1e-10 on 4-d Rosenbrock: converged only when true
local x4 = {-1.2, 1, -1.2, 1}
x, f, info = optim.lbfgs(rosen_fg, x4, {gtol = 1e-10})
honest("lbfgs rosenbrock4", f, info, 1e-10)
assert(info.converged, "lbfgs rosenbrock4 reaches gtol 1e-10: " .. info.message)
-- a minimum that f cannot resolve: 1e12 + a quadratic, gtol 1e-20 (max|g| <= 1e-8)
x, f, info = optim.lbfgs(function(p) return 1e12 + 0.5 * (p[1] ^ 2 + 4 * p[2] ^ 2), {p[1], 4 * p[2]} end,
                         {3, 1}, {gtol = 1e-20})
honest("lbfgs offset", f, info, 1e-20)
assert(info.status == "stalled" and not info.converged and info.message:find("stalled", 1, true),
       "lbfgs offset: " .. info.status .. ": " .. info.message)
-- every other run above is honest too
for _, n in ipairs{2, 10} do
  local x0 = {}
  for i = 1, n do x0[i] = (i % 2 == 1) and -1.2 or 1.0 end
  for _, method in ipairs{"lbfgs", "gd"} do
    local xx, ff, ii = optim[method](rosen_fg, x0, {maxiter = 3000})
    honest(method .. " rosenbrock" .. n, ff, ii, 1e-8)
  end
end

-- 7. Bad input is raised with a clear message.
local function fails(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(err):find(pattern), "error '" .. tostring(err) .. "' does not match " .. pattern)
end
for _, method in ipairs{"lbfgs", "gd"} do
  local m, name = optim[method], "optim." .. method
  fails("bad argument #1 to '" .. name .. "' %(function expected, got number%)", m, 42, {1})
  fails("bad argument #2 to '" .. name .. "' %(table of numbers expected, got number%)", m, quad_fg, 5)
  fails("bad argument #2 to '" .. name .. "' %(empty table%)", m, quad_fg, {})
  fails("x0%[2%] is abc", m, quad_fg, {1, "abc"})
  fails("x0%[1%] is %-?nan", m, quad_fg, {0 / 0})
  fails("bad argument #3 to '" .. name .. "'", m, quad_fg, {1, 2, 3, 4, 5}, "fast")
  fails("gradient of length 1, expected 2", m, function() return 1, {1} end, {1, 2})
  fails("fg returned nil as its value", m, function() end, {1})
  fails("fg%(x0%) is not finite", m, wall_fg, {-1})
end
fails("opts.step must be a positive number", optim.gd, quad_fg, {1, 2, 3, 4, 5}, {step = -1})

print("optim: ok")
