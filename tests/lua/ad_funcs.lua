-- ranks: nompi
-- SPDX-License-Identifier: MIT
-- The functions models need: values against references, gradients by
-- ad.check_grad (order-6 finite differences), Hessians against finite
-- differences of gradients, the per-element (ad.each) forms against the
-- summed ones, and ad.Const results for constant arguments.
--
-- Reference values: mpmath 1.3.0 at 50 significant digits (ncdf, betainc
-- regularized, loggamma, log, exp), computed once and pasted here; the
-- script is in the comment at the end of this file.

local fmt = string.format
local function close(a, b, tol)
  if a == b then return true end
  return math.abs(a - b) <= tol * math.max(math.abs(a), math.abs(b))
end
local function ref(name, got, want, tol)
  assert(close(got, want, tol or 1e-13), fmt("%s: %.17g, reference %.17g (rel err %.2g)", name, got,
         want, math.abs(got - want) / math.max(math.abs(want), 1e-300)))
end

-- ------------------------------------------------------------- values
local R = {
  normal_lcdf = {{0, 0, 1, -0.69314718055994529}, {1.96, 0, 1, -0.025315649164282115},
    {-1, 0, 1, -1.8410216450092636}, {-10, 0, 1, -53.23128515051247},
    {-40, 0, 1, -804.6084420137538}, {-38, 1, 1, -765.08315656437753},
    {5, 0, 1, -2.8665161296376358e-07}, {10, 0, 1, -7.6198530241605255e-24},
    {0.3, -0.2, 1.7, -0.48505067561684678}, {-2.5, 1.0, 0.4, -41.381902152945088}},
  normal_lccdf = {{0, 0, 1, -0.69314718055994529}, {1.96, 0, 1, -3.6889636517296385},
    {-1, 0, 1, -0.17275377902344988}, {10, 0, 1, -53.23128515051247},
    {40, 0, 1, -804.6084420137538}, {-5, 0, 1, -2.8665161296376358e-07},
    {0.3, -0.2, 1.7, -0.9562433042420192}},
  student_t_lccdf = {{0, 3, 0, 1, -0.69314718055994529}, {1, 3, 0, 1, -1.6321892244941225},
    {-1, 3, 0, 1, -0.21753569164062564}, {2.5, 1, 0, 1, -2.1109822278479942},
    {30, 4, 0, 1, -12.513568916063136}, {-30, 4, 0, 1, -3.6764348069088239e-06},
    {0.3, 3.5, -0.2, 1.7, -0.93487626246179589}, {1.2, 50, 0.1, 0.8, -2.434621354652367},
    {-2, 0.7, 0.5, 2, -0.28033911659640054}},
  beta_lpdf = {{0.3, 2, 3, 0.56758395758459956}, {0.01, 0.5, 0.5, 1.1628803750713963},
    {0.9, 5, 1.5, 1.0325558580161132}, {0.5, 1, 1, 0}},
  neg_binomial_2_log_lpmf = {{0, 0.5, 2, -1.2024591777153957}, {3, 0.5, 2, -2.1992951248484345},
    {10, 2.0, 0.5, -3.7702290856318901}, {7, -1.0, 100, -15.712478544369674},
    {2, 1.0, 1e6, -1.411429751054404}},
  log_mix = {{0.3, -1.2, -0.4, -0.58056467393465272}, {0.8, 2.0, -3.0, 1.7785395182789876},
    {0.5, -800, -801, -800.37988549304168}},
  log1m_exp = {{-1e-10, -23.025850929990458}, {-0.5, -0.93275212956718856},
    {-3, -0.051069180942701589}, {-50, -1.9287498479639178e-22}},
  log1m = {{0.3, -0.35667494393873234}, {-2, 1.0986122886681098}, {1e-12, -1.0000000000005e-12}},
  logit = {{0.3, -0.84729786038720367}, {0.999, 6.906754778648553}, {1e-9, -20.72326583594641}},
  log_diff_exp = {{1, 0, 0.54132485461291813}, {0, -30, -9.3576229688406128e-14},
    {2.5, 2.4999, -6.7103903715574056}, {-700, -701, -700.45867514538713}},
}
-- tolerances: the t ccdf goes through a power series of I_x(a, b), the
-- log-ccdf near 0 loses what 1 - I/2 loses; log_diff_exp of close
-- arguments is as good as b - a is
local TOL = {student_t_lccdf = 1e-11, log_diff_exp = 1e-11, neg_binomial_2_log_lpmf = 1e-12}
for name, rows in pairs(R) do
  for _, r in ipairs(rows) do
    local args = {table.unpack(r, 1, #r - 1)}
    ref(fmt("%s(%s)", name, table.concat(args, ", ")), ad[name](table.unpack(args)), r[#r], TOL[name])
  end
end
-- identities: log_sum_exp, inv_logit, and known constants
ref("log_sum_exp", ad.log_sum_exp({1, 2, 3}), 3.4076059644443806)
ref("inv_logit(logit(0.3))", ad.inv_logit(ad.logit(0.3)), 0.3)
assert(ad.log_diff_exp(1, 1) == -math.huge and ad.log_diff_exp(0, 1) ~= ad.log_diff_exp(0, 1))
assert(ad.log_diff_exp(2, -math.huge) == 2)
assert(ad.log1m_exp(0) == -math.huge and ad.normal_lcdf(-math.huge, 0, 1) == -math.huge)
-- closed forms of the summed lpdfs that existed: cauchy, lognormal, gamma, exponential, student_t
ref("cauchy", ad.cauchy_lpdf(1, 0, 1), -math.log(2 * math.pi))
ref("exponential", ad.exponential_lpdf(2, 3), math.log(3) - 6)
ref("gamma", ad.gamma_lpdf(2, 3, 0.5), 3 * math.log(0.5) - math.log(2) + 2 * math.log(2) - 1)
ref("lognormal", ad.lognormal_lpdf(math.exp(1), 1, 2), -math.log(2) - 1 - 0.5 * math.log(2 * math.pi))
ref("student_t nu=1 is cauchy", ad.student_t_lpdf(1.3, 1, 0.2, 0.7), ad.cauchy_lpdf(1.3, 0.2, 0.7))
ref("binomial_logit", ad.binomial_logit_lpmf(2, 4, 0), math.log(6 / 16))

-- ---------------------------------------------- gradients and Hessians
local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local check, check_hessian = C.grad, function(name, f, theta) return C.hessian(name, f, theta, 1e-5) end
-- each function with its non-data arguments taken from theta
local G = {
  {"normal_lcdf", {0.3, -0.2, 1.7}}, {"normal_lcdf", {-9, 0.5, 1.1}}, {"normal_lcdf", {4, -1, 0.8}},
  {"normal_lccdf", {0.3, -0.2, 1.7}}, {"normal_lccdf", {9, 0.5, 1.1}},
  {"student_t_lccdf", {0.3, 3.5, -0.2, 1.7}}, {"student_t_lccdf", {-2, 0.7, 0.5, 2}},
  {"student_t_lccdf", {6, 12, 0.5, 1.3}},
  {"beta_lpdf", {0.3, 2, 3}}, {"beta_lpdf", {0.9, 0.6, 1.5}},
  {"log_mix", {0.3, -1.2, -0.4}}, {"log_mix", {0.8, 2.0, -3.0}},
  {"log_diff_exp", {1, 0}}, {"log_diff_exp", {2.5, 2.3}},
  {"log1m_exp", {-0.5}}, {"log1m_exp", {-4}}, {"log1m", {0.3}}, {"logit", {0.3}},
}
for _, c in ipairs(G) do
  local name, th = c[1], c[2]
  local f = function(t)
    local a = {}
    for i = 1, #th do a[i] = t[i] end
    return ad[name](table.unpack(a))
  end
  check(name, f, th)
  if name ~= "student_t_lccdf" then check_hessian(name, f, th) end
end
-- counts are data: their density's gradient in the other arguments
check("neg_binomial_2_log", function(t) return ad.neg_binomial_2_log_lpmf({0, 3, 10}, t[1], t[2]) end, {0.5, 2})
check_hessian("neg_binomial_2_log", function(t) return ad.neg_binomial_2_log_lpmf({0, 3, 10}, t[1], t[2]) end, {0.5, 2})
check("neg_binomial_2_log, large phi", function(t) return ad.neg_binomial_2_log_lpmf(4, t[1], t[2]) end, {1, 1e4})
-- student_t_lccdf: Hessian in y, mu, sigma when nu is data; refused in nu
check_hessian("student_t_lccdf (nu data)", function(t) return ad.student_t_lccdf(t[1], 3.5, t[2], t[3]) end,
              {0.3, -0.2, 1.7})
local ok, err = pcall(ad.hessian, function(t) return ad.student_t_lccdf(1, t[1], 0, 1) end, {3})
assert(not ok and err:find("no second-order information for this operation", 1, true), err)

-- ------------------------------------------- vectorized and per element
local y, mu, s = {0.3, 1.2, 2.5, 0.8}, {0.1, 0.5, 1.0, -0.3}, {1.1, 0.7, 2.0, 1.3}
local u = {0.3, 0.2, 0.5, 0.9}
local cases = {
  {"normal_lpdf", {y, mu, s}}, {"student_t_lpdf", {y, s, mu, s}}, {"cauchy_lpdf", {y, mu, s}},
  {"lognormal_lpdf", {y, mu, s}}, {"gamma_lpdf", {y, s, s}}, {"exponential_lpdf", {y, s}},
  {"beta_lpdf", {u, s, y}}, {"normal_lcdf", {y, mu, s}}, {"normal_lccdf", {y, mu, s}},
  {"student_t_lccdf", {y, s, mu, s}}, {"poisson_log_lpmf", {{0, 1, 4, 2}, mu}},
  {"bernoulli_logit_lpmf", {{0, 1, 1, 0}, mu}}, {"binomial_logit_lpmf", {{0, 1, 4, 2}, {3, 3, 5, 2}, mu}},
  {"neg_binomial_2_log_lpmf", {{0, 1, 4, 2}, mu, s}},
}
for _, c in ipairs(cases) do
  local name, a = c[1], c[2]
  -- constants: ad.each gives an ad.Const whose sum is the summed form
  local e = ad.each[name](table.unpack(a))
  assert(tostring(e):find("ad.const", 1, true) and #e == 4, name .. ": each of constants")
  local sum = 0
  for i = 1, #e do
    local ai = {}
    for k = 1, #a do ai[k] = a[k][i] end
    ref(name .. " each[" .. i .. "]", e[i], ad[name](table.unpack(ai)), 1e-14)
    sum = sum + e[i]
  end
  ref(name .. " sum of each", sum, ad[name](table.unpack(a)), 1e-13)
  -- vars: d(sum of each)/d mu-like argument equals the summed form's
  local data = name:find("lpmf") and (name == "binomial_logit_lpmf" and 2 or 1) or 0
  local k = data + 1
  local function f_each(t)
    local b = {table.unpack(a)}
    b[k] = t
    return ad.sum(ad.each[name](table.unpack(b)))
  end
  local function f_sum(t)
    local b = {table.unpack(a)}
    b[k] = t
    return ad[name](table.unpack(b))
  end
  local v1, g1 = ad.grad(f_each, a[k])
  local v2, g2 = ad.grad(f_sum, a[k])
  ref(name .. " each vs sum", v1, v2, 1e-13)
  for i = 1, #g1 do ref(name .. " each grad", g1[i], g2[i], 1e-12) end
  check(name .. " each", function(t) return ad.dot({1, -2, 0.5, 3}, (function()
    local b = {table.unpack(a)}
    b[k] = t
    return ad.each[name](table.unpack(b))
  end)()) end, a[k])
  if name ~= "student_t_lccdf" then
    local _, _, H1 = ad.hessian(f_each, a[k])
    local _, _, H2 = ad.hessian(f_sum, a[k])
    for i = 1, #a[k] do
      for j = 1, #a[k] do ref(name .. " each Hessian", H1[i][j], H2[i][j] + 0, 1e-12) end
    end
  end
end
-- a scalar var broadcast over elements
check("each, broadcast var", function(t) return ad.sum(ad.each.normal_lpdf(y, t[1], t[2]) * {1, 2, 3, 4}) end, {0.2, 1.3})
check_hessian("each, broadcast var", function(t) return ad.sum(ad.each.normal_lpdf(y, t[1], t[2]) * {1, 2, 3, 4}) end, {0.2, 1.3})
-- log_mix over rows: a two-component mixture density per row, and the K-component form
local function mix(t)
  local th = ad.inv_logit(t[1])
  return ad.sum(ad.log_mix(th, ad.each.normal_lpdf(y, t[2], 1), ad.each.normal_lpdf(y, t[3], 2)))
end
check("log_mix of each", mix, {0.2, -0.5, 1.5})
check_hessian("log_mix of each", mix, {0.2, -0.5, 1.5})
ref("log_mix K", ad.log_mix({0.2, 0.5, 0.3}, {-1, -2, -0.5}),
    math.log(0.2 * math.exp(-1) + 0.5 * math.exp(-2) + 0.3 * math.exp(-0.5)), 1e-15)
check("log_mix K", function(t) return ad.log_mix(ad.div(t, ad.sum(t)), {-1, -2, -0.5}) end, {0.2, 0.5, 0.3})
assert(type(ad.log_mix(0.3, -1.2, -0.4)) == "number")
assert(#ad.log_mix(0.3, {-1.2, 0}, -0.4) == 2)

print("ad_funcs: ok")

--[[ The reference values were printed by this script (python3, mpmath 1.3.0):
from mpmath import mp, mpf, log, exp, ncdf, betainc, loggamma
mp.dps = 50
normal_lcdf(y, m, s) = log(ncdf((y - m) / s)); normal_lccdf = log(ncdf(-(y - m) / s))
student_t_lccdf(y, nu, m, s): t = (y - m) / s, x = nu / (nu + t^2),
  I = betainc(nu/2, 1/2, 0, x, regularized=True); log(I/2) if t > 0 else log(1 - I/2)
beta_lpdf(y, a, b) = (a-1) log y + (b-1) log(1-y) - loggamma(a) - loggamma(b) + loggamma(a+b)
neg_binomial_2_log_lpmf(n, eta, phi), mu = exp(eta):
  loggamma(n+phi) - loggamma(n+1) - loggamma(phi) + phi log(phi/(mu+phi)) + n log(mu/(mu+phi))
log_mix(th, a, b) = log(th exp(a) + (1-th) exp(b)); log1m_exp(x) = log(1 - exp(x));
log1m(x) = log(1 - x); logit(x) = log(x/(1-x)); log_diff_exp(a, b) = log(exp(a) - exp(b))
each printed with "%.17g" % float(value)
]]
