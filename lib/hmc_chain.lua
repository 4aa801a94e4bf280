-- SPDX-License-Identifier: MIT
-- hmc_chain: one chain of hmc.sample, as Stan's run_adaptive_sampler: a
-- start with finite log density (x0, else up to 100 random inits within
-- init_radius), warmup with adaptation, sampling, thinning; the kept draws
-- and their sampler parameters.

local M = {}
local N = require "mplua.hmc_nuts"
local A = require "mplua.hmc_adapt"
local Metric = require "mplua.hmc_metric"
local R = require "mplua.hmc_rng"
local huge = math.huge
local fmt = string.format

local INIT_TRIES = 100

local function copy(t)
  local r = {}
  for i = 1, #t do r[i] = t[i] end
  return r
end

-- The start: x0 if logp_grad is finite there, else random points uniform
-- in (-R, R) (Stan's random inits, on the unconstrained scale).
local function start(S, q, radius)
  local lp, g = N.evaluate(S, q)
  if lp ~= -huge then return {q = q, g = g, lp = lp} end
  for _ = 1, radius > 0 and INIT_TRIES or 0 do
    local r = {}
    for i = 1, #q do r[i] = radius * (2 * S.rng.uniform() - 1) end
    lp, g = N.evaluate(S, r)
    if lp ~= -huge then return {q = r, g = g, lp = lp} end
  end
  if radius > 0 then
    error(fmt("hmc.sample: chain %d: the log density or its gradient is not finite at x0 nor at %d random "
      .. "inits uniform in (-%g, %g) (init_radius): check the model, or give a start point inside its support",
      S.chain, INIT_TRIES, radius, radius), 0)
  end
  error(fmt("hmc.sample: chain %d: the log density or its gradient is not finite at x0 (init_radius = 0: no random retries)",
    S.chain), 0)
end

local STATS = {"lp", "accept_stat", "stepsize", "treedepth", "n_leapfrog", "divergent", "energy"}
M.STATS = STATS

local function new_stats()
  local st = {}
  for _, k in ipairs(STATS) do st[k] = {} end
  return st
end

-- One chain (number `chain`, for messages) of logp_grad from q with the
-- checked options o and its own seed. Returns the kept draws and info.
function M.run(logp_grad, q, o, seed, chain)
  local dim, n, warmup = #q, o.num_samples, o.num_warmup
  local alg = o.algorithm
  local S = {lp = logp_grad, rng = R.new(seed), n_grad = 0, chain = chain,
             max_depth = o.max_depth, steps = o.steps, int_time = o.int_time, jitter = o.stepsize_jitter}
  local metric, err = Metric.new(o.metric, dim, o.inv_metric)
  if not metric then error(fmt("bad argument #3 to 'hmc.sample' (%s)", err), 0) end
  S.metric = metric
  local step
  if alg == "nuts" then step = o.stepsize_jitter > 0 and N.nuts_jittered or N.nuts
  elseif alg == "hmc" then step = N.static end
  local clock = mp and mp.wtime or os.clock
  local t0 = clock()
  local warns = {}

  local z = start(S, q, o.init_radius)
  local q0 = z.q
  if alg == "fixed_param" then warmup = 0 end
  local adapt = alg ~= "fixed_param" and warmup > 0 and o.adapt_engaged
  S.eps = o.stepsize or 1
  if alg ~= "fixed_param" and (o.stepsize == nil or adapt) then A.init_stepsize(S, z) end
  local dual = A.dual_averaging(o)
  dual.restart(S.eps)
  local learn_metric = adapt and o.adapt_metric and o.metric ~= "unit_e"
  local W = learn_metric and A.windows(o, warmup, warns)
  local est = learn_metric and Metric.estimator(o.metric, dim)

  local st, wst = new_stats(), o.save_warmup and new_stats() or nil
  local draws, wdraws = {}, o.save_warmup and {} or nil
  local sum_accept, divergences, warm_div, depth_sum, hits = 0, 0, 0, 0, 0
  local t_warm
  local function keep(d, s, acc)
    local k = #d + 1
    d[k] = copy(z.q)
    if alg == "fixed_param" then
      s.lp[k], s.accept_stat[k] = 0, 0
      return
    end
    s.lp[k], s.accept_stat[k], s.stepsize[k] = z.lp, acc, S.eps_used
    s.treedepth[k], s.n_leapfrog[k] = S.depth or 0, S.n_leap
    s.divergent[k], s.energy[k] = S.divergent and 1 or 0, N.hamiltonian(S, z)
  end
  local total = warmup + n
  for it = 1, total do
    S.divergent = false
    S.eps_used = S.eps
    local accept = 0
    if step then z, accept = step(S, z) end
    local m = it <= warmup and it - 1 or it - warmup - 1 -- Stan's iteration within its phase
    if it <= warmup then
      if S.divergent then warm_div = warm_div + 1 end
      if adapt then
        S.eps = dual.learn(accept)
        if W then
          if W.in_window() then est.add(z.q) end
          if W.learn() then
            S.metric = Metric.new(o.metric, dim, est.estimate())
            est = Metric.estimator(o.metric, dim)
            A.init_stepsize(S, z)
            dual.restart(S.eps)
          end
        end
        if it == warmup then S.eps = dual.final() end
      end
      if wst and m % o.thin == 0 then keep(wdraws, wst, accept) end
      if it == warmup then t_warm = clock() end
    else
      if S.divergent then divergences = divergences + 1 end
      if S.depth and S.depth >= S.max_depth then hits = hits + 1 end
      sum_accept = sum_accept + accept
      depth_sum = depth_sum + (S.depth or 0)
      if m % o.thin == 0 then keep(draws, st, accept) end
    end
    if o.refresh > 0 and (it == 1 or it == total or it % o.refresh == 0) then
      io.write(fmt("Chain [%d] Iteration: %*d / %d [%3d%%]  (%s)\n", chain, #tostring(total), it, total,
        math.floor(100 * it / total), it <= warmup and "Warmup" or "Sampling"))
    end
  end
  local t1 = clock()
  t_warm = t_warm or t0
  local info = {step = S.eps, inv_metric = metric and S.metric:copy(), metric = o.metric,
    accept_rate = n > 0 and sum_accept / n or 0 / 0, divergences = divergences,
    warmup_divergences = warm_div, treedepth_hits = hits, max_depth = o.max_depth,
    n_leapfrog = S.n_grad, mean_depth = alg == "nuts" and n > 0 and depth_sum / n or nil, stats = st,
    time_warmup = t_warm - t0, time_sampling = t1 - t_warm, warnings = warns,
    warmup_draws = wdraws, warmup_stats = wst, start = copy(q0)}
  if alg == "fixed_param" then info.step, info.inv_metric = nil, nil end
  return draws, info
end

return M
