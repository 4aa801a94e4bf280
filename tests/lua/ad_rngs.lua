-- ranks: nompi
-- SPDX-License-Identifier: MIT
-- ad's _rng functions: for each distribution 20000 draws at a fixed seed
-- have its mean and variance (within 5 standard errors) and, where it has
-- a cdf, pass a Kolmogorov-Smirnov test against it (D below the 0.001
-- level, 1.95 / sqrt(n)); the multivariate ones their means and
-- covariances; the same seed gives the same draws; vector arguments
-- broadcast; bad arguments are errors naming them.

local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local fmt, sqrt, exp, log, pi = string.format, math.sqrt, math.exp, math.log, math.pi
local N = 20000
local G = function(x) return exp(ad.lgamma(x)) end
local EULER = 0.57721566490153286

local function moments(x)
  local n, s = #x, 0
  for i = 1, n do s = s + x[i] end
  local m, v = s / n, 0
  for i = 1, n do v = v + (x[i] - m) ^ 2 end
  v = v / (n - 1)
  local k4 = 0 -- for the variance's standard error
  for i = 1, n do k4 = k4 + (x[i] - m) ^ 4 end
  return m, v, k4 / n
end

local function draws(f, ...)
  local x = {}
  for i = 1, N do x[i] = f(...) end
  return x
end

-- name, args, mean, variance, lcdf args (the cdf's parameters) or nil
local CASES = {
  {"normal", {0.5, 2}, 0.5, 4, true}, {"std_normal", {}, 0, 1, true},
  {"student_t", {5, 1, 2}, 1, 4 * 5 / 3, true}, {"cauchy", {1, 2}, nil, nil, true},
  {"double_exponential", {1, 2}, 1, 8, true}, {"logistic", {1, 2}, 1, 4 * pi * pi / 3, true},
  {"gumbel", {1, 2}, 1 + 2 * EULER, 4 * pi * pi / 6, true},
  {"skew_normal", {1, 2, 3}, 1 + 2 * (3 / sqrt(10)) * sqrt(2 / pi), 4 * (1 - 2 * 0.9 / pi), false},
  {"lognormal", {0.2, 0.5}, exp(0.2 + 0.125), (exp(0.25) - 1) * exp(0.4 + 0.25), true},
  {"gamma", {2.5, 1.5}, 2.5 / 1.5, 2.5 / 2.25, true}, {"gamma", {0.3, 2}, 0.15, 0.075, true},
  {"inv_gamma", {4.5, 2}, 2 / 3.5, 4 / (3.5 ^ 2 * 2.5), true},
  {"exponential", {1.5}, 1 / 1.5, 1 / 2.25, true},
  {"weibull", {2.5, 1.5}, 1.5 * G(1.4), 2.25 * (G(1.8) - G(1.4) ^ 2), true},
  {"frechet", {4.5, 1.5}, 1.5 * G(1 - 1 / 4.5), 2.25 * (G(1 - 2 / 4.5) - G(1 - 1 / 4.5) ^ 2), true},
  {"pareto", {1.5, 4.5}, 4.5 * 1.5 / 3.5, 2.25 * 4.5 / (3.5 ^ 2 * 2.5), true},
  {"chi_square", {4}, 4, 8, true}, {"inv_chi_square", {6}, 1 / 4, 2 / (16 * 2), true},
  {"beta", {2.5, 1.5}, 2.5 / 4, 2.5 * 1.5 / (16 * 5), true}, {"beta", {0.2, 0.3}, 0.4, 0.06 / (0.25 * 1.5), true},
  {"beta_proportion", {0.3, 5}, 0.3, 0.21 / 6, true}, {"uniform", {-1, 3}, 1, 16 / 12, true},
  {"poisson", {3.5}, 3.5, 3.5}, {"poisson", {40}, 40, 40}, {"poisson_log", {log(3.5)}, 3.5, 3.5},
  {"binomial", {30, 0.3}, 9, 6.3}, {"binomial", {1000, 0.3}, 300, 210},
  {"binomial_logit", {30, 0}, 15, 7.5}, {"bernoulli", {0.3}, 0.3, 0.21},
  {"bernoulli_logit", {0}, 0.5, 0.25}, {"neg_binomial", {2.5, 0.5}, 5, 2.5 / 0.25 * 1.5},
  {"neg_binomial_2", {3, 2}, 3, 3 + 4.5}, {"neg_binomial_2_log", {log(3), 2}, 3, 7.5},
  {"beta_binomial", {20, 2, 3}, 8, 20 * 6 * 25 / (25 * 6)},
}
ad.rng_seed(2024, 30)
local n_checked = 0
for _, c in ipairs(CASES) do
  local name, args, mean, var, ks = c[1], c[2], c[3], c[4], c[5]
  local f = ad[name .. "_rng"]
  local x = draws(f, table.unpack(args))
  local m, v, m4 = moments(x)
  if mean then
    local se = sqrt(var / N)
    assert(math.abs(m - mean) < 5 * se, fmt("%s_rng(%s): mean %g, expected %g (se %g)", name, table.concat(args, ", "), m, mean, se))
    local sev = sqrt((m4 - var * var) / N)
    assert(math.abs(v - var) < math.max(5 * sev, 1e-3 * var), fmt("%s_rng(%s): variance %g, expected %g (se %g)", name, table.concat(args, ", "), v, var, sev))
  end
  if math.type(x[1]) == "integer" then assert(name:find("binomial") or name:find("poisson") or name:find("bernoulli")) end
  if ks then
    table.sort(x)
    local F = ad.each[name .. "_lcdf"](x, table.unpack(args))
    local D = 0
    for i = 1, N do
      local Fi = exp(type(F) == "number" and F or F[i])
      D = math.max(D, math.abs(Fi - (i - 1) / N), math.abs(Fi - i / N))
    end
    assert(D < 1.95 / sqrt(N), fmt("%s_rng(%s): Kolmogorov-Smirnov D = %g", name, table.concat(args, ", "), D))
  end
  n_checked = n_checked + 1
end
-- von_mises: the mean resultant length is I1(k)/I0(k), centred on mu
local vm = draws(ad.von_mises_rng, 1, 2)
local cs, sn = 0, 0
for i = 1, N do cs = cs + math.cos(vm[i] - 1); sn = sn + math.sin(vm[i] - 1) end
local R = 0.697774657964008 -- I1(2)/I0(2)
assert(math.abs(cs / N - R) < 0.02 and math.abs(sn / N) < 0.02, fmt("von_mises_rng: %g %g", cs / N, sn / N))
for i = 1, 100 do assert(math.abs(vm[i] - 1) <= pi + 1e-12) end

-- multivariate
local function mean_of(f, n, k)
  local s = {}
  for j = 1, k do s[j] = 0 end
  for _ = 1, n do local d = f(); for j = 1, k do s[j] = s[j] + d[j] / n end end
  return s
end
local dm = mean_of(function() return ad.dirichlet_rng({1, 2, 3}) end, 5000, 3)
for j = 1, 3 do assert(math.abs(dm[j] - j / 6) < 0.01, "dirichlet_rng mean") end
local mm = mean_of(function() return ad.multinomial_rng({0.2, 0.3, 0.5}, 10) end, 5000, 3)
assert(math.abs(mm[1] - 2) < 0.1 and math.abs(mm[3] - 5) < 0.1, "multinomial_rng mean")
local counts = {0, 0, 0}
for _ = 1, 10000 do local k = ad.categorical_rng({0.2, 0.3, 0.5}); counts[k] = counts[k] + 1 end
assert(math.abs(counts[1] / 10000 - 0.2) < 0.02 and math.abs(counts[3] / 10000 - 0.5) < 0.02, "categorical_rng")
counts = {0, 0, 0}
for _ = 1, 10000 do local k = ad.categorical_logit_rng({0, log(1.5), log(2.5)}); counts[k] = counts[k] + 1 end
assert(math.abs(counts[1] / 10000 - 0.2) < 0.02, "categorical_logit_rng")
counts = {0, 0, 0}
for _ = 1, 10000 do local k = ad.ordered_logistic_rng(0.5, {-1, 1}); counts[k] = counts[k] + 1 end
local p1 = 1 / (1 + exp(0.5 + 1))
assert(math.abs(counts[1] / 10000 - p1) < 0.02, "ordered_logistic_rng")
-- multi_normal: mean and covariance
local S = {{2, 0.6}, {0.6, 1}}
local sx, sy, sxy, n = 0, 0, 0, 20000
local xs = {}
for i = 1, n do xs[i] = ad.multi_normal_rng({1, -1}, S); sx = sx + xs[i][1]; sy = sy + xs[i][2] end
sx, sy = sx / n, sy / n
for i = 1, n do sxy = sxy + (xs[i][1] - sx) * (xs[i][2] - sy) end
assert(math.abs(sx - 1) < 0.05 and math.abs(sy + 1) < 0.05 and math.abs(sxy / n - 0.6) < 0.05, "multi_normal_rng")
local t5 = mean_of(function() return ad.multi_student_t_rng(5, {1, 2}, S) end, 5000, 2)
assert(math.abs(t5[1] - 1) < 0.1 and math.abs(t5[2] - 2) < 0.1, "multi_student_t_rng mean")
-- lkj: unit diagonal, off-diagonal variance 1 / (2 eta + K - 1)
local ss = 0
for _ = 1, 4000 do
  local L = ad.value(ad.lkj_corr_rng(3, 2))
  assert(C.close(L[1][1], 1, 1e-12) and C.close(L[3][3], 1, 1e-12))
  ss = ss + L[2][1] ^ 2
end
assert(math.abs(ss / 4000 - 1 / 6) < 0.02, "lkj_corr_rng: var " .. ss / 4000)
local Lc = ad.value(ad.lkj_corr_cholesky_rng(4, 1))
for i = 1, 4 do
  local r = 0
  for j = 1, 4 do r = r + Lc[i][j] ^ 2 end
  assert(C.close(r, 1, 1e-12) and Lc[1][2] == 0, "lkj_corr_cholesky_rng rows")
end
-- wishart: mean nu S; inv_wishart: mean S / (nu - p - 1)
local wm, iw = {0, 0, 0}, {0, 0, 0}
for _ = 1, 4000 do
  local W = ad.value(ad.wishart_rng(6, S))
  local V = ad.value(ad.inv_wishart_rng(8, S))
  wm[1], wm[2], wm[3] = wm[1] + W[1][1] / 4000, wm[2] + W[2][1] / 4000, wm[3] + W[2][2] / 4000
  iw[1], iw[2] = iw[1] + V[1][1] / 4000, iw[2] + V[2][1] / 4000
end
assert(math.abs(wm[1] - 12) < 0.4 and math.abs(wm[2] - 3.6) < 0.3 and math.abs(wm[3] - 6) < 0.25, "wishart_rng mean")
assert(math.abs(iw[1] - 2 / 5) < 0.03 and math.abs(iw[2] - 0.6 / 5) < 0.02, "inv_wishart_rng mean")

-- reproducible by seed, broadcasting, errors
ad.rng_seed(7, 1, 2)
local a = {ad.normal_rng(0, 1), ad.poisson_rng(4), ad.dirichlet_rng({1, 1})[1]}
ad.rng_seed(7, 1, 2)
local b = {ad.normal_rng(0, 1), ad.poisson_rng(4), ad.dirichlet_rng({1, 1})[1]}
ad.rng_seed(7, 1, 3)
local c = ad.normal_rng(0, 1)
assert(a[1] == b[1] and a[2] == b[2] and a[3] == b[3] and c ~= a[1], "ad.rng_seed")
local v = ad.normal_rng({0, 100, 200}, {1, 1, 1})
assert(#v == 3 and v[3] > 190 and math.type(ad.poisson_rng(2)) == "integer" and #ad.poisson_rng({1, 2}) == 2)
C.fails("bad argument #2 to 'ad.normal_rng' (must be positive and finite, got -1.0)", ad.normal_rng, 0, -1)
C.fails("bad argument #1 to 'ad.binomial_rng' (must be a non-negative integer, got 2.5)", ad.binomial_rng, 2.5, 0.5)
C.fails("bad argument #2 to 'ad.normal_rng' (element 2 must be positive and finite", ad.normal_rng, 0, {1, 0})
C.fails("bad argument #2 to 'ad.normal_rng' (length 3 does not match 2)", ad.normal_rng, {1, 2}, {1, 2, 3})
C.fails("ad.dirichlet_rng: alpha must be positive and finite", ad.dirichlet_rng, {1, -1})
C.fails("bad argument #2 to 'ad.multi_normal_rng' (not positive definite)", ad.multi_normal_rng, {0, 0}, {{1, 2}, {2, 1}})
C.fails("ad.wishart_rng: nu must be greater than K - 1", ad.wishart_rng, 0.5, S)
print(fmt("ad_rngs: ok (%d univariate cases)", n_checked))
