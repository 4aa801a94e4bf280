-- SPDX-License-Identifier: MIT
-- hmc_chains: several chains (hmc.sample with opts.chains), one or more per
-- rank, bitwise reproducible by seed whatever the number of ranks.
--
--   local fit = hmc.sample(logp_grad, x0, {chains = 4, num_samples = 1000, seed = 42})
--   print(hmc.stansummary(fit))
--
-- Chain c runs from its own seed (a splitmix64 step from opts.seed and c)
-- and its own start: x0 (the same for every chain), x0[c] (a list of
-- starts), or x0(c) (a function). Everything a chain computes depends on
-- nothing else, so its draws are the same bits on any rank: with
-- parallel ~= false, mp.size > 1 and rank 0 outside a task, one task ships
-- logp_grad (bytecode and upvalues, as mp.exec does) and runs chain c on
-- rank (c - 1) % mp.size; rank 0 gathers the chains. With parallel = false
-- (and at one rank) the chains run one after the other here: that is what a
-- logp_grad that shards its likelihood with mp.mapper needs (a mapper call
-- is a task of all ranks and cannot run inside another); such a logp_grad
-- with parallel chains is refused with that advice.
--
-- The fit: {chains, n (kept draws per chain), num_samples, warmup, thin,
-- dim, names, draws = {chain -> list of draws}, stats = {chain -> {lp,
-- accept_stat, stepsize, treedepth, n_leapfrog, divergent, energy}} (one
-- value per kept draw, Stan's sampler parameters), info = {chain -> the
-- single-chain info (step, inv_metric, ...)}, seeds, options (the checked
-- options), warmup_draws / warmup_stats (with save_warmup)}.

local M = {}
local R = require "mplua.hmc_rng"
local fmt = string.format

-- chain c's seed
function M.seed(seed, c) return R.derive(seed, c) end

-- The path to an mp.mapper among f's upvalues (functions and tables
-- reached from them), or nil.
function M.find_mapper(f)
  local seen = {}
  local function walk(v, path, depth)
    if depth > 8 or seen[v] then return nil end
    local t = type(v)
    if t == "userdata" then
      local mt = getmetatable(v)
      if type(mt) == "table" and mt.__name == "mp.Mapper" then return path end
      return nil
    end
    if t ~= "function" and t ~= "table" then return nil end
    seen[v] = true
    if t == "function" then
      for i = 1, 255 do
        local name, uv = debug.getupvalue(v, i)
        if not name then break end
        local p = walk(uv, fmt("%s (upvalue '%s')", path, name), depth + 1)
        if p then return p end
      end
    else
      for k, uv in next, v do
        local p = walk(uv, fmt("%s[%s]", path, type(k) == "string" and fmt("%q", k) or tostring(k)), depth + 1)
        if p then return p end
      end
    end
    return nil
  end
  return walk(f, "logp_grad", 0)
end

-- Refuses to ship f to other ranks when it calls an mp.mapper.
function M.check_shippable(f, what, level)
  local path = M.find_mapper(f)
  if path then
    error(fmt("%s: %s holds an mp.mapper (%s), whose calls are tasks over all ranks: chains cannot also "
      .. "run over the ranks. Pass parallel = false to run the chains one after the other, each mapping "
      .. "its likelihood over all ranks", what, path:match("^%S+"), path), level)
  end
end

-- the chains of this rank (c = rank + 1, rank + 1 + size, ...)
function M._run_mine(lpg, starts, o, seeds, nchains, rank, size)
  local chain = require "mplua.hmc_chain"
  local out = {}
  for c = rank + 1, nchains, size do
    local draws, info = chain.run(lpg, starts[c], o, seeds[c], c)
    out[#out + 1] = {c = c, draws = draws, info = info}
  end
  return out
end

-- the task shipped to every rank (no upvalues: it finds the module there)
local function task(lpg, starts, o, seeds, nchains)
  local mine = require("mplua.hmc_chains")._run_mine(lpg, starts, o, seeds, nchains, mp.rank, mp.size)
  local all = mp.gather(mine, 0)
  if mp.rank == 0 then return all end
end

-- whether work can go over the ranks from here
function M.over_ranks(parallel, count)
  return parallel ~= false and mp ~= nil and mp.size > 1 and mp.rank == 0 and count > 1
end

-- o: the checked options (lib/hmc_options.lua); check(x0) checks one start
function M.run(logp_grad, x0, o, check)
  local nchains = o.chains
  local starts, seeds = {}, {}
  for c = 1, nchains do
    local s = x0
    if type(x0) == "function" then s = x0(c)
    elseif type(x0) == "table" and type(x0[1]) == "table" then s = x0[c] end
    starts[c] = check(s)
    seeds[c] = M.seed(o.seed, c)
  end
  -- the options travel to the ranks: only plain data
  local oc = {}
  for k, v in pairs(o) do if type(v) ~= "function" then oc[k] = v end end
  local results
  if M.over_ranks(o.parallel, nchains) then
    M.check_shippable(logp_grad, "hmc.sample", 4)
    local all = mp.exec(task, logp_grad, starts, oc, seeds, nchains)
    results = {}
    for _, r in ipairs(all) do for _, ch in ipairs(r) do results[#results + 1] = ch end end
  else
    results = M._run_mine(logp_grad, starts, oc, seeds, nchains, 0, 1)
  end
  local fit = {chains = nchains, n = 0, num_samples = o.num_samples,
               warmup = o.algorithm == "fixed_param" and 0 or o.num_warmup, thin = o.thin,
               dim = #starts[1], draws = {}, stats = {}, info = {}, seeds = seeds,
               algorithm = o.algorithm, names = o.names, options = oc}
  if o.save_warmup then fit.warmup_draws, fit.warmup_stats = {}, {} end
  for _, ch in ipairs(results) do
    local c = ch.c
    fit.draws[c], fit.stats[c] = ch.draws, ch.info.stats
    if o.save_warmup then fit.warmup_draws[c], fit.warmup_stats[c] = ch.info.warmup_draws, ch.info.warmup_stats end
    ch.info.stats, ch.info.warmup_draws, ch.info.warmup_stats = nil, nil, nil
    fit.info[c] = ch.info
    fit.n = #ch.draws
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
