-- SPDX-License-Identifier: MIT
-- Samples posteriordb posteriors (scripts/posteriordb/models.lua) with
-- hmc.sample and compares each parameter's mean and sd with the reference
-- draws' (scripts/posteriordb/data/): z = (ours - reference) / (the two
-- Monte Carlo errors combined), |z| <= 4 to pass. Chains run over the ranks.
--
--   mpiexec -n 4 mplua scripts/posteriordb/run.lua [--chains 4] [--iter 1000] [--seed 1] [name ...]
--
-- Prints one line per posterior and "N of M posteriors pass"; exits 1 when
-- one fails. A pass also needs every R-hat <= 1.05 (a chain stuck in
-- another mode inflates the Monte Carlo errors and could hide behind them). The mean's error: our MCSE (posterior's ess_mean) and the
-- reference's sd / sqrt(its draws); the sd's: the MCSE of the variance
-- (the ESS of the squared deviations) over 2 sd, for both.
local here = arg[0]:match("^(.*)/") or "."
local hmc = require "mplua.hmc"
local P = require "mplua.posterior"
local M = dofile(here .. "/models.lua")
local fmt = string.format

local chains, iter, seed, names = 4, 1000, 1, {}
local i = 1
while arg[i] do
  local a = arg[i]
  if a == "--chains" then chains = math.tointeger(arg[i + 1]); i = i + 2
  elseif a == "--iter" then iter = math.tointeger(arg[i + 1]); i = i + 2
  elseif a == "--seed" then seed = math.tointeger(arg[i + 1]); i = i + 2
  else names[#names + 1] = a; i = i + 1 end
end
if #names == 0 then names = M.NAMES end

-- the draws of each reference quantity, as lists of chains
local function quantities(model, fit)
  local m, idx = model.params, {}
  for k, n in ipairs(m.names) do idx[n] = k end
  local q = {}
  for _, r in ipairs(model.reference) do q[r[1]] = {} end
  for c = 1, fit.chains do
    for _, r in ipairs(model.reference) do q[r[1]][c] = {} end
    for t, x in ipairs(fit.draws[c]) do
      local v = m:constrain(x)
      local der = model.derived and model.derived((m:unpack(x))) or {}
      for _, r in ipairs(model.reference) do
        local name = r[1]
        local val = idx[name] and v[idx[name]] or der[name]
        if val == nil then error(fmt("%s: no draws of %s", model.name, name)) end
        q[name][c][t] = val
      end
    end
  end
  return q
end

local function squared_deviations(x, mean)
  local out = {}
  for c, ch in ipairs(x) do
    out[c] = {}
    for t, v in ipairs(ch) do out[c][t] = (v - mean) ^ 2 end
  end
  return out
end

local function check(name)
  local model = M.load(name, here .. "/data")
  local m = model.params
  local function logp(x) local p, lj = m:unpack(x); return lj + model.logp(p) end
  local opts = {chains = chains, num_samples = iter, num_warmup = iter * (model.warmup_factor or 1), seed = seed}
  for k, v in pairs(model.opts or {}) do opts[k] = v end
  local t0 = mp.wtime()
  local r = (model.init_radius or 2) / 2
  local function start(c)
    local x = m:init(seed * 100 + c)
    for k = 1, #x do x[k] = x[k] * r end
    return x
  end
  local fit = hmc.sample(function(x) return ad.grad(logp, x) end, start, opts)
  local secs = mp.wtime() - t0
  local q = quantities(model, fit)
  local worst_m, worst_s, worst_name, min_ess, max_rhat = 0, 0, "", math.huge, 0
  local nref = model.ndraws
  for _, r in ipairs(model.reference) do
    local pname, mref, sref = r[1], r[2], r[3]
    local s = P.summarize(q[pname])
    local dev = squared_deviations(q[pname], s.mean)
    local ess_v = P.ess_mean(dev)
    local all = {}
    for _, ch in ipairs(dev) do for _, v in ipairs(ch) do all[#all + 1] = v end end
    local _, var_v = 0, 0
    do
      local mv = 0
      for _, v in ipairs(all) do mv = mv + v end
      mv = mv / #all
      for _, v in ipairs(all) do var_v = var_v + (v - mv) ^ 2 end
      var_v = var_v / (#all - 1)
    end
    local se_sd = math.sqrt(var_v / ess_v + var_v / nref) / (2 * s.sd)
    local zm = (s.mean - mref) / math.sqrt(s.mcse ^ 2 + sref ^ 2 / nref)
    local zs = (s.sd - sref) / se_sd
    if math.abs(zm) > math.abs(worst_m) then worst_m, worst_name = zm, pname end
    if math.abs(zs) > math.abs(worst_s) then worst_s = zs end
    min_ess = math.min(min_ess, s.ess_bulk)
    max_rhat = math.max(max_rhat, s.rhat)
  end
  local div = 0
  for c = 1, fit.chains do for _, v in ipairs(fit.stats[c].divergent) do div = div + v end end
  local ok = math.abs(worst_m) <= 4 and math.abs(worst_s) <= 4 and max_rhat <= 1.05
  print(fmt("%-40s %3d params  max|z| mean %4.2f (%s)  sd %4.2f  R-hat %5.3f  ESS_bulk %5.0f  div %d  %6.1f s  %s",
    name, #model.reference, math.abs(worst_m), worst_name, math.abs(worst_s), max_rhat, min_ess, div, secs,
    ok and "ok" or "FAIL"))
  return ok
end

local pass = 0
for _, name in ipairs(names) do
  if check(name) then pass = pass + 1 end
end
print(fmt("%d of %d posteriors pass (%d chains x %d draws, |z| <= 4 on means and sds)", pass, #names, chains, iter))
if pass < #names then os.exit(1) end
