-- SPDX-License-Identifier: MIT
-- A Poisson regression with a Gaussian process prior on the log rate (the
-- shape of posteriordb's gp_pois_regr), sampled with 4 NUTS chains over the
-- ranks and summarized like CmdStan's stansummary:
--
--   k[i] ~ poisson_log(f[i]),  f = L f_tilde,  L L' = K + 1e-9 I,
--   K[i][j] = alpha^2 exp(-(x[i] - x[j])^2 / (2 rho^2)),
--   rho ~ gamma(25, 4), alpha ~ normal(0, 2) (both positive), f_tilde ~ normal(0, 1)
--
-- Parameters are declared with lib/params.lua (bounds by transforms with
-- their log-Jacobians); the covariance, its Cholesky factor and L f_tilde
-- are ad matrix operations.
-- Run: mpiexec -n 2 build/mplua scripts/examples/gp_pois.lua [draws] [seed]
local hmc = require "mplua.hmc"
local params = require "mplua.params"
local DRAWS = tonumber(arg and arg[1]) or 300
local SEED = tonumber(arg and arg[2]) or 11

-- data: 11 points, counts from a smooth rate (a fixed small LCG: no math.random)
local x = {-10, -8, -6, -4, -2, 0, 2, 4, 6, 8, 10}
local k, s = {}, SEED
for i, xi in ipairs(x) do
  local rate = math.exp(2.5 + 1.2 * math.sin(xi / 3))
  s = (s * 1103515245 + 12345) % 2147483648
  -- a Poisson draw by inversion of its cdf at the uniform s / 2^31
  local u, n, p = s / 2147483648, 0, math.exp(-rate)
  local cdf = p
  while u > cdf do n = n + 1; p = p * rate / n; cdf = cdf + p end
  k[i] = n
end
local N = #x
local D2 = mp.array("f64", N, N)
for i = 1, N do for j = 1, N do D2:set(i, j, (x[i] - x[j]) ^ 2) end end

local m = params{{"rho", lower = 0}, {"alpha", lower = 0}, {"f_tilde", N}}
local function logp(u)
  local p, lj = m:unpack(u)
  local K = ad.exp(D2 * (-0.5 / (p.rho * p.rho))) * (p.alpha * p.alpha)
  local L = ad.cholesky_decompose(ad.add_diag(K, 1e-9))
  local f = ad.matvec(L, p.f_tilde)
  return lj + ad.gamma_lpdf(p.rho, 25, 4) + ad.normal_lpdf(p.alpha, 0, 2)
         + ad.normal_lpdf(p.f_tilde, 0, 1) + ad.poisson_log_lpmf(k, f)
end

local t0 = mp.wtime()
local fit = hmc.sample(function(u) return ad.grad(logp, u) end, function(c) return m:init(c) end,
                       {chains = 4, n = DRAWS, warmup = DRAWS, seed = SEED})
print(("4 chains on %d ranks, %.2f s"):format(mp.size, mp.wtime() - t0))
print(hmc.stansummary(m:constrain_fit(fit), {model = "gp_pois_regr"}))
