-- SPDX-License-Identifier: MIT
-- hmc_diagnose: the checks of CmdStan's `diagnose` on a fit: transitions
-- that hit the maximum tree depth, divergences, the E-BFMI of each chain,
-- and (with two or more chains) effective sample sizes and split R-hat.
--
--   local D = require "mplua.hmc_diagnose"
--   local r = D.check(fit)   -- {treedepth_hits, divergent, total, ebfmi = {...}, warnings = {...}, ...}
--   print(D.text(fit))       -- as CmdStan's diagnose prints it
--
-- E-BFMI of a chain (energies E_1..E_N): sum (E_n - E_n-1)^2 / sum (E_n - mean E)^2,
-- a warning below 0.3. Split R-hat above 1.01 and ESS_bulk or ESS_tail below
-- 100 per chain are reported (Vehtari et al. 2021's recommendations).

local M = {}
local fmt = string.format

M.EBFMI_THRESHOLD = 0.3
M.RHAT_THRESHOLD = 1.01
M.ESS_PER_CHAIN = 100

function M.ebfmi(energy)
  local n = #energy
  if n < 2 then return 0 / 0 end
  local mean = 0
  for i = 1, n do mean = mean + energy[i] end
  mean = mean / n
  local num, den = 0, 0
  for i = 1, n do
    den = den + (energy[i] - mean) ^ 2
    if i > 1 then num = num + (energy[i] - energy[i - 1]) ^ 2 end
  end
  return num / den
end

-- A single chain's draws and info as a one-chain fit.
function M.as_fit(draws, info)
  local names = {}
  for i = 1, #(draws[1] or {}) do names[i] = ("x[%d]"):format(i) end
  return {chains = 1, n = #draws, draws = {draws}, stats = {info.stats}, info = {info}, names = names,
          dim = #names, algorithm = info.algorithm, warmup = 0,
          warmup_draws = info.warmup_draws and {info.warmup_draws}, warmup_stats = info.warmup_stats and {info.warmup_stats}}
end

function M.check(fit)
  local r = {treedepth_hits = 0, divergent = 0, total = 0, ebfmi = {}, low_ebfmi = {}, warnings = {},
             low_ess = {}, high_rhat = {}, max_depth = fit.info[1] and fit.info[1].max_depth or 10}
  if fit.algorithm == "fixed_param" then return r end
  for c = 1, fit.chains do
    local st = fit.stats[c]
    for t = 1, #st.divergent do
      r.total = r.total + 1
      r.divergent = r.divergent + st.divergent[t]
      if fit.algorithm ~= "hmc" and st.treedepth[t] >= r.max_depth then r.treedepth_hits = r.treedepth_hits + 1 end
    end
    r.ebfmi[c] = M.ebfmi(st.energy)
    if r.ebfmi[c] < M.EBFMI_THRESHOLD then r.low_ebfmi[#r.low_ebfmi + 1] = c end
  end
  local W = r.warnings
  if r.treedepth_hits > 0 then
    W[#W + 1] = fmt("%d of %d (%.2f%%) transitions hit the maximum treedepth limit of %d, or 2^%d leapfrog steps",
      r.treedepth_hits, r.total, 100 * r.treedepth_hits / r.total, r.max_depth, r.max_depth)
  end
  if r.divergent > 0 then
    W[#W + 1] = fmt("%d of %d (%.2f%%) transitions ended with a divergence", r.divergent, r.total,
      100 * r.divergent / r.total)
  end
  for _, c in ipairs(r.low_ebfmi) do
    W[#W + 1] = fmt("chain %d: E-BFMI = %.3g, below the nominal threshold of %.2f", c, r.ebfmi[c], M.EBFMI_THRESHOLD)
  end
  if fit.chains >= 2 and fit.n >= 4 then
    local P = require "mplua.posterior"
    local C = require "mplua.hmc_chains"
    for i = 1, fit.dim do
      local s = P.summarize(C.column(fit, i))
      if s.rhat == s.rhat and s.rhat > M.RHAT_THRESHOLD then r.high_rhat[#r.high_rhat + 1] = {fit.names[i], s.rhat} end
      local e = math.min(s.ess_bulk, s.ess_tail)
      if e == e and e < M.ESS_PER_CHAIN * fit.chains then r.low_ess[#r.low_ess + 1] = {fit.names[i], e} end
    end
    if #r.high_rhat > 0 then
      W[#W + 1] = fmt("%d parameters had split R-hat greater than %.2f (worst %s: %.3f)", #r.high_rhat,
        M.RHAT_THRESHOLD, r.high_rhat[1][1], r.high_rhat[1][2])
    end
    if #r.low_ess > 0 then
      W[#W + 1] = fmt("%d parameters had ESS_bulk or ESS_tail below %d (%d per chain; worst %s: %.0f)",
        #r.low_ess, M.ESS_PER_CHAIN * fit.chains, M.ESS_PER_CHAIN, r.low_ess[1][1], r.low_ess[1][2])
    end
  end
  return r
end

-- The report as CmdStan's diagnose words it.
function M.text(fit)
  local r = M.check(fit)
  local out = {}
  local function line(...) out[#out + 1] = fmt(...) end
  line("Checking sampler transitions treedepth.")
  if r.treedepth_hits == 0 then line("Treedepth satisfactory for all transitions.")
  else
    line("%d of %d (%.2f%%) transitions hit the maximum treedepth limit of %d, or 2^%d leapfrog steps.",
      r.treedepth_hits, r.total, 100 * r.treedepth_hits / r.total, r.max_depth, r.max_depth)
    line("Trajectories that are prematurely terminated due to this limit will result in slow exploration.")
    line("For optimal performance, increase this limit.")
  end
  line("")
  line("Checking sampler transitions for divergences.")
  if r.divergent == 0 then line("No divergent transitions found.")
  else
    line("%d of %d (%.2f%%) transitions ended with a divergence.", r.divergent, r.total, 100 * r.divergent / r.total)
    line("These divergent transitions indicate that HMC is not fully able to explore the posterior distribution.")
    line("Try increasing adapt delta closer to 1.")
    line("If this doesn't remove all divergences, try to reparameterize the model.")
  end
  line("")
  line("Checking E-BFMI - sampler transitions HMC potential energy.")
  if #r.low_ebfmi == 0 then line("E-BFMI satisfactory.")
  else
    for _, c in ipairs(r.low_ebfmi) do
      line("The E-BFMI, %.2f, of chain %d is below the nominal threshold of %.2f which suggests that HMC may have trouble exploring the target distribution.",
        r.ebfmi[c], c, M.EBFMI_THRESHOLD)
    end
    line("If possible, try to reparameterize the model.")
  end
  line("")
  if fit.chains >= 2 then
    if #r.low_ess == 0 then line("Effective sample size satisfactory.")
    else
      line("The following parameters had ESS_bulk or ESS_tail below %d (%d per chain):", M.ESS_PER_CHAIN * fit.chains, M.ESS_PER_CHAIN)
      for _, p in ipairs(r.low_ess) do line("  %s", p[1]) end
      line("Such low values indicate that the effective sample size estimators may be biased high and actual performance may be substantially lower than quoted.")
    end
    line("")
    if #r.high_rhat == 0 then line("Split R-hat values satisfactory all parameters.")
    else
      line("The following parameters had split R-hat greater than %.2f:", M.RHAT_THRESHOLD)
      for _, p in ipairs(r.high_rhat) do line("  %s", p[1]) end
      line("Such high values indicate incomplete mixing and biased estimation.")
      line("You should consider regularizating your model with additional prior information or a more effective parameterization.")
    end
    line("")
  end
  line(#r.warnings == 0 and "Processing complete, no problems detected." or "Processing complete.")
  return table.concat(out, "\n"), r
end

return M
