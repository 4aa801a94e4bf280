-- SPDX-License-Identifier: MIT
-- hmc: Hamiltonian Monte Carlo over a log density with its gradient (pure
-- Lua), as Stan's sampler: NUTS (or static HMC, or fixed_param), warmup that
-- adapts the step size and a diagonal or dense metric, diagnostics, several
-- chains over the ranks, generated quantities, CmdStan-format output.
--
--   local hmc = require "mplua.hmc"
--   local draws, info = hmc.sample(function(x) return ad.grad(logp, x) end, {0, 0},
--                                  {num_samples = 1000, seed = 42})
--   local s = hmc.summary(draws)  -- s[i] = {mean, sd, ess, mcse}
--
-- logp_grad(x) returns log p(x) (up to a constant) and its gradient; x is a
-- list of numbers. The options (lib/hmc_options.lua) are CmdStan's, by name:
-- num_samples (alias n, 1000), num_warmup (warmup, = num_samples),
-- save_warmup (false), thin (1), seed, algorithm ("nuts", "hmc" = static
-- integration time, "fixed_param"), max_depth (10), metric ("diag_e",
-- "dense_e", "unit_e"), inv_metric (initial: a list, or rows for dense_e),
-- stepsize (step; else Stan's heuristic), stepsize_jitter (jitter; 0, and
-- 0.5 for static HMC), int_time or steps (static HMC; 10 steps), adapt_engaged
-- (adapt, true), adapt_delta (target_accept, 0.8), adapt_gamma (0.05),
-- adapt_kappa (0.75), adapt_t0 (10), adapt_init_buffer (75),
-- adapt_term_buffer (50), adapt_window (25), init_radius (2), refresh (0:
-- silent), chains, parallel, names, generated_quantities, generated_names,
-- model. Other names are errors; Stan's that mplua does not take are
-- refused with what to do instead.
--
-- One chain returns draws (the kept draws: every thin-th iteration) and info:
-- step, inv_metric, accept_rate, divergences, warmup_divergences,
-- treedepth_hits, n_leapfrog (gradient evaluations), mean_depth,
-- time_warmup, time_sampling, stats (per kept draw: lp, accept_stat,
-- stepsize, treedepth, n_leapfrog, divergent, energy), ebfmi, warnings,
-- start (where the chain began), warmup_draws / warmup_stats (save_warmup),
-- generated (one list per draw, with generated_quantities). opts.chains = C
-- gives a fit instead (lib/hmc_chains.lua). After sampling the problems
-- CmdStan's diagnose reports (divergences, tree depth hits, low E-BFMI) go
-- to Lua's warn() (mplua -W shows them) and to info.warnings / fit.warnings.
--
-- A start x0 where logp_grad is not finite is replaced by up to 100 random
-- points uniform in (-init_radius, init_radius); the error names the chain.

local M = {}
local O = require "mplua.hmc_options"
local fmt = string.format
local huge = math.huge

local function isfinite(v) return v == v and v ~= huge and v ~= -huge end

-- A copy of one start point (checked), as floats.
local function check_start(x0, alg, level)
  local function fail(msg) error(fmt("bad argument #2 to 'hmc.sample' (%s)", msg), level + 2) end
  if type(x0) ~= "table" or (#x0 == 0 and alg ~= "fixed_param") then
    fail(fmt("non-empty table of numbers expected, got %s", type(x0) == "table" and "empty table" or type(x0)))
  end
  local q = {}
  for i = 1, #x0 do
    if type(x0[i]) ~= "number" or not isfinite(x0[i]) then
      fail(fmt("x0[%d] is %s, expected a finite number", i, tostring(x0[i])))
    end
    q[i] = x0[i] + 0.0
  end
  return q
end

local function callable(f)
  local mt = getmetatable(f)
  return type(f) == "function" or type(mt) == "table" and mt.__call ~= nil
end

-- diagnostics after sampling: into the result and to warn()
local function report(where, fit)
  local D = require "mplua.hmc_diagnose"
  local r = D.check(fit)
  local all = {}
  for c = 1, fit.chains do
    local inf = fit.info[c]
    inf.ebfmi = r.ebfmi[c]
    for _, w in ipairs(inf.warnings or {}) do
      all[#all + 1] = fit.chains > 1 and fmt("chain %d: %s", c, w) or w
    end
  end
  for _, w in ipairs(r.warnings) do all[#all + 1] = w end
  for _, w in ipairs(all) do warn("hmc.sample: ", w) end
  return all
end

function M.sample(logp_grad, x0, opts)
  if not callable(logp_grad) then
    error(fmt("bad argument #1 to 'hmc.sample' (function expected, got %s)", type(logp_grad)), 2)
  end
  local o = O.check(opts, "hmc.sample", 3, 2)
  local gq = o.generated_quantities
  local G = gq and require "mplua.hmc_generate"
  if o.chains then
    local fit = require("mplua.hmc_chains").run(logp_grad, x0, o, function(s) return check_start(s, o.algorithm, 4) end)
    fit.model = o.model
    fit.warnings = report("hmc.sample", fit)
    if gq then G.generate(fit, gq, {seed = o.seed, names = o.generated_names, parallel = o.parallel}) end
    return fit
  end
  local q = check_start(x0, o.algorithm, 2)
  local draws, info = require("mplua.hmc_chain").run(logp_grad, q, o, o.seed, 1)
  info.algorithm, info.options, info.model = o.algorithm, o, o.model
  info.warmup = o.algorithm == "fixed_param" and 0 or o.num_warmup
  local D = require "mplua.hmc_diagnose"
  local fit = D.as_fit(draws, info)
  info.warnings = report("hmc.sample", fit)
  if gq then
    G.generate(fit, gq, {seed = o.seed, names = o.generated_names, parallel = false})
    info.generated, info.generated_names = fit.generated[1], fit.generated_names
    info.warmup_generated = fit.warmup_generated and fit.warmup_generated[1]
  end
  return draws, info
end

---------------------------------------------------------------------------
-- Summary of one chain: mean, sd and effective sample size per coordinate.
-- ESS uses Geyer's initial monotone sequence on the autocorrelations of the
-- single chain (as Stan does for one chain), capped at n·log10(n) as Stan
-- does for antithetic chains; mcse = sd / sqrt(ess). A constant coordinate
-- has ess nan.

local function ess(x, mean, n)
  local function acov(k)
    local s = 0
    for t = 1, n - k do s = s + (x[t] - mean) * (x[t + k] - mean) end
    return s / n
  end
  local c0 = acov(0)
  if not (c0 > 0) then return 0 / 0 end
  local tau, prev = -1, huge
  for m = 0, math.floor((n - 2) / 2) do
    local G = (acov(2 * m) + acov(2 * m + 1)) / c0
    if G <= 0 then break end
    G = math.min(G, prev) -- initial monotone sequence
    tau, prev = tau + 2 * G, G
  end
  -- antithetic chains can make tau tiny or negative: Stan's floor 1/log10(n)
  return n / math.max(tau, math.log(10) / math.log(n))
end

function M.summary(draws)
  if type(draws) == "table" and draws.chains then return require("mplua.posterior").summary(draws) end
  if type(draws) ~= "table" or #draws < 4 or type(draws[1]) ~= "table" then
    error("bad argument #1 to 'hmc.summary' (list of at least 4 draws expected)", 2)
  end
  local n, dim, out = #draws, #draws[1], {}
  for i = 1, dim do
    local x, s = {}, 0
    for t = 1, n do x[t] = draws[t][i]; s = s + x[t] end
    local mean, ss = s / n, 0
    for t = 1, n do ss = ss + (x[t] - mean) ^ 2 end
    local sd = math.sqrt(ss / (n - 1))
    local e = ess(x, mean, n)
    out[i] = {mean = mean, sd = sd, ess = e, mcse = sd / math.sqrt(e)}
  end
  return out
end

-- a multi-chain fit's summary as CmdStan's stansummary prints it (lib/posterior.lua)
function M.stansummary(fit, opts) return require("mplua.posterior").stansummary(fit, opts) end

-- CmdStan's diagnose report on a fit (or on one chain's draws, info)
function M.diagnose(fit, info)
  local D = require "mplua.hmc_diagnose"
  if info then fit = D.as_fit(fit, info) end
  return (D.text(fit))
end

-- the fit in CmdStan's CSV layout (lib/hmc_csv.lua)
function M.write_csv(fit, path, opts, extra) return require("mplua.hmc_csv").write(fit, path, opts, extra) end

-- generated quantities on a fit's draws (lib/hmc_generate.lua)
function M.generate(fit, f, opts) return require("mplua.hmc_generate").generate(fit, f, opts) end

return M
