-- SPDX-License-Identifier: MIT
-- hmc_csv: a fit written as CmdStan writes its sampler output (the Stan CSV
-- format), so stansummary, cmdstanpy's from_csv and ArviZ's from_cmdstan
-- read it: "#" lines with the configuration, the header (lp__,
-- accept_stat__, stepsize__, treedepth__, n_leapfrog__, divergent__,
-- energy__, the parameters with CmdStan's names theta.1, L.2.1, then the
-- generated quantities), the warmup draws when saved, the adaptation
-- ("# Adaptation terminated", the step size, the inverse metric), the
-- draws, the elapsed times.
--
--   local paths = hmc.write_csv(fit, "out.csv")   -- out_1.csv ... one per chain
--   hmc.write_csv(draws, info, "one.csv")          -- a single chain
--
-- opts.sig_figs: significant digits (CmdStan's default: 6; up to 18).

local M = {}
local fmt = string.format

-- "theta[2,3]" -> "theta.2.3"
local function csv_name(n)
  return (n:gsub("%[(.-)%]", function(idx) return "." .. idx:gsub("%s*,%s*", ".") end))
end
M.csv_name = csv_name

local function number(v, f)
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
  if math.type(v) == "integer" then return tostring(v) end
  return (fmt(f, v))
end

local function config_lines(fit, c, o, path, sig)
  local alg = fit.algorithm or "nuts"
  local L = {}
  local function add(depth, key, val, default)
    L[#L + 1] = fmt("#%s%s%s%s", string.rep(" ", 2 * depth + 1), key,
                    val == nil and "" or " = " .. tostring(val), default and " (Default)" or "")
  end
  add(0, "stan_version_major", 2); add(0, "stan_version_minor", 36); add(0, "stan_version_patch", 0)
  add(0, "model", fit.model or "mplua_model")
  add(0, "method", "sample", true)
  add(1, "sample")
  add(2, "num_samples", o.num_samples or fit.num_samples or fit.n, o.num_samples == 1000)
  add(2, "num_warmup", fit.warmup, fit.warmup == 1000)
  add(2, "save_warmup", fit.warmup_draws and 1 or 0, not fit.warmup_draws)
  add(2, "thin", fit.thin or 1, (fit.thin or 1) == 1)
  add(2, "adapt")
  add(3, "engaged", o.adapt_engaged == false and 0 or 1, o.adapt_engaged ~= false)
  add(3, "gamma", o.adapt_gamma or 0.05, true)
  add(3, "delta", o.adapt_delta or 0.8, (o.adapt_delta or 0.8) == 0.8)
  add(3, "kappa", o.adapt_kappa or 0.75, true)
  add(3, "t0", o.adapt_t0 or 10, true)
  add(3, "init_buffer", o.adapt_init_buffer or 75, true)
  add(3, "term_buffer", o.adapt_term_buffer or 50, true)
  add(3, "window", o.adapt_window or 25, true)
  add(3, "save_metric", 0, true)
  if alg == "fixed_param" then
    add(2, "algorithm", "fixed_param")
  else
    add(2, "algorithm", "hmc", true)
    add(3, "hmc")
    add(4, "engine", alg == "hmc" and "static" or "nuts", alg ~= "hmc")
    if alg == "hmc" then
      add(5, "static")
      add(6, "int_time", o.int_time or (o.steps or 10) * (fit.info[c].step or 1))
    else
      add(5, "nuts")
      add(6, "max_depth", o.max_depth or 10, (o.max_depth or 10) == 10)
    end
    add(4, "metric", fit.info[c].metric or o.metric or "diag_e", (o.metric or "diag_e") == "diag_e")
    add(4, "metric_file", "", true)
    add(4, "stepsize", o.stepsize or 1, o.stepsize == nil)
    add(4, "stepsize_jitter", o.stepsize_jitter or 0, (o.stepsize_jitter or 0) == 0)
  end
  add(2, "num_chains", 1, true)
  add(0, "id", c)
  add(0, "data")
  add(1, "file", "", true)
  add(0, "init", o.init_radius or 2, (o.init_radius or 2) == 2)
  add(0, "random")
  add(1, "seed", fit.seeds and fit.seeds[c] or o.seed or 0)
  add(0, "output")
  add(1, "file", path)
  add(1, "diagnostic_file", "", true)
  add(1, "refresh", o.refresh or 100, o.refresh == nil)
  add(1, "sig_figs", sig, sig == -1)
  add(1, "profile_file", "profile.csv", true)
  add(1, "save_cmdstan_config", 0, true)
  add(0, "num_threads", 1, true)
  add(0, "stanc_version", "mplua")
  add(0, "stancflags", "")
  return L
end

local STATS = {"lp", "accept_stat", "stepsize", "treedepth", "n_leapfrog", "divergent", "energy"}

local function write_chain(fit, c, path, sig)
  local o = fit.options or {}
  local f = fmt("%%.%dg", sig == -1 and 6 or sig)
  local fixed = fit.algorithm == "fixed_param"
  local stats = fixed and {"lp", "accept_stat"} or STATS
  local out = config_lines(fit, c, o, path, sig)
  local head = {}
  for _, s in ipairs(stats) do head[#head + 1] = s .. "__" end
  for _, n in ipairs(fit.names) do head[#head + 1] = csv_name(n) end
  for _, n in ipairs(fit.generated_names or {}) do head[#head + 1] = csv_name(n) end
  out[#out + 1] = table.concat(head, ",")
  local function rows(draws, st, gen)
    for t, d in ipairs(draws) do
      local r = {}
      for _, s in ipairs(stats) do r[#r + 1] = number(st[s][t], f) end
      for i = 1, #d do r[#r + 1] = number(d[i], f) end
      for _, v in ipairs(gen and gen[t] or {}) do r[#r + 1] = number(v, f) end
      out[#out + 1] = table.concat(r, ",")
    end
  end
  if fit.warmup_draws then
    rows(fit.warmup_draws[c], fit.warmup_stats[c], fit.warmup_generated and fit.warmup_generated[c])
  end
  local inf = fit.info[c] or {}
  if not fixed then
    out[#out + 1] = "# Adaptation terminated"
    out[#out + 1] = "# Step size = " .. number(inf.step or 0, f)
    local minv = inf.inv_metric
    if inf.metric == "dense_e" then
      out[#out + 1] = "# Elements of inverse mass matrix:"
      for i = 1, #minv do
        local r = {}
        for j = 1, #minv[i] do r[j] = number(minv[i][j], f) end
        out[#out + 1] = "# " .. table.concat(r, ", ")
      end
    elseif inf.metric ~= "unit_e" then
      out[#out + 1] = "# Diagonal elements of inverse mass matrix:"
      local r = {}
      for i = 1, #minv do r[i] = number(minv[i], f) end
      out[#out + 1] = "# " .. table.concat(r, ", ")
    end
  end
  rows(fit.draws[c], fit.stats[c], fit.generated and fit.generated[c])
  local tw, ts = inf.time_warmup or 0, inf.time_sampling or 0
  out[#out + 1] = "# "
  out[#out + 1] = fmt("#  Elapsed Time: %g seconds (Warm-up)", tw)
  out[#out + 1] = fmt("#                %g seconds (Sampling)", ts)
  out[#out + 1] = fmt("#                %g seconds (Total)", tw + ts)
  out[#out + 1] = "# "
  local fh, err = io.open(path, "w")
  if not fh then error("hmc.write_csv: " .. tostring(err), 0) end
  fh:write(table.concat(out, "\n"), "\n")
  fh:close()
end

-- write(fit, path [, opts]) or write(draws, info, path [, opts])
function M.write(fit, path, opts, extra)
  if type(fit) == "table" and not fit.chains and type(path) == "table" then
    local D = require "mplua.hmc_diagnose"
    local f1 = D.as_fit(fit, path)
    f1.generated = path.generated and {path.generated}
    f1.warmup_generated = path.warmup_generated and {path.warmup_generated}
    f1.generated_names = path.generated_names
    f1.algorithm, f1.options, f1.model = path.algorithm, path.options, path.model
    f1.warmup, f1.thin = path.warmup or 0, path.options and path.options.thin
    f1.num_samples = path.options and path.options.num_samples
    fit, path, opts = f1, opts, extra
  end
  if type(fit) ~= "table" or not fit.draws then error("bad argument #1 to 'hmc.write_csv' (a fit expected)", 3) end
  if type(path) ~= "string" then error("bad argument #2 to 'hmc.write_csv' (a file path expected)", 3) end
  opts = opts or {}
  local sig = opts.sig_figs or -1
  if not (math.tointeger(sig) and (sig == -1 or sig >= 1 and sig <= 18)) then
    error("bad argument #3 to 'hmc.write_csv' (sig_figs must be -1 or an integer in 1..18)", 3)
  end
  if fit.chains == 1 then
    write_chain(fit, 1, path, sig)
    return {path}
  end
  local stem = path:gsub("%.csv$", "")
  local paths = {}
  for c = 1, fit.chains do
    paths[c] = fmt("%s_%d.csv", stem, c)
    write_chain(fit, c, paths[c], sig)
  end
  return paths
end

return M
