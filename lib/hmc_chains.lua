-- hmc_chains: several NUTS/HMC chains (hmc.sample with opts.chains), one or
-- more per rank, bitwise reproducible by seed whatever the number of ranks.
--
--   local fit = hmc.sample(logp_grad, x0, {chains = 4, n = 1000, seed = 42})
--   print(hmc.stansummary(fit))
--
-- Chain c runs from its own seed (a splitmix64 step from opts.seed and c)
-- and its own start: x0 (the same for every chain), x0[c] (a list of
-- starts), or x0(c) (a function). Everything a chain computes depends on
-- nothing else, so its draws are the same bits on any rank: with
-- parallel ~= false, mp.size > 1 and rank 0 outside a task, one task ships
-- logp_grad (bytecode and upvalues, as mp.exec does) and runs chain c on
-- rank (c - 1) % mp.size; rank 0 gathers the chains. With parallel = false
-- (and at one rank) the chains run one after the other here: use that when
-- logp_grad itself shards its likelihood with mp.mapper (a mapper call is a
-- task of its own and cannot run inside another).
--
-- The fit: {chains, n, warmup, dim, names, draws = {chain -> list of draws},
-- stats = {chain -> {lp, accept_stat, stepsize, treedepth, n_leapfrog,
-- divergent, energy}} (one value per draw, Stan's sampler parameters),
-- info = {chain -> the single-chain info (step, inv_metric, ...)}, seeds}.

local M = {}

-- chain c's seed: splitmix64's output for seed + c * golden gamma
function M.seed(seed, c)
  local z = seed + c * 0x9E3779B97F4A7C15
  z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
  z = (z ~ (z >> 27)) * 0x94D049BB133111EB
  return z ~ (z >> 31)
end

-- the chains of this rank (c = rank + 1, rank + 1 + size, ...)
function M._run_mine(lpg, starts, o, seeds, alg, nchains, rank, size)
  local hmc = require "mplua.hmc"
  local out = {}
  for c = rank + 1, nchains, size do
    local draws, info = hmc._chain(lpg, starts[c], o, seeds[c], alg)
    out[#out + 1] = {c = c, draws = draws, info = info}
  end
  return out
end

-- the task shipped to every rank (no upvalues: it finds the module there)
local function task(lpg, starts, o, seeds, alg, nchains)
  local mine = require("mplua.hmc_chains")._run_mine(lpg, starts, o, seeds, alg, nchains, mp.rank, mp.size)
  local all = mp.gather(mine, 0)
  if mp.rank == 0 then return all end
end

function M.run(logp_grad, x0, opts)
  local hmc = require "mplua.hmc"
  local nchains = opts.chains
  if not (math.type(nchains) == "integer" and nchains >= 1) then
    error("bad argument #3 to 'hmc.sample' (opts.chains must be a positive integer)", 3)
  end
  local starts, seeds, o, alg = {}, {}, nil, nil
  for c = 1, nchains do
    local s = x0
    if type(x0) == "function" then s = x0(c)
    elseif type(x0) == "table" and type(x0[1]) == "table" then s = x0[c] end
    local q, oo, seed, a = hmc._check(logp_grad, s, opts, 4)
    starts[c], o, alg = q, oo, a
    seeds[c] = M.seed(seed, c)
  end
  -- the options travel to the ranks: only plain data
  local oc = {}
  for k, v in pairs(o) do if type(v) ~= "function" then oc[k] = v end end
  local results
  if opts.parallel ~= false and mp and mp.size > 1 and mp.rank == 0 and nchains > 1 then
    local all = mp.exec(task, logp_grad, starts, oc, seeds, alg, nchains)
    results = {}
    for _, r in ipairs(all) do for _, ch in ipairs(r) do results[#results + 1] = ch end end
  else
    results = M._run_mine(logp_grad, starts, oc, seeds, alg, nchains, 0, 1)
  end
  local fit = {chains = nchains, n = oc.n or 1000, warmup = oc.warmup or oc.n or 1000,
               dim = #starts[1], draws = {}, stats = {}, info = {}, seeds = seeds,
               algorithm = alg, names = opts.names}
  for _, ch in ipairs(results) do
    fit.draws[ch.c], fit.stats[ch.c] = ch.draws, ch.info.stats
    ch.info.stats = nil
    fit.info[ch.c] = ch.info
  end
  if not fit.names then
    fit.names = {}
    for i = 1, fit.dim do fit.names[i] = ("x[%d]"):format(i) end
  end
  return fit
end

-- the draws of coordinate i (or the sampler statistic named s) as a list
-- of chains, for lib/posterior.lua
function M.column(fit, i)
  local x = {}
  for c = 1, fit.chains do
    local col = {}
    if type(i) == "string" then
      col = fit.stats[c][i]
    else
      for t, d in ipairs(fit.draws[c]) do col[t] = d[i] end
    end
    x[c] = col
  end
  return x
end

return M
