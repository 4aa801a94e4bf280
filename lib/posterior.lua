-- SPDX-License-Identifier: MIT
-- posterior: convergence diagnostics of several chains, as the R package
-- posterior (1.x) and ArviZ compute them (Vehtari, Gelman, Simpson,
-- Carpenter, Buerkner 2021, "Rank-normalization, folding, and localization:
-- an improved R-hat"), and a summary printed like CmdStan's stansummary.
--
--   local P = require "mplua.posterior"
--   P.rhat(x)      -- x = {chain1, chain2, ...}, each a list of numbers
--   P.ess_bulk(x); P.ess_tail(x); P.ess_mean(x); P.mcse_mean(x)
--
-- rhat: the larger of the rank-normalized split R-hat and that of the folded
-- draws |x - median|; ess_bulk: ESS of the rank-normalized split chains;
-- ess_tail: the smaller ESS of the indicators x <= q05 and x <= q95 (split);
-- ess_mean: ESS of the split chains; mcse_mean = sd / sqrt(ess_mean).
-- Ranks are averaged over ties and normalized with Blom's offset 3/8:
-- z = Phi^-1((r - 3/8) / (S + 1/4)). The ESS uses each chain's biased
-- autocovariance (computed exactly, lag by lag, as far as Geyer's initial
-- positive sequence goes), Geyer's monotone sequence, and the cap
-- S log10(S). A diagnostic of draws that are not all finite, or constant, is
-- nan (R's NA). Quantiles are R's type 7.

local M = {}
local floor, ceil, abs, sqrt, log, huge = math.floor, math.ceil, math.abs, math.sqrt, math.log, math.huge
local NAN = 0 / 0
local HALF_LOG_2PI = 0.91893853320467274178

-- ------------------------------------------------------------ helpers

local function all_values(x)
  local t = {}
  for _, c in ipairs(x) do for i = 1, #c do t[#t + 1] = c[i] end end
  return t
end

local function bad_or_constant(x)
  local lo, hi = huge, -huge
  for _, c in ipairs(x) do
    for i = 1, #c do
      local v = c[i]
      if v ~= v or v == huge or v == -huge then return true end
      if v < lo then lo = v end
      if v > hi then hi = v end
    end
  end
  return abs(hi - lo) < 2.220446049250313e-16
end

-- type 7 quantile of a sorted list
local function quantile_sorted(s, p)
  local n = #s
  local h = (n - 1) * p + 1
  local lo = floor(h)
  if lo >= n then return s[n] end
  return s[lo] + (h - lo) * (s[lo + 1] - s[lo])
end

function M.quantile(values, p)
  local s = {table.unpack(values)}
  table.sort(s)
  return quantile_sorted(s, p)
end

local function mean_var(c) -- mean and variance (n - 1) of a list
  local n, s = #c, 0
  for i = 1, n do s = s + c[i] end
  local m, ss = s / n, 0
  for i = 1, n do ss = ss + (c[i] - m) ^ 2 end
  return m, ss / (n - 1)
end

-- split each chain in halves (the middle draw of an odd length dropped)
local function split(x)
  local out = {}
  for _, c in ipairs(x) do
    local n = #c
    if n < 2 then
      out[#out + 1] = c
    else
      local a, b = {}, {}
      for i = 1, floor(n / 2) do a[#a + 1] = c[i] end
      for i = ceil(n / 2 + 1), n do b[#b + 1] = c[i] end
      out[#out + 1], out[#out + 2] = a, b
    end
  end
  return out
end

-- Phi^-1(p): a rational start (Abramowitz and Stegun 26.2.23), then Newton
-- steps on log Phi (ad.normal_lcdf, accurate in the tails) to full precision
local function qnorm(p)
  if p == 0.5 then return 0 end
  if p > 0.5 then return -qnorm(1 - p) end
  local t = sqrt(-2 * log(p))
  local z = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                  (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t))
  local lp = log(p)
  for _ = 1, 6 do
    local lc = ad.normal_lcdf(z, 0, 1)
    local r = math.exp(-0.5 * z * z - HALF_LOG_2PI - lc) -- phi / Phi
    local step = (lc - lp) / r
    z = z - step
    if abs(step) < 1e-15 * (1 + abs(z)) then break end
  end
  return z
end
M.qnorm = qnorm

-- rank-normalized copy of x (ranks over all chains, ties averaged)
local function z_scale(x)
  local idx, vals = {}, {}
  for ci, c in ipairs(x) do for i = 1, #c do idx[#idx + 1] = {ci, i}; vals[#vals + 1] = c[i] end end
  local S = #vals
  local order = {}
  for k = 1, S do order[k] = k end
  table.sort(order, function(a, b) return vals[a] < vals[b] end)
  local rank = {}
  local k = 1
  while k <= S do
    local j = k
    while j < S and vals[order[j + 1]] == vals[order[k]] do j = j + 1 end
    local r = (k + j) / 2
    for m = k, j do rank[order[m]] = r end
    k = j + 1
  end
  local out, cache = {}, {}
  for ci, c in ipairs(x) do out[ci] = {} end
  for m = 1, S do
    local r = rank[m]
    local z = cache[r]
    if not z then
      z = qnorm((r - 3 / 8) / (S + 1 / 4))
      cache[r] = z
    end
    out[idx[m][1]][idx[m][2]] = z
  end
  return out
end

-- ------------------------------------------------------------- kernels

-- basic R-hat of (already split) chains
local function rhat_basic(x)
  if bad_or_constant(x) then return NAN end
  local n, means, vars = #x[1], {}, {}
  for j, c in ipairs(x) do means[j], vars[j] = mean_var(c) end
  local _, vb = mean_var(means)
  local w = 0
  for j = 1, #x do w = w + vars[j] end
  w = w / #x
  return sqrt((n * vb / w + n - 1) / n)
end

-- ESS of (already split) chains
local function ess_basic(x)
  local m, n = #x, #x[1]
  if n < 3 or bad_or_constant(x) then return NAN end
  local centred, means = {}, {}
  for j, c in ipairs(x) do
    local mu = mean_var(c)
    means[j] = mu
    local cc = {}
    for i = 1, n do cc[i] = c[i] - mu end
    centred[j] = cc
  end
  -- the chains' mean biased autocovariance at lag t (lazily)
  local acov = {}
  local function ac(t)
    local v = acov[t]
    if v then return v end
    local s = 0
    for j = 1, m do
      local cc, sj = centred[j], 0
      for i = 1, n - t do sj = sj + cc[i] * cc[i + t] end
      s = s + sj / n
    end
    v = s / m
    acov[t] = v
    return v
  end
  local mvar = ac(0) * n / (n - 1)
  local var_plus = mvar * (n - 1) / n
  if m > 1 then
    local _, vm = mean_var(means)
    var_plus = var_plus + vm
  end
  -- Geyer's initial positive sequence (rho[t + 1] is the lag-t autocorrelation)
  local rho = {}
  local t = 0
  local even, odd = 1, 1 - (mvar - ac(1)) / var_plus
  rho[1], rho[2] = even, odd
  while t < n - 5 and even + odd == even + odd and even + odd > 0 do
    t = t + 2
    even = 1 - (mvar - ac(t)) / var_plus
    odd = 1 - (mvar - ac(t + 1)) / var_plus
    if even + odd >= 0 then rho[t + 1], rho[t + 2] = even, odd end
  end
  local max_t = t
  if even > 0 then rho[max_t + 1] = even end
  -- Geyer's initial monotone sequence
  t = 0
  while t <= max_t - 4 do
    t = t + 2
    if (rho[t + 1] or 0) + (rho[t + 2] or 0) > rho[t - 1] + rho[t] then
      rho[t + 1] = (rho[t - 1] + rho[t]) / 2
      rho[t + 2] = rho[t + 1]
    end
  end
  local S = m * n
  local sum = 0
  for k = 1, math.max(max_t, 1) do sum = sum + (rho[k] or 0) end -- R's 1:0 is c(1, 0)
  local tau = -1 + 2 * sum + (rho[max_t + 1] or 0)
  tau = math.max(tau, 1 / math.log(S, 10))
  return S / tau
end

-- ---------------------------------------------------------- the diagnostics

function M.rhat(x)
  local bulk = rhat_basic(z_scale(split(x)))
  local med = M.quantile(all_values(x), 0.5)
  local folded = {}
  for j, c in ipairs(x) do
    folded[j] = {}
    for i = 1, #c do folded[j][i] = abs(c[i] - med) end
  end
  local tail = rhat_basic(z_scale(split(folded)))
  if bulk ~= bulk or tail ~= tail then return NAN end
  return math.max(bulk, tail)
end

function M.rhat_basic(x) return rhat_basic(split(x)) end
function M.ess_basic(x) return ess_basic(split(x)) end
M.ess_mean = M.ess_basic
function M.ess_bulk(x) return ess_basic(z_scale(split(x))) end

function M.ess_quantile(x, p)
  if bad_or_constant(x) then return NAN end
  local q = M.quantile(all_values(x), p)
  local ind = {}
  for j, c in ipairs(x) do
    ind[j] = {}
    for i = 1, #c do ind[j][i] = c[i] <= q and 1 or 0 end
  end
  return ess_basic(split(ind))
end

function M.ess_tail(x)
  local a, b = M.ess_quantile(x, 0.05), M.ess_quantile(x, 0.95)
  if a ~= a or b ~= b then return NAN end
  return math.min(a, b)
end

function M.mcse_mean(x)
  local _, v = mean_var(all_values(x))
  return sqrt(v) / sqrt(M.ess_mean(x))
end

-- one row of a summary (nan diagnostics when every chain is constant, as
-- stansummary shows for the step size): mean, mcse, sd, mad (median absolute deviation,
-- scaled by 1.4826 as R's mad), q5, q50, q95, ess_bulk, ess_tail, rhat
function M.summarize(x)
  local v = all_values(x)
  -- each chain constant (a step size fixed after warmup): nothing to diagnose
  local flat = true
  for _, c in ipairs(x) do
    for i = 2, #c do if c[i] ~= c[1] then flat = false; break end end
  end
  local s = {table.unpack(v)}
  table.sort(s)
  local m, var = mean_var(v)
  local med = quantile_sorted(s, 0.5)
  local dev = {}
  for i = 1, #v do dev[i] = abs(v[i] - med) end
  table.sort(dev)
  local r = {mean = m, sd = sqrt(var), mad = 1.4826 * quantile_sorted(dev, 0.5),
             q5 = quantile_sorted(s, 0.05), q50 = med, q95 = quantile_sorted(s, 0.95),
             mcse = NAN, ess_bulk = NAN, ess_tail = NAN, rhat = NAN}
  if not flat then
    r.mcse, r.ess_bulk = sqrt(var) / sqrt(M.ess_mean(x)), M.ess_bulk(x)
    r.ess_tail, r.rhat = M.ess_tail(x), M.rhat(x)
  end
  return r
end

-- ------------------------------------------------------------ summaries

local SAMPLER = {"lp", "accept_stat", "stepsize", "treedepth", "n_leapfrog", "divergent", "energy"}

-- a fit's summary rows: {name, mean, mcse, sd, mad, q5, q50, q95, ess_bulk,
-- ess_tail, rhat}, the sampler's parameters first (lp__ ... energy__)
function M.summary(fit)
  local C = require "mplua.hmc_chains"
  local rows = {}
  for _, k in ipairs(SAMPLER) do
    if fit.stats[1] and #(fit.stats[1][k] or {}) > 0 then -- fixed_param keeps lp__ and accept_stat__
      local r = M.summarize(C.column(fit, k))
      r.name = k .. "__"
      rows[#rows + 1] = r
    end
  end
  for i = 1, fit.dim do
    local r = M.summarize(C.column(fit, i))
    r.name = fit.names[i]
    rows[#rows + 1] = r
  end
  for i, name in ipairs(fit.generated_names or {}) do
    local x = {}
    for c = 1, fit.chains do
      x[c] = {}
      for t, g in ipairs(fit.generated[c]) do x[c][t] = g[i] end
    end
    local r = M.summarize(x)
    r.name = name
    rows[#rows + 1] = r
  end
  return rows
end

local function num(x, sig)
  if x ~= x then return "nan" end
  if x == math.floor(x) and math.abs(x) < 1e6 then return ("%d"):format(x) end
  local a = math.abs(x)
  if a >= 1e5 or a < 1e-3 then return ("%." .. (sig - 1) .. "e"):format(x) end
  return ("%." .. sig .. "g"):format(x)
end

local function list(t, f)
  local o = {}
  for i, v in ipairs(t) do o[i] = f(v) end
  return table.concat(o, ", ")
end

-- the summary as CmdStan's stansummary prints it (opts.model names the model)
function M.stansummary(fit, opts)
  opts = opts or {}
  local out = {}
  local function line(...) out[#out + 1] = string.format(...) end
  local iters, warms, tw, ts = {}, {}, {}, {}
  for c = 1, fit.chains do
    iters[c], warms[c] = (fit.num_samples or fit.n) + fit.warmup, fit.warmup
    tw[c], ts[c] = fit.info[c].time_warmup, fit.info[c].time_sampling
  end
  local sum = function(t) local s = 0 for _, v in ipairs(t) do s = s + v end return s end
  line("Inference for mplua model: %s", opts.model or "(unnamed)")
  line("%d chains: each with iter=(%s); warmup=(%s); thin=(%s); %d iterations saved.",
       fit.chains, list(iters, tostring), list(warms, tostring), list(iters, function() return tostring(fit.thin or 1) end),
       fit.chains * fit.n)
  line("")
  line("Warmup took (%s) seconds, %.2g seconds total", list(tw, function(v) return ("%.2g"):format(v) end), sum(tw))
  line("Sampling took (%s) seconds, %.2g seconds total", list(ts, function(v) return ("%.2g"):format(v) end), sum(ts))
  line("")
  local rows = M.summary(fit)
  local w = 14
  for _, r in ipairs(rows) do w = math.max(w, #r.name + 1) end
  local head = ("%-" .. w .. "s%9s%9s%9s%9s%9s%9s%9s%10s%10s%7s")
  line(head, "", "Mean", "MCSE", "StdDev", "MAD", "5%", "50%", "95%", "ESS_bulk", "ESS_tail", "R_hat")
  line("")
  local divergent, nsampler = 0, 0
  for _, r in ipairs(rows) do if r.name:sub(-2) == "__" then nsampler = nsampler + 1 end end
  for i, r in ipairs(rows) do
    if i == nsampler + 1 then line("") end
    if r.name == "divergent__" then divergent = math.floor(r.mean * fit.chains * fit.n + 0.5) end
    line(head, r.name, num(r.mean, 3), num(r.mcse, 2), num(r.sd, 3), num(r.mad, 3), num(r.q5, 3),
         num(r.q50, 3), num(r.q95, 3), (num(r.ess_bulk, 4):gsub("%..*", "")),
         (num(r.ess_tail, 4):gsub("%..*", "")), r.rhat ~= r.rhat and "nan" or r.rhat < 100 and ("%.2f"):format(r.rhat) or num(r.rhat, 2))
  end
  line("")
  local how = {hmc = "hmc with static integration time", fixed_param = "fixed_param"}
  line("Samples were drawn using %s.", how[fit.algorithm] or "hmc with nuts")
  if divergent > 0 then line("%d of %d iterations ended with a divergence.", divergent, fit.chains * fit.n) end
  line("For each parameter, ESS_bulk and ESS_tail measure the effective sample size for the")
  line("entire sample (bulk) and for the .05 and .95 tails (tail), and R_hat measures the")
  line("potential scale reduction on split chains. At convergence R_hat will be very close to 1.00.")
  return table.concat(out, "\n")
end

return M
