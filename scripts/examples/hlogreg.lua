-- SPDX-License-Identifier: MIT
-- Hierarchical logistic regression, sharded over ranks with mp.mapper:
-- fitted by L-BFGS (lib/optim.lua), then sampled by NUTS (lib/hmc.lua).
--
--   y[g][i] ~ bernoulli_logit(X[g][i] . beta[g]),   g = 1..G groups
--   beta[g] = mu + tau * z[g],  z[g] ~ normal(0, 1)  (non-centred)
--   mu ~ normal(0, 2),  tau ~ half-normal(0, 1)      (tau = exp(log_tau))
--
-- One job per group: its rows of data live on the rank that owns the group
-- (shipped once, when the mapper is made); a gradient sends only mu, tau
-- (phi, shared) and z[g] (theta) and gets back one log-likelihood and its
-- partials per group.
--
-- Run: mpiexec -n 4 build/mplua scripts/examples/hlogreg.lua [G rows draws seed]
local optim = require("mplua.optim")
local hmc = require("mplua.hmc")

local G = tonumber(arg and arg[1]) or 16
local ROWS = tonumber(arg and arg[2]) or 1000
local DRAWS = tonumber(arg and arg[3]) or 200
local SEED = tonumber(arg and arg[4]) or 7
local K = 4

-- ------------------------------------------------------------ data
local state = SEED
local function unif() -- a small LCG: the data do not depend on math.random
  state = (state * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
  return (state >> 11) / (1 << 52)
end
local function normal() return math.sqrt(-2 * math.log(1 - unif())) * math.cos(2 * math.pi * unif()) end

local mu_true, tau_true = {0.8, -0.5, 0.3, 0.0}, 0.6
local X, Y = {}, {}
for g = 1, G do
  local beta = {}
  for k = 1, K do beta[k] = mu_true[k] + tau_true * normal() end
  X[g], Y[g] = mp.array("f64", ROWS, K), mp.array("f64", ROWS)
  for i = 1, ROWS do
    local eta = 0
    for k = 1, K do
      local x = k == 1 and 1 or normal()
      X[g]:set(i, k, x)
      eta = eta + x * beta[k]
    end
    Y[g][i] = unif() < 1 / (1 + math.exp(-eta)) and 1 or 0
  end
end

-- ---------------------------------------------------------- the model
-- a group's log-likelihood: phi = (mu[1..K], tau), theta = z[g]
local function group_loglik(phi, z, Xg, yg)
  local beta = phi:slice(1, K) + z * phi[K + 1]
  return {ad.bernoulli_logit_lpmf(yg, ad.matvec(Xg, beta))}
end

local shards = mp.mapper(group_loglik, X, Y)

-- parameters: mu (K), log_tau, z (G x K)
local NP = K + 1 + G * K
local function unpack(p)
  local tau = ad.exp(p[K + 1])
  local phi = {}
  for k = 1, K do phi[k] = p[k] end
  phi[K + 1] = tau
  local z = {}
  for g = 1, G do z[g] = p:slice(K + 1 + (g - 1) * K + 1, K + 1 + g * K) end
  return phi, z, tau
end

local function prior(p, tau)
  return ad.normal_lpdf(p:slice(1, K), 0, 2) + ad.normal_lpdf(tau, 0, 1) + p[K + 1]
         + ad.normal_lpdf(p:slice(K + 2, NP), 0, 1)
end

-- log posterior through the mapper, and the same computed inline on rank 0
local function logp(p)
  local phi, z, tau = unpack(p)
  local lp = prior(p, tau)
  for _, y in ipairs(shards(phi, z)) do lp = lp + y[1] end
  return lp
end
local function logp_serial(p)
  local phi, z, tau = unpack(p)
  local lp = prior(p, tau)
  local vphi = ad.add(phi, 0) -- a vector var, as the mapper passes it
  for g = 1, G do lp = lp + group_loglik(vphi, z[g], X[g], Y[g])[1] end
  return lp
end

local function logp_grad(x) return ad.grad(logp, x) end

-- ------------------------------------------------- gradient speed-up
local x0 = {}
for i = 1, NP do x0[i] = 0.1 * math.sin(i) end
local v1, g1 = ad.grad(logp, x0)
local v2, g2 = ad.grad(logp_serial, x0)
assert(math.abs(v1 - v2) <= 1e-9 * math.abs(v2), "mapper and inline model disagree")
for i = 1, NP do assert(math.abs(g1[i] - g2[i]) <= 1e-8 * (1 + math.abs(g2[i]))) end
local function per_call(f, n)
  local t = mp.wtime()
  for _ = 1, n do ad.grad(f, x0) end
  return (mp.wtime() - t) / n
end
local ts, tm = {}, {}
for r = 1, 5 do ts[r], tm[r] = per_call(logp_serial, 10), per_call(logp, 10) end
table.sort(ts); table.sort(tm)
print(string.format("%d groups x %d rows x %d covariates, %d parameters, %d ranks", G, ROWS, K, NP, mp.size))
print(string.format("gradient: serial %.2f ms, mapper %.2f ms: speedup %.2f", ts[3] * 1e3, tm[3] * 1e3, ts[3] / tm[3]))

-- --------------------------------------------------------- L-BFGS fit
local t0 = mp.wtime()
local xhat, fhat, info = optim.lbfgs(function(x)
  local v, g = logp_grad(x)
  for i = 1, #g do g[i] = -g[i] end
  return -v, g
end, x0, {maxiter = 500})
print(string.format("L-BFGS: %s after %d iterations, %d gradients, %.2f s; log posterior %.3f",
  info.converged and "converged" or "NOT converged", info.iter, info.nfev, mp.wtime() - t0, -fhat))
local function show(label, mu, tau)
  local s = {}
  for k = 1, K do s[k] = string.format("%6.3f", mu[k]) end
  print(string.format("  %-12s mu = (%s)  tau = %.3f", label, table.concat(s, ", "), tau))
end
show("truth", mu_true, tau_true)
show("mode", xhat, math.exp(xhat[K + 1]))

-- ------------------------------------------------------- NUTS sampling
t0 = mp.wtime()
local draws, sinfo = hmc.sample(logp_grad, xhat, {n = DRAWS, warmup = DRAWS, seed = SEED})
local sum = hmc.summary(draws)
local post_mu, taus = {}, {}
for k = 1, K do post_mu[k] = sum[k].mean end
for i, d in ipairs(draws) do taus[i] = math.exp(d[K + 1]) end
local tau_mean = 0
for _, t in ipairs(taus) do tau_mean = tau_mean + t / #taus end
print(string.format("NUTS: %d draws after %d warmup, %.2f s, %d gradients, step %.3f, accept %.2f, %d divergences",
  DRAWS, DRAWS, mp.wtime() - t0, sinfo.n_leapfrog, sinfo.step, sinfo.accept_rate, sinfo.divergences))
show("post. mean", post_mu, tau_mean)
local sds = {}
for k = 1, K do sds[k] = string.format("%.3f", sum[k].sd) end
print(string.format("  posterior sd of mu: (%s); min ess %.0f", table.concat(sds, ", "),
  (function() local e = math.huge for _, s in ipairs(sum) do e = math.min(e, s.ess) end return e end)()))
