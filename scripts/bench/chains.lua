-- SPDX-License-Identifier: MIT
-- Multi-chain sampling over ranks: hmc.sample with 4 chains spread over the
-- ranks (chain c on rank (c-1) % P) against the same 4 chains run one after
-- the other on rank 0 (parallel = false), in the same job, rounds
-- alternating; medians and the speedup S = T_serial / T_ranks (floor 1.7x
-- at 2 ranks, goal 1.9x). The draws are checked to be bitwise the same.
-- The model: a logistic regression, 2000 rows x 6 covariates.
-- Run: mpiexec -n 2 build/mplua scripts/bench/chains.lua [rounds] [draws]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local hmc = require("mplua.hmc")
local rounds = tonumber(arg and arg[1]) or 5
local DRAWS = tonumber(arg and arg[2]) or 200
local N, K, CHAINS = 2000, 6, 4

local X, y, seed = mp.array("f64", N, K), mp.array("f64", N), 11
local function u() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
for i = 1, N do
  local eta = 0
  for k = 1, K do
    local x = k == 1 and 1 or 2 * u() - 1
    X:set(i, k, x)
    eta = eta + x * (k % 3 - 1) * 0.7
  end
  y[i] = u() < 1 / (1 + math.exp(-eta)) and 1 or 0
end
local function logp(beta)
  return ad.bernoulli_logit_lpmf(y, ad.matvec(X, beta)) + ad.normal_lpdf(beta, 0, 2)
end
local function lpg(b) return ad.grad(logp, b) end
local x0 = {0, 0, 0, 0, 0, 0}
local function run(parallel)
  return hmc.sample(lpg, x0, {chains = CHAINS, n = DRAWS, warmup = DRAWS, seed = 5, parallel = parallel})
end

local a, b = run(true), run(false)
for c = 1, CHAINS do
  for t = 1, DRAWS do assert(a.draws[c][t][2] == b.draws[c][t][2], "draws differ") end
end
local grads = 0
for c = 1, CHAINS do grads = grads + b.info[c].n_leapfrog end

local function timed(parallel)
  return function()
    local t = mp.wtime()
    run(parallel)
    return mp.wtime() - t
  end
end
-- the fastest round of each too: on a shared machine rounds get preempted
local best = {}
local function tracked(name, f)
  return name, function() local v = f(); best[name] = math.min(best[name] or math.huge, v); return v end
end
local med = C.interleave(rounds, {{tracked("serial", timed(false))}, {tracked("ranks", timed(true))}})
local S = med.serial / med.ranks
print(("%d chains x (%d warmup + %d draws), logistic regression %d x %d (%d gradients in all), %d ranks, %d rounds (medians)"):format(
  CHAINS, DRAWS, DRAWS, N, K, grads, mp.size, rounds))
print(("  serial (parallel = false) %.3f s   over the ranks %.3f s   speedup S %.2f   E = S/P %.2f"):format(
  med.serial, med.ranks, S, S / mp.size))
print(("  fastest rounds: serial %.3f s, over the ranks %.3f s, S %.2f"):format(best.serial, best.ranks,
  best.serial / best.ranks))
