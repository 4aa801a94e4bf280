-- ranks: nompi 1
-- SPDX-License-Identifier: MIT
-- ad.grad / ad.jacobian / ad.hessian on models, checked by ad.check_grad
-- (order-6 finite differences) to 1e-6 relative, and Hessians against
-- finite differences of gradients.

local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local close, check, check_hessian = C.close, C.grad, C.hessian

-- 1. Rosenbrock (scalar path)
local function rosen(x)
  local s = 0
  for i = 1, #x - 1 do
    s = s + 100 * (x[i + 1] - x[i] ^ 2) ^ 2 + (1 - x[i]) ^ 2
  end
  return s
end
local theta = {-1.2, 1.0, 0.7, 1.3, -0.4}
check("rosenbrock", rosen, theta)
local v, g, H = ad.hessian(rosen, {1, 1, 1, 1, 1})
assert(v == 0 and g[1] == 0, "rosenbrock minimum")
assert(H[1][1] == 802 and H[1][2] == -400 and H[2][2] == 1002, "rosenbrock analytic Hessian")
check_hessian("rosenbrock", rosen, theta)

-- 2. Logistic regression, vectorized: bernoulli_logit(y | X beta) + normal prior
local N, P = 200, 4
local X, y = {}, {}
local seed = 12345
local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
for i = 1, N do
  X[i] = {1}
  for j = 2, P do X[i][j] = rnd() * 2 - 1 end
  y[i] = rnd() < 0.5 and 1 or 0
end
local function logistic(beta)
  local eta = ad.matvec(X, beta)
  return ad.bernoulli_logit_lpmf(y, eta) + ad.normal_lpdf(beta, 0, 2.5)
end
local b0 = {0.1, -0.3, 0.5, 0.2}
check("logistic", logistic, b0)
check_hessian("logistic", logistic, b0)
-- the same model on the scalar path gives the same numbers
local function logistic_scalar(beta)
  local lp = 0
  for i = 1, N do
    local eta = 0
    for j = 1, P do eta = eta + X[i][j] * beta[j] end
    lp = lp + y[i] * eta - ad.log1p_exp(eta)
  end
  for j = 1, P do lp = lp - 0.5 * (beta[j] / 2.5) ^ 2 - math.log(2.5) - 0.9189385332046727 end
  return lp
end
local v1, g1 = ad.grad(logistic, b0)
local v2, g2 = ad.grad(logistic_scalar, b0)
assert(close(v1, v2, 1e-12), "logistic: vector and scalar values differ")
for j = 1, P do assert(close(g1[j], g2[j], 1e-11), "logistic: gradients differ") end

-- 3. Hierarchical normal (eight schools, non-centred): theta = mu, log tau, eta[8]
local ys = {28, 8, -3, 7, -1, 1, 18, 12}
local sig = {15, 10, 16, 11, 9, 11, 10, 18}
local function schools(t)
  local mu, tau = t[1], ad.exp(t[2])
  local eta = t:slice(3)
  local th = mu + tau * eta                       -- vector var, broadcast
  return ad.normal_lpdf(ys, th, sig) + ad.normal_lpdf(eta, 0, 1)
       + ad.normal_lpdf(mu, 0, 5) + ad.cauchy_lpdf(tau, 0, 5) + t[2]
end
local th0 = {1.5, 0.3, 0.1, -0.2, 0.5, 0.0, -0.7, 0.3, 0.9, -0.1}
check("schools", schools, th0)
check_hessian("schools", schools, th0)

-- 4. Every density and math function in one model, typed-array theta
local data = mp.array and mp.array("f64", {0.5, 1.5, 2.5}) or {0.5, 1.5, 2.5}
local function zoo(t)
  local a, b, c = t[1], t[2], t[3]
  local s = ad.student_t_lpdf(data, ad.exp(a) + 1, b, ad.exp(c))
    + ad.gamma_lpdf(data, ad.exp(a), ad.exp(c)) + ad.lognormal_lpdf(data, b, ad.exp(c))
    + ad.exponential_lpdf(data, ad.exp(a)) + ad.poisson_log_lpmf({0, 3, 1}, b)
    + ad.binomial_logit_lpmf({2, 0, 5}, {5, 4, 5}, a)
    + ad.lgamma(ad.exp(a) + 1) + ad.digamma(ad.exp(b) + 0.5) + ad.atan(a) + ad.tanh(b)
    + ad.sin(c) * ad.cos(a) + ad.tan(0.3 * b) + ad.sqrt(ad.exp(c)) + ad.log1p(ad.exp(a))
    + ad.expm1(0.1 * c) + ad.inv_logit(a) + ad.log_inv_logit(b) + ad.abs(c - 5)
    + ad.fmin(a, b) + ad.fmax(a, 0.5) + ad.log_sum_exp(a, b) + ad.log_sum_exp({a, b, c})
    + ad.pow(ad.exp(a), b) + ad.sum(ad.exp(t)) + ad.dot(t, {1, 2, 3}) + (-a) / (1 + b * b)
  return s
end
local tz = mp.array and mp.array("f64", {0.2, -0.3, 0.4}) or {0.2, -0.3, 0.4}
check("zoo", zoo, tz)
local vz, gz = ad.grad(zoo, tz)
if mp.array then assert(getmetatable(gz) == getmetatable(tz), "typed theta gives a typed gradient") end
check_hessian("zoo", zoo, {0.2, -0.3, 0.4})

-- 5. Jacobian, jvp, vjp, hvp agree with each other
local function F(t) return {t[1] * t[2], ad.exp(t[1]) + t[3], ad.sin(t[2] * t[3]), 4} end
local x0 = {0.3, 1.2, -0.7}
local vals, J = ad.jacobian(F, x0)
assert(#vals == 4 and #J == 4 and #J[1] == 3, "jacobian shape")
assert(close(J[1][1], 1.2, 1e-15) and close(J[2][1], math.exp(0.3), 1e-15) and J[4][2] == 0)
local dir = {1, -2, 0.5}
local _, jv = ad.jvp(F, x0, dir)
local u = {1, 2, 3, 4}
local _, uj = ad.vjp(F, x0, u)
for i = 1, 4 do
  local s = 0
  for j = 1, 3 do s = s + J[i][j] * dir[j] end
  assert(close(jv[i], s, 1e-14), "jvp")
end
for j = 1, 3 do
  local s = 0
  for i = 1, 4 do s = s + u[i] * J[i][j] end
  assert(close(uj[j], s, 1e-14), "vjp")
end
local _, _, Hs = ad.hessian(schools, th0)
local hv_dir = {}
for i = 1, #th0 do hv_dir[i] = (i % 3) - 1 end
local _, _, hv = ad.hvp(schools, th0, hv_dir)
for i = 1, #th0 do
  local s = 0
  for j = 1, #th0 do s = s + Hs[i][j] * hv_dir[j] end
  assert(close(hv[i], s, 1e-12), "hvp")
end

-- 6. Memory is recovered: tape sizes are back where they were
local nv0, ne0 = ad.tape_size()
for _ = 1, 50 do ad.grad(schools, th0) end
local nv1, ne1, _, depth = ad.tape_size()
assert(nv1 == nv0 and ne1 == ne0 and depth == 0, "regions release their memory")
print("ad_models: ok")
