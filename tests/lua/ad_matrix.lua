-- ranks: nompi
-- SPDX-License-Identifier: MIT
-- Dense matrix functions: values against references (mpmath 1.3.0 at 50
-- digits: cholesky, det, the multi-normal density; script at the end) and
-- closed forms, gradients by ad.check_grad, tangents (ad.jvp) against the
-- Jacobian, shapes, constants, and a Gaussian process posterior built from
-- them.

local fmt = string.format
local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local close, check = C.close, C.grad
-- ad.jvp (forward passes through the custom nodes) against J v
local function check_jvp(name, F, theta)
  local v = {}
  for i = 1, #theta do v[i] = math.sin(i) end
  local _, jv = ad.jvp(F, theta, v)
  local _, J = ad.jacobian(F, theta)
  if type(jv) == "number" then jv = {jv} end
  for i = 1, #J do
    local s = 0
    for j = 1, #theta do s = s + J[i][j] * v[j] end
    assert(close(jv[i], s, 1e-12), fmt("%s: jvp[%d] %.17g vs J v %.17g", name, i, jv[i], s))
  end
end
local function flat(rows) -- column-major list of a table of rows
  local m, n, t = #rows, #rows[1], {}
  for j = 1, n do for i = 1, m do t[i + (j - 1) * m] = rows[i][j] end end
  return t
end

local A = {{4, 2, 0.6}, {2, 5, 1.5}, {0.6, 1.5, 3}}
local B = {{1.5, -0.3, 0.2}, {0.4, 2.0, -0.7}, {0.1, 0.9, -1.1}}
local x = {0.3, -1.0, 2.0}

-- shapes and constants
local M = ad.matrix(A)
assert(tostring(M):find("ad.const(3x3)", 1, true), tostring(M))
local r, c = M:dims()
assert(r == 3 and c == 3 and #M == 9 and M[2] == 2 and M[4] == 2 and M[3] == 0.6)
local V = ad.value(ad.exp(M))
assert(#V == 3 and V[3][2] == math.exp(1.5), "value of a matrix: rows")
local r2, c2 = ad.matrix({1, 2, 3, 4, 5, 6}, 2, 3):dims()
assert(r2 == 2 and c2 == 3)
assert(select(2, (ad.exp(mp.array("f64", {{1, 2}, {3, 4}}))):dims()) == 2, "elementwise keeps the shape")
local ok, err = pcall(ad.matrix, {1, 2, 3}, 2, 2)
assert(not ok and err:find("3 elements, 2x2 needs 4", 1, true), err)
ok, err = pcall(ad.cholesky_decompose, {1, 2, 3, 4})
assert(not ok and err:find("matrix expected", 1, true), err)
ok, err = pcall(ad.matmul, A, {{1, 2}})
assert(not ok and err:find("sizes do not match (3x3 and 1x2)", 1, true), err)

-- matvec and matmul: values, gradients (both sides vars), tangents
local Ax = ad.matvec(A, x)
for i = 1, 3 do assert(close(Ax[i], A[i][1] * x[1] + A[i][2] * x[2] + A[i][3] * x[3], 1e-15)) end
local AB = ad.matmul(A, B)
for i = 1, 3 do for j = 1, 3 do
  local s = 0
  for k = 1, 3 do s = s + A[i][k] * B[k][j] end
  assert(close(AB[i + (j - 1) * 3], s, 1e-15), "matmul value")
end end
local Ab = ad.matmul(A, x) -- matrix times vector: a vector
assert(#Ab == 3 and Ab:dims() == 3 and close(Ab[2], Ax[2], 1e-15))
local w = {}
for i = 1, 9 do w[i] = math.cos(i) end
local fA, fB = flat(A), flat(B)
local theta = {}
for i = 1, 9 do theta[i], theta[9 + i] = fA[i], fB[i] end
local function prod(t)
  local a = ad.matrix(t:slice(1, 9), 3, 3)
  local b = ad.matrix(t:slice(10, 18), 3, 3)
  return ad.dot(w, ad.matmul(a, b)) + ad.dot(x, ad.matvec(a, t:slice(10, 12)))
end
check("matmul and matvec, vars both sides", prod, theta)
check_jvp("matmul", function(t) return ad.matmul(ad.matrix(t:slice(1, 9), 3, 3), B) end, fA)
check_jvp("matmul, B var", function(t) return ad.matmul(A, ad.matrix(t:slice(1, 9), 3, 3)) end, fB)
check("matmul, A var, B 3x2", function(t) return ad.sum(ad.matmul(ad.matrix(t, 3, 3), {{1, 2}, {3, 4}, {5, 6}})) end, fA)
-- matvec with a var matrix has a Hessian (bilinear)
local w3 = {w[1], w[2], w[3]}
local _, _, H = ad.hessian(function(t) return ad.dot(w3, ad.matvec(ad.matrix(t:slice(1, 9), 3, 3), t:slice(10, 12))) end, theta)
assert(H[1][10] == w[1] and H[2][10] == w[2] and H[4][11] == w[1] and H[1][1] == 0 and H[10][11] == 0)
-- and so have products of var matrices (second order through the custom nodes)
C.hessian("matmul and matvec, vars both sides", prod, theta, 1e-5)
-- an operation without second derivatives is refused by name
ok, err = pcall(ad.hessian, function(t) return ad.gamma_lcdf(2, ad.exp(t[1]), 1) end, {0.3})
assert(not ok and err:find("no second-order information for this operation", 1, true), err)

-- Cholesky: reference, L L' = A, gradients through a symmetric A(theta)
local Lref = {{2, 0, 0}, {1, 2, 0}, {0.29999999999999999, 0.59999999999999998, 1.5968719422671311}}
local L = ad.cholesky_decompose(A)
for i = 1, 3 do for j = 1, 3 do
  assert(close(L[i + (j - 1) * 3], Lref[i][j], 1e-15), fmt("L[%d][%d] %.17g", i, j, L[i + (j - 1) * 3]))
end end
local LLt = ad.matmul(L, ad.matrix({L[1], L[4], L[7], L[2], L[5], L[8], L[3], L[6], L[9]}, 3, 3))
for i = 1, 9 do assert(close(LLt[i], fA[i], 1e-15), "L L' = A") end
local function spd(t) -- a symmetric positive definite matrix from 6 numbers
  local a = {{t[1], t[2], t[3]}, {t[2], t[4], t[5]}, {t[3], t[5], t[6]}}
  return ad.matrix(a)
end
local s6 = {4, 2, 0.6, 5, 1.5, 3}
check("cholesky", function(t) return ad.dot(w, ad.cholesky_decompose(spd(t))) end, s6)
check_jvp("cholesky", function(t) return ad.cholesky_decompose(spd(t)) end, s6)
-- only the lower triangle is read
check("cholesky, lower triangle", function(t) return ad.dot(w, ad.cholesky_decompose(ad.matrix(t, 3, 3))) end, fA)
local bad = ad.cholesky_decompose({{1, 2}, {2, 1}})
assert(bad[4] ~= bad[4], "not positive definite: NaN")

-- triangular solves
local z = ad.mdivide_left_tri_low(L, x)
local zt = ad.mdivide_left_tri_low(L, x, "T")
for i = 1, 3 do
  local s, st = 0, 0
  for k = 1, 3 do s = s + Lref[i][k] * z[k]; st = st + Lref[k][i] * zt[k] end
  assert(close(s, x[i], 1e-15) and close(st, x[i], 1e-15), "L z = x, L' z = x")
end
for _, how in ipairs{"N", "T"} do
  check("trisolve " .. how, function(t)
    local Lt = ad.cholesky_decompose(spd(t:slice(1, 6)))
    return ad.dot({w[1], w[2], w[3], w[4], w[5], w[6]}, ad.mdivide_left_tri_low(Lt, ad.matrix(t:slice(7, 12), 3, 2), how))
  end, {4, 2, 0.6, 5, 1.5, 3, 0.3, -1, 2, 0.5, 0.1, -0.7})
  check_jvp("trisolve " .. how, function(t)
    return ad.mdivide_left_tri_low(ad.cholesky_decompose(spd(t:slice(1, 6))), t:slice(7, 9), how)
  end, {4, 2, 0.6, 5, 1.5, 3, 0.3, -1, 2})
end

-- log-determinant
assert(close(ad.log_determinant(B), 0.88953599456533561, 1e-15), "log_determinant")
check("log_determinant", function(t) return ad.log_determinant(ad.matrix(t, 3, 3)) end, fB)

-- multi-normal density on a Cholesky factor
local mu = {0.1, 0.2, -0.3}
assert(close(ad.multi_normal_cholesky_lpdf(x, mu, L), -6.2147791893386843, 1e-14), "mvn reference")
-- a diagonal factor: independent normals
local D = ad.matrix({{2, 0, 0}, {0, 0.5, 0}, {0, 0, 1.5}})
assert(close(ad.multi_normal_cholesky_lpdf(x, mu, D), ad.normal_lpdf(x, mu, {2, 0.5, 1.5}), 1e-15))
check("mvn in y, mu, L", function(t)
  return ad.multi_normal_cholesky_lpdf(t:slice(1, 3), t:slice(4, 6), ad.cholesky_decompose(spd(t:slice(7, 12))))
end, {0.3, -1, 2, 0.1, 0.2, -0.3, 4, 2, 0.6, 5, 1.5, 3})
-- several observations as columns, mu shared: the sum of single ones
local Y = ad.matrix({0.3, -1, 2, 1, 0, -0.5}, 3, 2)
assert(close(ad.multi_normal_cholesky_lpdf(Y, mu, L),
             ad.multi_normal_cholesky_lpdf({0.3, -1, 2}, mu, L) + ad.multi_normal_cholesky_lpdf({1, 0, -0.5}, mu, L), 1e-14))
check("mvn, 2 columns", function(t)
  return ad.multi_normal_cholesky_lpdf(Y, t:slice(1, 3), ad.cholesky_decompose(spd(t:slice(4, 9))))
end, {0.1, 0.2, -0.3, 4, 2, 0.6, 5, 1.5, 3})

-- add_diag
local Ad = ad.add_diag(A, {1, 2, 3})
assert(Ad[1] == 5 and Ad[5] == 7 and Ad[9] == 6 and Ad[2] == 2)
check("add_diag", function(t) return ad.dot(w, ad.add_diag(ad.matrix(t:slice(1, 9), 3, 3), t[10])) end,
      (function() local t = {table.unpack(fA)}; t[10] = 0.7; return t end)())

-- a Gaussian process posterior (posteriordb's gp_pois_regr shape, with a
-- normal likelihood): y ~ multi_normal(0, K + sigma^2 I),
-- K_ij = alpha^2 exp(-(x_i - x_j)^2 / (2 rho^2)); parameters on the log scale
local xs, ys = {-2, -1.2, -0.5, 0, 0.4, 1.1, 1.8, 2.5}, {}
for i, v in ipairs(xs) do ys[i] = math.sin(v) + 0.1 * math.cos(7 * i) end
local n = #xs
local D2 = mp.array("f64", n, n)
for i = 1, n do for j = 1, n do D2:set(i, j, (xs[i] - xs[j]) ^ 2) end end
local function gp(t)
  local alpha, rho, sigma = ad.exp(t[1]), ad.exp(t[2]), ad.exp(t[3])
  local K = ad.exp(D2 * (-0.5 / (rho * rho))) * (alpha * alpha)
  local Lk = ad.cholesky_decompose(ad.add_diag(K, sigma * sigma))
  return ad.multi_normal_cholesky_lpdf(ys, 0, Lk) + ad.normal_lpdf(t, 0, 1)
end
local p0 = {0.1, -0.3, -1.2}
check("gp posterior", gp, p0)
-- the same density from the log-determinant and a solve
local function gp2(t)
  local alpha, rho, sigma = ad.exp(t[1]), ad.exp(t[2]), ad.exp(t[3])
  local K = ad.add_diag(ad.exp(D2 * (-0.5 / (rho * rho))) * (alpha * alpha), sigma * sigma)
  local Lk = ad.cholesky_decompose(K)
  local zz = ad.mdivide_left_tri_low(Lk, ys)
  return -0.5 * ad.dot(zz, zz) - 0.5 * ad.log_determinant(K) - n * 0.5 * math.log(2 * math.pi)
         + ad.normal_lpdf(t, 0, 1)
end
local v1, g1 = ad.grad(gp, p0)
local v2, g2 = ad.grad(gp2, p0)
assert(close(v1, v2, 1e-12), fmt("gp: %.17g vs %.17g", v1, v2))
for i = 1, 3 do assert(close(g1[i], g2[i], 1e-10), "gp gradient " .. i) end

print("ad_matrix: ok")

--[==[ References (python3, mpmath 1.3.0, mp.dps = 50):
A = matrix([[4,2,0.6],[2,5,1.5],[0.6,1.5,3]]); cholesky(A)
B = matrix([[1.5,-0.3,0.2],[0.4,2.0,-0.7],[0.1,0.9,-1.1]]); log(abs(det(B)))
y = [0.3,-1,2], mu = [0.1,0.2,-0.3]: -1.5 log(2 pi) - 0.5 log(det(A)) - 0.5 (y-mu)' A^-1 (y-mu)
]==]
