-- ranks: nompi
-- SPDX-License-Identifier: MIT
-- Stan's univariate distributions in ad, table-driven: each log density
-- against its closed form (Stan's functions reference) at several points;
-- each cdf against its closed form, or against the integral (sum) of the
-- density when it has none (adaptive Simpson); every density's mass over an
-- interval equal to its cdf's difference; summed and per-element forms;
-- counts checked; constant arguments give numbers. Gradients and Hessians:
-- tests/unit/test_ad_dist.c (finite differences).

local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local fmt, log, exp, abs, sqrt, pi = string.format, math.log, math.exp, math.abs, math.sqrt, math.pi
local huge = math.huge
local lg = ad.lgamma -- the C library's lgamma
local LOG_2PI = log(2 * pi)

-- adaptive Simpson on [a, b] to relative tolerance tol
local function integrate(f, a, b, tol)
  tol = tol or 1e-12
  local function simpson(fa, fm, fb, a1, b1) return (b1 - a1) / 6 * (fa + 4 * fm + fb) end
  local function rec(a1, b1, fa, fm, fb, whole, depth)
    local m = 0.5 * (a1 + b1)
    local lm, rm = 0.5 * (a1 + m), 0.5 * (m + b1)
    local flm, frm = f(lm), f(rm)
    local left, right = simpson(fa, flm, fm, a1, m), simpson(fm, frm, fb, m, b1)
    if depth > 40 or depth > 4 and abs(left + right - whole) <= 15 * tol * abs(left + right) + 1e-300 then
      return left + right + (left + right - whole) / 15
    end
    return rec(a1, m, fa, flm, fm, left, depth + 1) + rec(m, b1, fm, frm, fb, right, depth + 1)
  end
  local total, n = 0, 16
  for i = 0, n - 1 do -- panels first: one coarse estimate can fool the error test
    local a1, b1 = a + (b - a) * i / n, a + (b - a) * (i + 1) / n
    local fa, fb, fm = f(a1), f(b1), f(0.5 * (a1 + b1))
    total = total + rec(a1, b1, fa, fm, fb, simpson(fa, fm, fb, a1, b1), 0)
  end
  return total
end

local function npdf(z) return exp(-0.5 * z * z - 0.5 * LOG_2PI) end
local function Phi(z) -- by integration from 0 (odd symmetry)
  local s = integrate(npdf, 0, abs(z), 1e-14)
  return z >= 0 and 0.5 + s or 0.5 - s
end
local function lchoose(n, k) return lg(n + 1) - lg(k + 1) - lg(n - k + 1) end
local function lbeta(a, b) return lg(a) + lg(b) - lg(a + b) end
local function I0(x) -- series
  local s, t = 1, 1
  for k = 1, 400 do t = t * (x * x / 4) / (k * k); s = s + t; if t < 1e-17 * s then break end end
  return s
end

-- closed forms of the log densities (Stan's functions reference)
local LPDF = {
  normal = function(y, m, s) return -0.5 * ((y - m) / s) ^ 2 - log(s) - 0.5 * LOG_2PI end,
  std_normal = function(y) return -0.5 * y * y - 0.5 * LOG_2PI end,
  student_t = function(y, nu, m, s)
    return lg((nu + 1) / 2) - lg(nu / 2) - 0.5 * log(nu * pi) - log(s) - (nu + 1) / 2 * log(1 + ((y - m) / s) ^ 2 / nu)
  end,
  cauchy = function(y, m, s) return -log(pi * s * (1 + ((y - m) / s) ^ 2)) end,
  double_exponential = function(y, m, s) return -log(2 * s) - abs(y - m) / s end,
  logistic = function(y, m, s) local z = (y - m) / s; return -z - log(s) - 2 * log(1 + exp(-z)) end,
  gumbel = function(y, m, b) local z = (y - m) / b; return -log(b) - z - exp(-z) end,
  skew_normal = function(y, xi, om, al)
    local z = (y - xi) / om
    return log(2 / om) - 0.5 * z * z - 0.5 * LOG_2PI + log(Phi(al * z))
  end,
  lognormal = function(y, m, s) return -log(y) - log(s) - 0.5 * LOG_2PI - 0.5 * ((log(y) - m) / s) ^ 2 end,
  gamma = function(y, a, b) return a * log(b) - lg(a) + (a - 1) * log(y) - b * y end,
  inv_gamma = function(y, a, b) return a * log(b) - lg(a) - (a + 1) * log(y) - b / y end,
  exponential = function(y, b) return log(b) - b * y end,
  weibull = function(y, a, s) return log(a / s) + (a - 1) * log(y / s) - (y / s) ^ a end,
  frechet = function(y, a, s) return log(a / s) - (1 + a) * log(y / s) - (y / s) ^ -a end,
  pareto = function(y, ym, a) return y < ym and -huge or log(a) + a * log(ym) - (a + 1) * log(y) end,
  chi_square = function(y, nu) return -(nu / 2) * log(2) - lg(nu / 2) + (nu / 2 - 1) * log(y) - y / 2 end,
  inv_chi_square = function(y, nu) return -(nu / 2) * log(2) - lg(nu / 2) - (nu / 2 + 1) * log(y) - 1 / (2 * y) end,
  beta = function(y, a, b) return (a - 1) * log(y) + (b - 1) * log(1 - y) - lbeta(a, b) end,
  beta_proportion = function(y, m, k) return (m * k - 1) * log(y) + ((1 - m) * k - 1) * log(1 - y) - lbeta(m * k, (1 - m) * k) end,
  uniform = function(y, a, b) return (y < a or y > b) and -huge or -log(b - a) end,
  von_mises = function(y, m, k) return k * math.cos(y - m) - log(2 * pi * I0(k)) end,
  poisson = function(n, l) return n * log(l) - l - lg(n + 1) end,
  poisson_log = function(n, a) return n * a - exp(a) - lg(n + 1) end,
  binomial = function(n, N, t) return lchoose(N, n) + n * log(t) + (N - n) * log(1 - t) end,
  binomial_logit = function(n, N, a) local t = 1 / (1 + exp(-a)); return lchoose(N, n) + n * log(t) + (N - n) * log(1 - t) end,
  bernoulli = function(n, t) return n == 1 and log(t) or log(1 - t) end,
  bernoulli_logit = function(n, a) local t = 1 / (1 + exp(-a)); return n == 1 and log(t) or log(1 - t) end,
  neg_binomial = function(n, a, b)
    return lchoose(n + a - 1, n) + a * log(b / (1 + b)) - n * log(1 + b)
  end,
  neg_binomial_2 = function(n, m, p)
    return lchoose(n + p - 1, n) + n * log(m / (m + p)) + p * log(p / (m + p))
  end,
  neg_binomial_2_log = function(n, e, p)
    local m = exp(e)
    return lchoose(n + p - 1, n) + n * log(m / (m + p)) + p * log(p / (m + p))
  end,
  beta_binomial = function(n, N, a, b) return lchoose(N, n) + lbeta(n + a, N - n + b) - lbeta(a, b) end,
}
local POINTS = {
  normal = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}, {5, 5, 3}},
  std_normal = {{0.3}, {-2}, {7}},
  student_t = {{0.3, 3.5, -0.2, 1.7}, {4, 1.2, 1, 0.6}, {-30, 50, 0, 2}},
  cauchy = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}, {100, 0, 1}},
  double_exponential = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}, {1, 1, 2}},
  logistic = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}, {30, 0, 1}},
  gumbel = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}, {5, 0, 1}},
  skew_normal = {{0.3, -0.2, 1.7, 2.5}, {-2, 1, 0.4, -1.3}, {1, 0, 1, 0}},
  lognormal = {{0.3, -0.2, 1.7}, {2, 1, 0.4}, {10, 0, 1}},
  gamma = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}, {50, 30, 0.5}},
  inv_gamma = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}, {0.01, 3, 0.1}},
  exponential = {{0.3, 2.5}, {2, 0.7}, {0, 1}},
  weibull = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}, {3, 1, 2}},
  frechet = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}, {3, 1, 2}},
  pareto = {{2.3, 1.5, 1.7}, {5, 0.7, 0.4}, {1, 2, 1}},
  chi_square = {{0.3, 2.5}, {4, 7}, {30, 2}},
  inv_chi_square = {{0.3, 2.5}, {2, 0.7}, {0.1, 10}},
  beta = {{0.3, 2.5, 1.7}, {0.8, 0.7, 0.4}, {0.5, 1, 1}},
  beta_proportion = {{0.3, 0.4, 5}, {0.8, 0.7, 2.5}, {0.01, 0.5, 100}},
  uniform = {{0.3, -0.2, 1.7}, {2, 1, 4.5}, {5, 1, 4.5}},
  von_mises = {{0.3, -0.2, 1.7}, {-2, 1, 40}, {3, -3, 0.01}},
  poisson = {{3, 2.5}, {0, 0.7}, {100, 90}},
  poisson_log = {{3, 0.5}, {0, -1.5}, {20, 3}},
  binomial = {{3, 10, 0.35}, {0, 4, 0.8}, {50, 50, 0.99}},
  binomial_logit = {{3, 10, 0.5}, {0, 4, -1.5}, {7, 8, 3}},
  bernoulli = {{1, 0.3}, {0, 0.7}},
  bernoulli_logit = {{1, 0.5}, {0, -1.5}},
  neg_binomial = {{3, 2.5, 0.7}, {0, 0.7, 1.5}, {40, 10, 0.3}},
  neg_binomial_2 = {{3, 2.5, 1.7}, {0, 0.7, 0.4}, {40, 30, 10}},
  neg_binomial_2_log = {{3, 0.5, 2.5}, {0, -1.5, 0.7}, {40, 3.4, 10}},
  beta_binomial = {{3, 10, 2.5, 1.7}, {0, 4, 0.7, 0.4}, {20, 20, 3, 0.5}},
}
local nlpdf = 0
for name, f in pairs(LPDF) do
  local fname = (name:find("binomial") or name:find("poisson") or name:find("bernoulli")) and name .. "_lpmf" or name .. "_lpdf"
  assert(ad[fname], fname .. " missing")
  for _, p in ipairs(assert(POINTS[name], name .. " has no points")) do
    local got, want = ad[fname](table.unpack(p)), f(table.unpack(p))
    assert(got == want or C.close(got, want, 1e-12),
           fmt("%s(%s) = %.17g, closed form %.17g", fname, table.concat(p, ", "), got, want))
  end
  nlpdf = nlpdf + 1
end

-- closed forms of the cdfs where they are elementary
local CDF = {
  cauchy = function(y, m, s) return 0.5 + math.atan((y - m) / s) / pi end,
  double_exponential = function(y, m, s) return y < m and 0.5 * exp((y - m) / s) or 1 - 0.5 * exp(-(y - m) / s) end,
  logistic = function(y, m, s) return 1 / (1 + exp(-(y - m) / s)) end,
  gumbel = function(y, m, b) return exp(-exp(-(y - m) / b)) end,
  exponential = function(y, b) return 1 - exp(-b * y) end,
  weibull = function(y, a, s) return 1 - exp(-(y / s) ^ a) end,
  frechet = function(y, a, s) return exp(-(y / s) ^ -a) end,
  pareto = function(y, ym, a) return y < ym and 0 or 1 - (ym / y) ^ a end,
  uniform = function(y, a, b) return y < a and 0 or y > b and 1 or (y - a) / (b - a) end,
  bernoulli = function(n, t) return n >= 1 and 1 or 1 - t end,
}
-- the rest by integrating (summing) the density: lower end of the support
local LOWER = {normal = -huge, std_normal = -huge, student_t = -huge, lognormal = 0, gamma = 0,
               inv_gamma = 0, chi_square = 0, inv_chi_square = 0, beta = 0, beta_proportion = 0}
local DISCRETE = {poisson = true, binomial = true, neg_binomial = true, neg_binomial_2 = true, beta_binomial = true}
local function cdf_ref(name, p)
  if CDF[name] then return CDF[name](table.unpack(p)) end
  local rest = {table.unpack(p, 2)}
  if DISCRETE[name] then
    local s = 0
    for k = 0, p[1] do s = s + exp(LPDF[name](k, table.unpack(rest))) end
    return s
  end
  local dens = function(y) local v = exp(LPDF[name](y, table.unpack(rest))); return v == v and v or 0 end
  local lo = LOWER[name]
  if lo == -huge then -- the real line: from far in the left tail
    local centre, scale = name == "student_t" and p[3] or name == "normal" and p[2] or 0,
                          name == "student_t" and p[4] or name == "normal" and p[3] or 1
    if name == "student_t" then -- heavy tail: 1 - the integral to +inf by symmetry
      local upper = integrate(dens, math.max(p[1], centre), centre + 1e4 * scale, 1e-13)
      local tail = integrate(function(u) return dens(centre + 1 / u) / (u * u) end, 1e-12, 1 / (1e4 * scale))
      local right = upper + tail
      if p[1] >= centre then return 1 - right end
      return right - integrate(dens, p[1], centre, 1e-13) + 0 -- mass in [y, centre] plus the right half's complement
    end
    return integrate(dens, centre - 40 * scale, p[1], 1e-13)
  end
  return integrate(dens, lo, p[1], 1e-13)
end
local CDF_POINTS = {
  normal = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}}, std_normal = {{0.3}, {-2}, {1.5}},
  student_t = {{0.3, 3.5, -0.2, 1.7}, {1.5, 5, 0, 1}},
  cauchy = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}, {40, 0, 1}},
  double_exponential = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}}, logistic = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  gumbel = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}}, lognormal = {{0.3, -0.2, 1.7}, {2, 1, 0.4}},
  exponential = {{0.3, 2.5}, {2, 0.7}}, weibull = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}},
  frechet = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}}, pareto = {{2.3, 1.5, 1.7}, {5, 0.7, 0.4}},
  uniform = {{0.3, -0.2, 1.7}, {2, 1, 4.5}},
  gamma = {{0.3, 2.5, 1.7}, {9, 1.7, 0.4}, {3, 6, 2}}, inv_gamma = {{0.3, 2.5, 1.7}, {2, 1.7, 0.4}},
  chi_square = {{0.3, 2.5}, {9, 3}}, inv_chi_square = {{0.3, 2.5}, {0.2, 2.5}},
  beta = {{0.3, 2.5, 1.7}, {0.8, 1.7, 1.4}}, beta_proportion = {{0.3, 0.4, 5}, {0.8, 0.7, 2.5}},
  poisson = {{3, 2.5}, {2, 9}, {0, 0.3}}, binomial = {{3, 10, 0.35}, {1, 4, 0.8}},
  bernoulli = {{0, 0.3}, {1, 0.8}}, neg_binomial = {{3, 2.5, 0.7}, {0, 0.7, 1.5}},
  neg_binomial_2 = {{3, 2.5, 1.7}, {6, 0.7, 0.4}}, beta_binomial = {{3, 10, 2.5, 1.7}, {1, 4, 0.7, 0.4}},
}
local ncdf = 0
for name, pts in pairs(CDF_POINTS) do
  for _, p in ipairs(pts) do
    local F = cdf_ref(name, p)
    local lc, lcc = ad[name .. "_lcdf"](table.unpack(p)), ad[name .. "_lccdf"](table.unpack(p))
    local tol = CDF[name] and 1e-13 or 1e-10
    assert(C.close(exp(lc), F, tol), fmt("%s_lcdf(%s): exp = %.15g, reference %.15g", name, table.concat(p, ", "), exp(lc), F))
    assert(C.close(exp(lcc), 1 - F, tol), fmt("%s_lccdf(%s): exp = %.15g, reference %.15g", name, table.concat(p, ", "), exp(lcc), 1 - F))
  end
  ncdf = ncdf + 2
end
-- tails: the log cdfs stay finite and accurate where the cdf rounds to 0 or 1
assert(C.close(ad.std_normal_lcdf(-40), ad.normal_lcdf(-40, 0, 1), 1e-15))
assert(C.close(ad.logistic_lccdf(40, 0, 1), -40 - log(1 + exp(-40)), 1e-15))
assert(C.close(ad.exponential_lccdf(1000, 2), -2000, 1e-15) and ad.gumbel_lcdf(-5, 0, 1) == -exp(5))
assert(ad.gamma_lccdf(200, 2, 1) < -190 and ad.gamma_lccdf(200, 2, 1) > -200, "gamma_lccdf far tail")
assert(C.close(ad.poisson_lccdf(0, 1e-8), log(1 - exp(-1e-8)), 1e-7))

-- every continuous density's mass over an interval is its cdf's difference
local MASS = {
  normal = {-0.2, 1.7, -1, 2}, std_normal = {nil, nil, -1, 0.5}, student_t = {3.5, -0.2, 1.7, -1, 2},
  cauchy = {-0.2, 1.7, -1, 2}, double_exponential = {-0.2, 1.7, -1, 2}, logistic = {-0.2, 1.7, -1, 2},
  gumbel = {-0.2, 1.7, -1, 2}, lognormal = {-0.2, 1.7, 0.5, 2}, gamma = {2.5, 1.7, 0.5, 2},
  inv_gamma = {2.5, 1.7, 0.5, 2}, exponential = {2.5, 0.1, 1}, weibull = {2.5, 1.7, 0.5, 2},
  frechet = {2.5, 1.7, 0.5, 2}, pareto = {1.5, 1.7, 2, 5}, chi_square = {2.5, 0.5, 2},
  inv_chi_square = {2.5, 0.5, 2}, beta = {2.5, 1.7, 0.2, 0.7}, beta_proportion = {0.4, 5, 0.2, 0.7},
  uniform = {-0.2, 1.7, 0, 1},
}
for name, m in pairs(MASS) do
  local n = #m
  local par = {table.unpack(m, 1, name == "std_normal" and 0 or n - 2)}
  local a, b = m[n - 1], m[n]
  if name == "std_normal" then a, b = m[3], m[4] end
  local lp = ad[name .. "_lpdf"]
  local mass = integrate(function(y) return exp(lp(y, table.unpack(par))) end, a, b, 1e-13)
  local lc = ad[name .. "_lcdf"]
  local diff = exp(lc(b, table.unpack(par))) - exp(lc(a, table.unpack(par)))
  assert(C.close(mass, diff, 1e-10), fmt("%s: mass on [%g, %g] %.15g, cdf difference %.15g", name, a, b, mass, diff))
end
-- every mass function sums to 1
for name, p in pairs{poisson = {3.5}, binomial = {12, 0.3}, neg_binomial = {2.5, 0.7}, neg_binomial_2 = {3, 2},
                     beta_binomial = {12, 2.5, 1.7}, bernoulli = {0.3}} do
  local s, top = 0, (name == "binomial" or name == "beta_binomial") and p[1] or name == "bernoulli" and 1 or 400
  for k = 0, top do s = s + exp(ad[name .. "_lpmf"](k, table.unpack(p))) end
  assert(C.close(s, 1, 1e-12), name .. " sums to " .. s)
end

-- vectorised: the summed form is the sum of ad.each's
local ys = {0.3, 1.2, 2.5, 0.8}
for _, name in ipairs{"gamma_lpdf", "weibull_lpdf", "gumbel_lcdf", "beta_lccdf", "skew_normal_lpdf"} do
  local a = name:find("beta") and {0.3, 0.2, 0.5, 0.8} or ys
  local extra = name:find("skew") and {0.5, 1.3, 2} or {1.5, 0.7}
  local s, each = ad[name](a, table.unpack(extra)), ad.each[name](a, table.unpack(extra))
  local t = 0
  for i = 1, 4 do t = t + each[i] end
  assert(C.close(s, t, 1e-14) and #each == 4, name .. " summed vs each")
end
assert(C.close(ad.inc_beta(2.5, 1.7, 0.3), exp(ad.beta_lcdf(0.3, 2.5, 1.7)), 1e-14))
assert(#ad.inc_beta({1, 2}, 1, 0.5) == 2 and C.close(ad.inc_beta(1, 3, 0.5), 1 - 0.5 ^ 3, 1e-15))
-- counts are checked and named
C.fails("bad argument #1 to 'ad.poisson_lpmf' (element 2 is 1.5, expected a non-negative integer)",
        ad.poisson_lpmf, {1, 1.5}, 2)
C.fails("bad argument #1 to 'ad.bernoulli_lpmf' (element 1 is 2.0, expected 0 or 1)", ad.bernoulli_lpmf, 2, 0.5)
C.fails("bad argument #1 to 'ad.beta_binomial_lpmf' (element 1 is 5.0, expected an integer in 0..N (N = 4.0))",
        ad.beta_binomial_lpmf, 5, 4, 1, 1)
C.fails("counts are data", function() return ad.grad(function(t) return ad.poisson_lcdf(t[1], 2) end, {1}) end)
-- gradients through the Lua API, on a model mixing families
C.grad("families", function(t)
  return ad.skew_normal_lpdf(ys, t[1], ad.exp(t[2]), t[3]) + ad.gamma_lcdf(2, ad.exp(t[2]), 1.5)
    + ad.von_mises_lpdf(ys, t[1], ad.exp(t[3])) + ad.beta_binomial_lpmf({1, 3}, 5, ad.exp(t[2]), ad.exp(t[3]))
    + ad.neg_binomial_2_lccdf(3, ad.exp(t[1]), ad.exp(t[2])) + ad.frechet_lpdf(ys, ad.exp(t[3]), 2)
end, {0.3, 0.5, -0.2})
print(fmt("ad_dists: ok (%d log densities against closed forms, %d cdfs)", nlpdf, ncdf))
