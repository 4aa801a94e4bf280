-- SPDX-License-Identifier: MIT
-- hmc_options: the options of hmc.sample, checked against one table. Stan's
-- names (CmdStan's `sample` arguments) are the canonical ones; the short
-- names mplua had first are aliases. An option Stan has that mplua does
-- not implement is refused by name with what to do instead; an unknown name
-- is an error that suggests the nearest known one.
--
--   local O = require "mplua.hmc_options"
--   local o = O.check(opts, "hmc.sample", 3, level)   -- canonical names, defaults filled

local M = {}
local fmt = string.format
local huge = math.huge

local function int_ge(lo)
  return function(v) return math.tointeger(v) ~= nil and v >= lo end, fmt("an integer >= %d", lo)
end
local function num_in(lo, hi, open_lo, open_hi)
  local what = fmt("a number in %s%s, %s%s", open_lo and "(" or "[", tostring(lo), tostring(hi), open_hi and ")" or "]")
  return function(v)
    return type(v) == "number" and v == v and (open_lo and v > lo or not open_lo and v >= lo)
      and (open_hi and v < hi or not open_hi and v <= hi)
  end, what
end
local function oneof(...)
  local set, list = {}, {...}
  for _, s in ipairs(list) do set[s] = true end
  return function(v) return set[v] == true end, "one of \"" .. table.concat(list, "\", \"") .. "\""
end
local function boolean() return function(v) return type(v) == "boolean" end, "a boolean" end
local function any(what, f) return f, what end

-- name -> {check, what, default}; defaults that depend on others are nil here
local SPEC = {}
local function opt(name, default, check, what) SPEC[name] = {check = check, what = what, default = default} end
opt("num_samples", 1000, int_ge(0))
opt("num_warmup", nil, int_ge(0))              -- default: num_samples
opt("save_warmup", false, boolean())
opt("thin", 1, int_ge(1))
opt("seed", 20240101, any("an integer", function(v) return math.tointeger(v) ~= nil end))
opt("algorithm", "nuts", oneof("nuts", "hmc", "static", "fixed_param"))
opt("max_depth", 10, int_ge(1))
opt("metric", "diag_e", oneof("diag_e", "dense_e", "unit_e", "diag", "dense", "unit"))
opt("inv_metric", nil, any("a list of positive numbers (diag_e) or a table of rows (dense_e)",
                           function(v) return type(v) == "table" end))
opt("stepsize", nil, num_in(0, huge, true, true))
opt("stepsize_jitter", nil, num_in(0, 1))      -- default 0 (nuts), 0.5 (static hmc)
opt("int_time", nil, num_in(0, huge, true, true))
opt("steps", nil, int_ge(1))                   -- static hmc: leapfrog steps (10 unless int_time)
opt("adapt_engaged", true, boolean())
opt("adapt_metric", true, boolean())
opt("adapt_delta", 0.8, num_in(0, 1, true, true))
opt("adapt_gamma", 0.05, num_in(0, huge, true, true))
opt("adapt_kappa", 0.75, num_in(0, huge, true, true))
opt("adapt_t0", 10, num_in(0, huge, true, true))
opt("adapt_init_buffer", 75, int_ge(0))
opt("adapt_term_buffer", 50, int_ge(0))
opt("adapt_window", 25, int_ge(0))
opt("init_radius", 2, num_in(0, huge, false, true))
opt("refresh", 0, int_ge(0))
opt("chains", nil, int_ge(1))
opt("parallel", true, boolean())
opt("names", nil, any("a list of strings", function(v) return type(v) == "table" end))
opt("generated_quantities", nil, any("a function", function(v)
  local mt = getmetatable(v)
  return type(v) == "function" or type(mt) == "table" and mt.__call ~= nil
end))
opt("generated_names", nil, any("a list of strings", function(v) return type(v) == "table" end))
opt("model", nil, any("a string", function(v) return type(v) == "string" end))

M.SPEC = SPEC

-- mplua's first names for Stan's options
local ALIAS = {n = "num_samples", warmup = "num_warmup", step = "stepsize", jitter = "stepsize_jitter",
               target_accept = "adapt_delta", adapt = "adapt_engaged", num_chains = "chains"}
M.ALIAS = ALIAS

-- Stan's options mplua does not take, and what to do instead
local REFUSED = {
  init = "pass the start point as argument 2 (x0); init_radius sets the range of random retries",
  metric_file = "pass the inverse metric itself as inv_metric",
  save_metric = "the adapted metric is in info.inv_metric (fit.info[c].inv_metric); hmc.write_csv writes it",
  sig_figs = "it is an option of hmc.write_csv(fit, path, {sig_figs = n})",
  output_file = "write the fit with hmc.write_csv(fit, path)",
  output = "write the fit with hmc.write_csv(fit, path)",
  file = "write the fit with hmc.write_csv(fit, path)",
  diagnostic_file = "mplua does not write the unconstrained draws' gradients; use hmc.write_csv(fit, path)",
  profile_file = "mplua does not profile models; time ad.grad calls with mp.wtime",
  num_threads = "chains run over mp ranks (opts.chains with mpiexec -n N), not threads",
  id = "chains are numbered 1..chains; chain c's seed derives from opts.seed and c",
  data = "a model's data are the upvalues of logp_grad",
  engine = "choose with algorithm = \"nuts\" or \"hmc\" (static integration time)",
  adapt_save_metric = "the adapted metric is in info.inv_metric",
  sampler = "choose with algorithm = \"nuts\", \"hmc\" or \"fixed_param\"",
  method = "hmc.sample samples; optim.lbfgs optimizes; laplace.laplace_sample draws a Laplace approximation",
}
M.REFUSED = REFUSED

-- edit distance with transpositions (optimal string alignment), for "did you mean"
local function distance(a, b)
  local d = {}
  for i = 0, #a do d[i] = {[0] = i} end
  for j = 0, #b do d[0][j] = j end
  for i = 1, #a do
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      local v = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 and j > 1 and a:byte(i) == b:byte(j - 1) and a:byte(i - 1) == b:byte(j) then
        v = math.min(v, d[i - 2][j - 2] + 1)
      end
      d[i][j] = v
    end
  end
  return d[#a][#b]
end

local function suggest(name)
  local best, bd = nil, huge
  local function try(k)
    local d = distance(name, k)
    if d < bd or d == bd and k < best then best, bd = k, d end
  end
  for k in pairs(SPEC) do try(k) end
  for k in pairs(ALIAS) do try(k) end
  if best and bd <= math.max(2, #name // 3) then return fmt("; did you mean '%s'?", best) end
  return ""
end

-- Checks opts (a table or nil) for function fname, argument arg; errors at
-- `level` (as error()'s level, counted from the caller of check). Returns a
-- new table under canonical names with every default filled in.
function M.check(opts, fname, arg, level)
  level = (level or 1) + 2 -- counted from fail()
  local function fail(msg) error(fmt("bad argument #%d to '%s' (%s)", arg, fname, msg), level) end
  if opts ~= nil and type(opts) ~= "table" then fail(fmt("table of options expected, got %s", type(opts))) end
  local o = {}
  for k, v in pairs(opts or {}) do
    if type(k) ~= "string" then fail(fmt("option names are strings, got %s %s", type(k), tostring(k))) end
    local name = ALIAS[k] or k
    if REFUSED[k] then fail(fmt("option '%s' is not supported: %s", k, REFUSED[k])) end
    local s = SPEC[name]
    if not s then fail(fmt("unknown option '%s'%s", k, suggest(k))) end
    if o[name] ~= nil then fail(fmt("option '%s' given twice (as '%s' and '%s')", name, name, k)) end
    if not s.check(v) then
      fail(fmt("option '%s' must be %s, got %s", k, s.what, type(v) == "string" and fmt("%q", v) or tostring(v)))
    end
    o[name] = v
  end
  for name, s in pairs(SPEC) do if o[name] == nil then o[name] = s.default end end
  o.seed = math.tointeger(o.seed)
  if o.num_warmup == nil then o.num_warmup = o.num_samples end
  local short = {diag = "diag_e", dense = "dense_e", unit = "unit_e"}
  o.metric = short[o.metric] or o.metric
  if o.algorithm == "static" then o.algorithm = "hmc" end
  if o.steps and o.int_time then fail("options 'steps' and 'int_time' both fix the static trajectory: give one") end
  if o.algorithm == "nuts" and (o.steps or o.int_time) then
    fail(fmt("option '%s' is for algorithm = \"hmc\" (static integration time)", o.steps and "steps" or "int_time"))
  end
  if o.stepsize_jitter == nil then o.stepsize_jitter = o.algorithm == "hmc" and 0.5 or 0 end
  if o.algorithm == "hmc" and not o.int_time then o.steps = o.steps or 10 end
  return o
end

return M
