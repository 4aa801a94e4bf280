-- SPDX-License-Identifier: MIT
-- hmc_adapt: warmup's adaptation as Stan does it (stan/mcmc/): the initial
-- step size heuristic, dual averaging of the step size (Hoffman & Gelman
-- 2014, Algorithm 6), and the windowed metric adaptation (an initial buffer,
-- windows that double, a terminal buffer).

local M = {}
local log, exp, sqrt, floor = math.log, math.exp, math.sqrt, math.floor
local N = require "mplua.hmc_nuts"

-- Stan's init_stepsize: from z, double or halve S.eps until the energy
-- change of one leapfrog step (fresh momentum each time) crosses log(0.8).
function M.init_stepsize(S, z)
  if S.eps == 0 or S.eps > 1e7 or S.eps ~= S.eps then return end
  local function delta()
    local z0 = N.momentum(S, z)
    local z1 = N.leapfrog(S, z0, S.eps)
    return N.hamiltonian(S, z0) - N.hamiltonian(S, z1) -- never nan: hamiltonian maps nan to inf
  end
  local target = log(0.8)
  local up = delta() > target
  while true do
    local d = delta()
    if up and not (d > target) or not up and not (d < target) then break end
    S.eps = up and 2 * S.eps or 0.5 * S.eps
    if S.eps > 1e7 then
      error(("hmc.sample: chain %d: the step size grew past 1e7 while initializing it: the posterior is improper; please check the model"):format(S.chain), 0)
    end
    if S.eps == 0 then
      error(("hmc.sample: chain %d: the step size fell to 0 while initializing it: please check the model"):format(S.chain), 0)
    end
  end
end

-- Dual averaging on log(eps), with Stan's constants as options.
function M.dual_averaging(o)
  local delta, gamma, kappa, t0 = o.adapt_delta, o.adapt_gamma, o.adapt_kappa, o.adapt_t0
  local D = {}
  function D.restart(eps)
    D.mu, D.count, D.s_bar, D.x_bar = log(10 * eps), 0, 0, 0
  end
  function D.learn(accept)
    D.count = D.count + 1
    if accept > 1 then accept = 1 end
    local eta = 1 / (D.count + t0)
    D.s_bar = (1 - eta) * D.s_bar + eta * (delta - accept)
    local x = D.mu - D.s_bar * sqrt(D.count) / gamma
    local w = D.count ^ -kappa
    D.x_bar = (1 - w) * D.x_bar + w * x
    return exp(x)
  end
  function D.final() return exp(D.x_bar) end
  return D
end

-- Stan's windowed_adaptation: learn(q) at each warmup iteration (q the
-- draw) returns true at the end of a window (the estimator is then due).
-- With fewer than 20 warmup iterations no window opens; when the three
-- stages do not fit, they shrink to 15% / 75% / 10% of warmup. warns
-- collects the messages Stan prints about it.
function M.windows(o, warmup, warns)
  local init, term, base = o.adapt_init_buffer, o.adapt_term_buffer, o.adapt_window
  local W = {}
  if warmup < 20 then
    warns[#warns + 1] = "No metric estimation is performed for num_warmup < 20"
    function W.learn() return false end
    function W.in_window() return false end
    return W
  end
  if init + base + term > warmup then
    warns[#warns + 1] = ("There aren't enough warmup iterations to fit the three stages of adaptation as "
      .. "configured; reducing each stage to 15%%/75%%/10%% of the given number of warmup iterations "
      .. "(init_buffer = %d, adapt_window = %d, term_buffer = %d)"):format(
        floor(0.15 * warmup), warmup - floor(0.15 * warmup) - floor(0.1 * warmup), floor(0.1 * warmup))
    init, term = floor(0.15 * warmup), floor(0.1 * warmup)
    base = warmup - (init + term)
  end
  local counter, size, next_end = 0, base, init + base - 1
  local function next_window()
    if next_end == warmup - term - 1 then return end
    size = 2 * size
    next_end = counter + size
    if next_end ~= warmup - term - 1 and next_end + 2 * size >= warmup - term then
      next_end = warmup - term - 1
    end
  end
  function W.in_window()
    return counter >= init and counter < warmup - term and counter ~= warmup
  end
  function W.learn()
    local done = counter == next_end and counter ~= warmup
    if done then next_window() end
    counter = counter + 1
    return done
  end
  return W
end

return M
