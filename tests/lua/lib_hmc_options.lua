-- ranks: nompi 1
-- SPDX-License-Identifier: MIT
-- hmc.sample's options: unknown and mistyped names are errors naming them;
-- Stan's options mplua does not take are refused by name; the ones it takes
-- change the run (adapt_delta, thin, save_warmup, metric = "dense_e",
-- max_depth, stepsize, init_radius, fixed_param); random inits when x0 is
-- outside the support, failures naming the chain; E-BFMI and tree depth hits
-- reported; the diagnose text.

local hmc = require "mplua.hmc"
local D = require "mplua.hmc_diagnose"
local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local fails, fmt = C.fails, string.format

-- a correlated 2-d normal: sds 1 and 3, correlation 0.95
local rho, s1, s2 = 0.95, 1, 3
local function logp(x)
  local a, b = x[1] / s1, x[2] / s2
  return -0.5 * (a * a - 2 * rho * a * b + b * b) / (1 - rho * rho)
end
local lpg = function(x) return ad.grad(logp, x) end
local base = {num_samples = 200, num_warmup = 200, seed = 7}
local function with(t)
  local o = {}
  for k, v in pairs(base) do o[k] = v end
  for k, v in pairs(t) do o[k] = v end
  return o
end

-- 1. unknown names, typos, wrong types, Stan's options refused by name
fails("bad argument #3 to 'hmc.sample' (unknown option 'warmpu'; did you mean 'warmup'?)", hmc.sample, lpg, {0, 0}, {warmpu = 10})
fails("unknown option 'iter'", hmc.sample, lpg, {0, 0}, {adapt_delta = 0.99, thin = 5, metric = "dense", iter = 10})
fails("unknown option 'adapt_detla'; did you mean 'adapt_delta'?", hmc.sample, lpg, {0, 0}, {adapt_detla = 0.9})
fails("option 'thin' must be an integer >= 1, got 0", hmc.sample, lpg, {0, 0}, {thin = 0})
fails("option 'adapt_delta' must be a number in (0, 1), got 1.5", hmc.sample, lpg, {0, 0}, {adapt_delta = 1.5})
fails("option 'metric' must be one of \"diag_e\", \"dense_e\"", hmc.sample, lpg, {0, 0}, {metric = "full"})
fails("option 'save_warmup' must be a boolean, got 1", hmc.sample, lpg, {0, 0}, {save_warmup = 1})
fails("option 'num_warmup' given twice", hmc.sample, lpg, {0, 0}, {warmup = 10, num_warmup = 10})
fails("option 'sig_figs' is not supported: it is an option of hmc.write_csv", hmc.sample, lpg, {0, 0}, {sig_figs = 3})
fails("option 'num_threads' is not supported: chains run over mp ranks", hmc.sample, lpg, {0, 0}, {num_threads = 4})
fails("option 'init' is not supported: pass the start point as argument 2", hmc.sample, lpg, {0, 0}, {init = 0})
fails("option 'metric_file' is not supported", hmc.sample, lpg, {0, 0}, {metric_file = "m.json"})
fails("option 'steps' is for algorithm = \"hmc\"", hmc.sample, lpg, {0, 0}, {steps = 5})
fails("inv_metric is not positive definite", hmc.sample, lpg, {0, 0}, {metric = "dense_e", inv_metric = {{1, 2}, {2, 1}}})
fails("inv_metric must hold 2 positive numbers", hmc.sample, lpg, {0, 0}, {inv_metric = {1}})

-- 2. the options change the run
local d0, i0 = hmc.sample(lpg, {0, 0}, base)
local d1, i1 = hmc.sample(lpg, {0, 0}, with{adapt_delta = 0.99})
assert(d0[1][1] ~= d1[1][1] and i1.step < i0.step, fmt("adapt_delta 0.99: step %g, default %g", i1.step, i0.step))
assert(i0.accept_rate > 0.6 and i1.accept_rate > 0.9, fmt("accept rates %g %g", i0.accept_rate, i1.accept_rate))
-- thin keeps every thin-th iteration (iterations 1, 6, 11, ...), so the same
-- run thinned gives the same draws
local dt, it = hmc.sample(lpg, {0, 0}, with{thin = 5})
assert(#dt == 40 and #it.stats.lp == 40, "thin = 5: " .. #dt .. " draws")
for k = 1, 40 do assert(dt[k][1] == d0[5 * k - 4][1] and it.stats.lp[k] == i0.stats.lp[5 * k - 4]) end
local dw, iw = hmc.sample(lpg, {0, 0}, with{save_warmup = true, thin = 2})
assert(#iw.warmup_draws == 100 and #iw.warmup_stats.stepsize == 100 and #dw == 100)
assert(dw[1][1] == d0[1][1], "save_warmup changes nothing else")
-- the dense metric learns the correlation: its inverse metric approximates the covariance
local dd, idn = hmc.sample(lpg, {0, 0}, with{metric = "dense", num_warmup = 400})
local M = idn.inv_metric
assert(type(M[1]) == "table" and M[1][2] == M[2][1], "dense inv_metric is a symmetric matrix")
local corr = M[1][2] / math.sqrt(M[1][1] * M[2][2])
assert(corr > 0.85 and corr < 0.99, "dense metric correlation " .. corr)
assert(math.abs(M[2][2] / M[1][1] - 9) < 4, "dense metric variances " .. M[1][1] .. " " .. M[2][2])
local _, idg = hmc.sample(lpg, {0, 0}, with{num_warmup = 400})
assert(type(idg.inv_metric[1]) == "number")
local leap = function(inf) local s = 0 for _, v in ipairs(inf.stats.n_leapfrog) do s = s + v end return s end
assert(leap(idn) < leap(idg), fmt("dense metric: %d leapfrog steps, diagonal %d", leap(idn), leap(idg)))
local s = hmc.summary(dd)
assert(math.abs(s[2].mean) < 4 * s[2].mcse and math.abs(s[2].sd / 3 - 1) < 0.2, "dense metric draws")
-- a fixed step size, no adaptation
local _, ifx = hmc.sample(lpg, {0, 0}, with{stepsize = 0.1, adapt_engaged = false})
assert(ifx.step == 0.1 and ifx.stats.stepsize[200] == 0.1)
-- the unit metric stays the identity
local _, iu = hmc.sample(lpg, {0, 0}, with{metric = "unit_e"})
assert(iu.inv_metric[1] == 1 and iu.inv_metric[2] == 1)
-- static HMC with an integration time
local _, ih = hmc.sample(lpg, {0, 0}, with{algorithm = "hmc", int_time = 3})
assert(ih.stats.n_leapfrog[1] >= 1 and ih.mean_depth == nil)

-- 3. max_depth: tree depth hits are counted and reported
local _, im = hmc.sample(lpg, {0, 0}, with{max_depth = 1, metric = "unit_e"})
assert(im.treedepth_hits > 0, "max_depth = 1 never hit")
for t = 1, 200 do assert(im.stats.treedepth[t] <= 1 and im.stats.n_leapfrog[t] <= 3) end
local hit_warning = false
for _, w in ipairs(im.warnings) do hit_warning = hit_warning or w:find("hit the maximum treedepth limit of 1", 1, true) ~= nil end
assert(hit_warning, "no tree depth warning")
local text = hmc.diagnose(_, im)
assert(text:find("transitions hit the maximum treedepth limit of 1, or 2^1 leapfrog steps.", 1, true), text)

-- 4. E-BFMI per chain, from the energies as CmdStan computes it
local E = i0.stats.energy
local mean, num, den = 0, 0, 0
for t = 1, #E do mean = mean + E[t] / #E end
for t = 1, #E do den = den + (E[t] - mean) ^ 2; if t > 1 then num = num + (E[t] - E[t - 1]) ^ 2 end end
assert(C.close(i0.ebfmi, num / den, 1e-12) and i0.ebfmi > 0.3, "E-BFMI " .. tostring(i0.ebfmi))
-- a chain that does not move has no energy variance to explain: low E-BFMI is reported
local stuck = {stats = {lp = {}, accept_stat = {}, stepsize = {}, treedepth = {}, n_leapfrog = {}, divergent = {}, energy = {}},
               max_depth = 10}
for t = 1, 100 do
  for _, k in ipairs{"lp", "accept_stat", "stepsize", "treedepth", "n_leapfrog", "divergent"} do stuck.stats[k][t] = 1 end
  stuck.stats.divergent[t] = t % 10 == 0 and 1 or 0
  stuck.stats.energy[t] = t * 0.01 -- a slow drift: tiny differences, large variance
end
local r = D.check(D.as_fit({}, stuck))
assert(r.ebfmi[1] < 0.01 and r.low_ebfmi[1] == 1 and r.divergent == 10)
local dt2 = hmc.diagnose({}, stuck)
assert(dt2:find("The E-BFMI, 0.00, of chain 1 is below the nominal threshold of 0.30", 1, true), dt2)
assert(dt2:find("10 of 100 (10.00%) transitions ended with a divergence.", 1, true), dt2)
assert(hmc.diagnose(d0, i0):find("Processing complete, no problems detected.", 1, true))

-- 5. starts: x0 outside the support is replaced by a random init within
--    init_radius; the error names the chain when none is found
local function box(x) -- finite only on (-1, 1)^2
  if math.abs(x[1]) >= 1 or math.abs(x[2]) >= 1 then return -math.huge, {0, 0} end
  return ad.grad(function(y) return ad.normal_lpdf(y, 0, 0.3) end, x)
end
local db, ib = hmc.sample(box, {5, 5}, with{num_samples = 50, num_warmup = 50})
assert(math.abs(ib.start[1]) < 1 and math.abs(ib.start[2]) < 1 and #db == 50, "random init not in the support")
for _, d in ipairs(db) do assert(math.abs(d[1]) < 1) end
local _, ib2 = hmc.sample(box, {5, 5}, with{num_samples = 50, num_warmup = 50})
assert(ib2.start[1] == ib.start[1], "random inits are reproducible by seed")
fails("chain 1: the log density or its gradient is not finite at x0 nor at 100 random inits uniform in (-0.5, 0.5)",
      hmc.sample, function() return 0 / 0, {0, 0} end, {5, 5}, {init_radius = 0.5})
fails("chain 1: the log density or its gradient is not finite at x0 (init_radius = 0", hmc.sample, box, {5, 5}, {init_radius = 0})
local function near(x)
  if math.abs(x[1]) >= 50 then return -math.huge, {0} end
  return -0.5 * x[1] * x[1], {-x[1]}
end
fails("hmc.sample: chain 3: the log density or its gradient is not finite at x0 (init_radius = 0", hmc.sample, near,
      function(c) return {c == 3 and 100 or 0} end, {chains = 3, num_samples = 5, num_warmup = 5, init_radius = 0, parallel = false})

-- 6. fixed_param: the draws stay at the start; lp__ and accept_stat__ are 0
local df, ifp = hmc.sample(lpg, {0.5, -1}, {algorithm = "fixed_param", num_samples = 20})
assert(#df == 20 and df[20][1] == 0.5 and df[20][2] == -1 and ifp.stats.lp[1] == 0 and #ifp.stats.energy == 0)
assert(ifp.step == nil and ifp.n_leapfrog == 1, "fixed_param evaluates the start only")

print("lib_hmc_options ok")
