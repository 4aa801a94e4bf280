-- SPDX-License-Identifier: MIT
-- hmc_generate: generated quantities, as Stan's generated quantities block
-- (and CmdStan's standalone generate_quantities): a function run on each
-- kept draw of a fit with the _rng functions' generator seeded from the
-- seed, the chain and the draw, so the values are the same bits whichever
-- rank computes them; chain c's draws go to rank (c - 1) % mp.size.
--
--   hmc.sample(lpg, x0, {chains = 4, generated_quantities = function(x, c, t)
--     local p = m:unpack(x)
--     return {y_rep = ad.normal_rng(p.mu, p.sigma), mu2 = p.mu ^ 2}
--   end})
--   fit = hmc.generate(fit, f, {seed = 1})  -- on an existing fit
--
-- f(x, chain, draw) gets a draw (the unconstrained numbers) and returns a
-- list of numbers, or a table of named values: numbers, lists, ad.Consts
-- (a matrix's elements column-major, named "name[i,j]"), the names sorted.
-- The values are stored with the draws: fit.generated[c][t] (a list of
-- numbers) named fit.generated_names (opts.names overrides), and with
-- save_warmup fit.warmup_generated[c][t].

local M = {}
local fmt = string.format

-- a value's numbers and their names (appended to nums, names)
local function flatten(v, name, nums, names)
  if type(v) == "number" then
    nums[#nums + 1], names[#names + 1] = v, name
    return
  end
  local mt = getmetatable(v)
  if type(v) == "userdata" and mt and mt.__name == "ad.Var" then
    nums[#nums + 1], names[#names + 1] = ad.value(v), name
    return
  end
  local rows, cols
  if type(v) == "userdata" and v.dims then rows, cols = v:dims() end
  if type(v) ~= "table" and type(v) ~= "userdata" then
    error(fmt("hmc.generate: %s is a %s, expected numbers", name, type(v)), 0)
  end
  for i = 1, #v do
    local sub = cols and fmt("%s[%d,%d]", name, (i - 1) % rows + 1, (i - 1) // rows + 1) or fmt("%s[%d]", name, i)
    local e = v[i]
    if type(e) == "table" then flatten(e, sub, nums, names)
    else
      if type(e) ~= "number" then e = ad.value(e) end
      nums[#nums + 1], names[#names + 1] = e, sub
    end
  end
end

-- the numbers of one result and their names
local function collect(r)
  local nums, names = {}, {}
  if type(r) ~= "table" then error(fmt("hmc.generate: the function must return a table, got %s", type(r)), 0) end
  if #r > 0 or next(r) == nil then
    for i = 1, #r do
      local v = r[i]
      if type(v) ~= "number" then v = ad.value(v) end
      nums[i], names[i] = v, fmt("gq[%d]", i)
    end
    return nums, names
  end
  local keys = {}
  for k in pairs(r) do
    if type(k) ~= "string" then error("hmc.generate: a result's keys must all be names (or it must be a list)", 0) end
    keys[#keys + 1] = k
  end
  table.sort(keys)
  for _, k in ipairs(keys) do flatten(r[k], k, nums, names) end
  return nums, names
end

-- one chain's quantities: list of lists, and their names
function M._chain(f, draws, seed, c, sign)
  local out, names = {}, nil
  for t, x in ipairs(draws) do
    ad.rng_seed(seed, c, sign * t)
    local nums, nm = collect(f(x, c, t))
    if not names then names = nm
    elseif #nm ~= #names then
      error(fmt("hmc.generate: chain %d draw %d gave %d values, the first draw %d", c, t, #nm, #names), 0)
    end
    out[t] = nums
  end
  return out, names or {}
end

local function task(f, fit_draws, fit_wdraws, seed, nchains)
  local G = require "mplua.hmc_generate"
  local mine = {}
  for c = mp.rank + 1, nchains, mp.size do
    local g, names = G._chain(f, fit_draws[c], seed, c, 1)
    local wg = fit_wdraws and G._chain(f, fit_wdraws[c], seed, c, -1)
    mine[#mine + 1] = {c = c, g = g, wg = wg, names = names}
  end
  local all = mp.gather(mine, 0)
  if mp.rank == 0 then return all end
end

-- Adds the quantities to fit (in place) and returns it.
function M.generate(fit, f, opts)
  opts = opts or {}
  local mt = getmetatable(f)
  if type(f) ~= "function" and not (type(mt) == "table" and mt.__call) then
    error(fmt("bad argument #2 to 'hmc.generate' (function expected, got %s)", type(f)), 2)
  end
  if type(fit) ~= "table" or not fit.draws then error("bad argument #1 to 'hmc.generate' (a fit expected)", 2) end
  local seed = math.tointeger(opts.seed or fit.options and fit.options.seed or 20240101)
  if not seed then error("bad argument #3 to 'hmc.generate' (opts.seed must be an integer)", 2) end
  local C = require "mplua.hmc_chains"
  local results
  if C.over_ranks(opts.parallel, fit.chains) then
    C.check_shippable(f, "hmc.generate", 3)
    local all = mp.exec(task, f, fit.draws, fit.warmup_draws, seed, fit.chains)
    results = {}
    for _, r in ipairs(all) do for _, ch in ipairs(r) do results[#results + 1] = ch end end
  else
    results = {}
    for c = 1, fit.chains do
      local g, names = M._chain(f, fit.draws[c], seed, c, 1)
      local wg = fit.warmup_draws and M._chain(f, fit.warmup_draws[c], seed, c, -1)
      results[#results + 1] = {c = c, g = g, wg = wg, names = names}
    end
  end
  fit.generated = {}
  if fit.warmup_draws then fit.warmup_generated = {} end
  for _, r in ipairs(results) do
    fit.generated[r.c] = r.g
    if fit.warmup_generated then fit.warmup_generated[r.c] = r.wg end
    fit.generated_names = fit.generated_names or r.names
  end
  if opts.names then
    if #opts.names ~= #(fit.generated_names or {}) then
      error(fmt("hmc.generate: %d names given for %d quantities", #opts.names, #(fit.generated_names or {})), 2)
    end
    fit.generated_names = opts.names
  end
  return fit
end

return M
