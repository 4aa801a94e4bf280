-- SPDX-License-Identifier: MIT
-- Fifteen posteriordb posteriors written with mplua's params and ad, each
-- the Stan program of posterior_database/models/stan/<model>.stan line for
-- line (transformed data computed here, ~ statements as log densities;
-- constants Stan drops do not change the posterior). A model is
--   {declare = {params declarations}, logp = function(p) ... end,
--    derived = function(p) return {name = number} end (quantities the
--    reference draws hold that are not parameters, from numbers), opts =
--    sampler options it needs}
-- and M.load(name) returns it with its data (scripts/posteriordb/data/);
-- init_radius: the range of its starts (2 otherwise, as Stan's).
local params = require "mplua.params"

local M = {}

local function col(rows, j) local c = {} for i = 1, #rows do c[i] = rows[i][j] end return c end
local function map(t, f) local r = {} for i = 1, #t do r[i] = f(t[i], i) end return r end
local function mean(v) local s = 0 for i = 1, #v do s = s + v[i] end return s / #v end
local function sd(v)
  local m, s = mean(v), 0
  for i = 1, #v do s = s + (v[i] - m) ^ 2 end
  return math.sqrt(s / (#v - 1))
end
-- data as f64 arrays, which ad reads in place (a table is converted at
-- every call): a design matrix from columns (lists), a vector
local function design(cols)
  local X = {}
  for i = 1, #cols[1] do X[i] = map(cols, function(c) return c[i] end) end
  return mp.array("f64", X)
end
local function vec(v) return mp.array("f64", v) end
local function ones(n) local t = {} for i = 1, n do t[i] = 1 end return t end
local function values(v) local t = {} for i = 1, #v do t[i] = ad.value(v[i]) end return t end

local MODELS = {}

MODELS["eight_schools-eight_schools_noncentered"] = function(d)
  return {
    declare = {{"theta_trans", d.J}, {"mu"}, {"tau", lower = 0}},
    logp = function(p)
      local theta = ad.add(ad.mul(p.theta_trans, p.tau), p.mu)
      return ad.normal_lpdf(p.theta_trans, 0, 1) + ad.normal_lpdf(d.y, theta, d.sigma)
        + ad.normal_lpdf(p.mu, 0, 5) + ad.cauchy_lpdf(p.tau, 0, 5)
    end,
    derived = function(p)
      local r = {}
      for j = 1, d.J do r[("theta[%d]"):format(j)] = p.theta_trans[j] * p.tau + p.mu end
      return r
    end,
    opts = {adapt_delta = 0.95},
  }
end

local function gp_f(d, p)
  local K = ad.add_diag(ad.gp_exp_quad_cov(d.x, p.alpha, p.rho), 1e-10)
  return ad.matvec(ad.cholesky_decompose(K), p.f_tilde)
end
MODELS["gp_pois_regr-gp_pois_regr"] = function(d)
  return {
    declare = {{"rho", lower = 0}, {"alpha", lower = 0}, {"f_tilde", d.N}},
    logp = function(p)
      return ad.gamma_lpdf(p.rho, 25, 4) + ad.normal_lpdf(p.alpha, 0, 2) + ad.normal_lpdf(p.f_tilde, 0, 1)
        + ad.poisson_log_lpmf(d.k, gp_f(d, p))
    end,
    derived = function(p)
      local f, r = values(gp_f(d, p)), {}
      for i = 1, d.N do r[("f[%d]"):format(i)] = f[i] end
      return r
    end,
  }
end

MODELS["gp_pois_regr-gp_regr"] = function(d)
  local y = vec(d.y)
  return {
    declare = {{"rho", lower = 0}, {"alpha", lower = 0}, {"sigma", lower = 0}},
    logp = function(p)
      local L = ad.cholesky_decompose(ad.add_diag(ad.gp_exp_quad_cov(d.x, p.alpha, p.rho), p.sigma))
      return ad.gamma_lpdf(p.rho, 25, 4) + ad.normal_lpdf(p.alpha, 0, 2) + ad.normal_lpdf(p.sigma, 0, 1)
        + ad.multi_normal_cholesky_lpdf(y, 0, L)
    end,
  }
end

-- the forward algorithm of a K-state HMM: emission[k] the per-time log
-- densities of state k (vectors), theta[j] the transition simplexes
local function forward(N, K, theta, emission)
  local logtheta = map(theta, function(t) return ad.log(t) end)
  local gamma = {}
  for k = 1, K do gamma[k] = emission[k][1] end
  for t = 2, N do
    local g = {}
    for k = 1, K do
      local acc = {}
      for j = 1, K do acc[j] = gamma[j] + logtheta[j][k] + emission[k][t] end
      g[k] = ad.log_sum_exp(acc)
    end
    gamma = g
  end
  return ad.log_sum_exp(gamma)
end

MODELS["hmm_example-hmm_example"] = function(d)
  local y = vec(d.y)
  return {
    declare = {{"theta1", d.K, "simplex"}, {"theta2", d.K, "simplex"}, {"mu", d.K, "positive_ordered"}},
    logp = function(p)
      local em = {}
      for k = 1, d.K do em[k] = ad.each.normal_lpdf(y, p.mu[k], 1) end
      return ad.normal_lpdf(p.mu[1], 3, 1) + ad.normal_lpdf(p.mu[2], 10, 1) + forward(d.N, d.K, {p.theta1, p.theta2}, em)
    end,
  }
end

MODELS["bball_drive_event_0-hmm_drive_0"] = function(d)
  local u, v = vec(d.u), vec(d.v)
  return {
    declare = {{"theta1", d.K, "simplex"}, {"theta2", d.K, "simplex"}, {"phi", d.K, "positive_ordered"},
               {"lambda", d.K, "positive_ordered"}},
    logp = function(p)
      local lp = ad.dirichlet_lpdf(p.theta1, d.alpha[1]) + ad.dirichlet_lpdf(p.theta2, d.alpha[2])
        + ad.normal_lpdf(p.phi[1], 0, 1) + ad.normal_lpdf(p.phi[2], 3, 1)
        + ad.normal_lpdf(p.lambda[1], 0, 1) + ad.normal_lpdf(p.lambda[2], 3, 1)
      local em = {}
      for k = 1, d.K do em[k] = ad.add(ad.each.exponential_lpdf(u, p.phi[k]), ad.each.exponential_lpdf(v, p.lambda[k])) end
      return lp + forward(d.N, d.K, {p.theta1, p.theta2}, em)
    end,
    -- a minor mode near lambda[2] = 3 (the prior's mean) holds chains that
    -- start far out; starts in (-0.5, 0.5) stay in the main one. The
    -- reference draws took adapt_delta 0.9, max_treedepth 15 and 35000
    -- warmup iterations; warmup here is three times the draws
    init_radius = 0.5,
    opts = {adapt_delta = 0.9, max_depth = 15},
    warmup_factor = 3,
  }
end

MODELS["nes2000-nes"] = function(d)
  local age = function(a) return map(d.age_discrete, function(v) return v == a and 1 or 0 end) end
  local X = design{ones(d.N), d.real_ideo, d.race_adj, age(2), age(3), age(4), d.educ1, d.gender, d.income}
  local y = vec(d.partyid7)
  return {
    declare = {{"beta", 9}, {"sigma", lower = 0}},
    logp = function(p) return ad.normal_id_glm_lpdf(y, X, 0, p.beta, p.sigma) end,
  }
end

MODELS["arK-arK"] = function(d)
  local X, ytail = {}, {}
  for t = d.K + 1, d.T do
    local row = {}
    for k = 1, d.K do row[k] = d.y[t - k] end
    X[#X + 1], ytail[#ytail + 1] = row, d.y[t]
  end
  X, ytail = mp.array("f64", X), vec(ytail)
  return {
    declare = {{"alpha"}, {"beta", d.K}, {"sigma", lower = 0}},
    logp = function(p)
      return ad.normal_lpdf(p.alpha, 0, 10) + ad.normal_lpdf(p.beta, 0, 10) + ad.cauchy_lpdf(p.sigma, 0, 2.5)
        + ad.normal_id_glm_lpdf(ytail, X, p.alpha, p.beta, p.sigma)
    end,
  }
end

MODELS["arma-arma11"] = function(d)
  return {
    declare = {{"mu"}, {"phi"}, {"theta"}, {"sigma", lower = 0}},
    logp = function(p)
      local err = {}
      local nu = p.mu + p.phi * p.mu
      err[1] = d.y[1] - nu
      for t = 2, d.T do
        nu = p.mu + p.phi * d.y[t - 1] + p.theta * err[t - 1]
        err[t] = d.y[t] - nu
      end
      return ad.normal_lpdf(p.mu, 0, 10) + ad.normal_lpdf(p.phi, 0, 2) + ad.normal_lpdf(p.theta, 0, 2)
        + ad.cauchy_lpdf(p.sigma, 0, 2.5) + ad.normal_lpdf(err, 0, p.sigma)
    end,
    -- a start with |theta| > 1 makes the errors grow as theta^t: such a
    -- chain never leaves (its step size collapses); starts in (-0.5, 0.5),
    -- as a Stan user would give init = 0.5
    init_radius = 0.5,
  }
end

MODELS["garch-garch11"] = function(d)
  local y = vec(d.y)
  return {
    declare = {{"mu"}, {"alpha0", lower = 0}, {"alpha1", lower = 0, upper = 1},
               {"beta1", lower = 0, upper = function(p) return 1 - p.alpha1 end}},
    logp = function(p)
      local sigma = {d.sigma1}
      for t = 2, d.T do
        sigma[t] = ad.sqrt(p.alpha0 + p.alpha1 * ad.square(d.y[t - 1] - p.mu) + p.beta1 * ad.square(sigma[t - 1]))
      end
      return ad.normal_lpdf(y, p.mu, sigma)
    end,
  }
end

MODELS["low_dim_gauss_mix-low_dim_gauss_mix"] = function(d)
  local y = vec(d.y)
  return {
    declare = {{"mu", 2, "ordered"}, {"sigma", lower = 0, array = 2}, {"theta", lower = 0, upper = 1}},
    logp = function(p)
      local s1, s2 = p.sigma[1], p.sigma[2]
      return ad.normal_lpdf({s1, s2}, 0, 2) + ad.normal_lpdf(p.mu, 0, 2) + ad.beta_lpdf(p.theta, 5, 5)
        + ad.sum(ad.log_mix(p.theta, ad.each.normal_lpdf(y, p.mu[1], s1), ad.each.normal_lpdf(y, p.mu[2], s2)))
    end,
  }
end

MODELS["kidiq-kidscore_momiq"] = function(d)
  local X, y = design{ones(d.N), d.mom_iq}, vec(d.kid_score)
  return {
    declare = {{"beta", 2}, {"sigma", lower = 0}},
    logp = function(p) return ad.cauchy_lpdf(p.sigma, 0, 2.5) + ad.normal_id_glm_lpdf(y, X, 0, p.beta, p.sigma) end,
  }
end

MODELS["mesquite-logmesquite"] = function(d)
  local lg = function(v) return map(v, function(x) return math.log(x) end) end
  local X = design{ones(d.N), lg(d.diam1), lg(d.diam2), lg(d.canopy_height), lg(d.total_height), lg(d.density), d.group}
  local y = vec(lg(d.weight))
  return {
    declare = {{"beta", 7}, {"sigma", lower = 0}},
    logp = function(p) return ad.normal_id_glm_lpdf(y, X, 0, p.beta, p.sigma) end,
  }
end

MODELS["sblri-blr"] = function(d)
  local X, y = mp.array("f64", d.X), vec(d.y)
  return {
    declare = {{"beta", d.D}, {"sigma", lower = 0}},
    logp = function(p)
      return ad.normal_lpdf(p.beta, 0, 10) + ad.normal_lpdf(p.sigma, 0, 10) + ad.normal_id_glm_lpdf(y, X, 0, p.beta, p.sigma)
    end,
  }
end

MODELS["kilpisjarvi_mod-kilpisjarvi"] = function(d)
  local x, y = vec(d.x), vec(d.y)
  return {
    declare = {{"alpha"}, {"beta"}, {"sigma", lower = 0}},
    logp = function(p)
      return ad.normal_lpdf(p.alpha, d.pmualpha, d.psalpha) + ad.normal_lpdf(p.beta, d.pmubeta, d.psbeta)
        + ad.normal_lpdf(y, ad.add(ad.mul(x, p.beta), p.alpha), p.sigma)
    end,
    -- alpha and beta are correlated at -0.9999 (years near 2000): a dense metric
    opts = {metric = "dense_e"},
  }
end

MODELS["earnings-logearn_interaction_z"] = function(d)
  local m, s = mean(d.height), sd(d.height)
  local z = map(d.height, function(h) return (h - m) / s end)
  local X = design{ones(d.N), z, d.male, map(z, function(v, i) return v * d.male[i] end)}
  local y = vec(map(d.earn, function(x) return math.log(x) end))
  return {
    declare = {{"beta", 4}, {"sigma", lower = 0}},
    logp = function(p) return ad.normal_id_glm_lpdf(y, X, 0, p.beta, p.sigma) end,
  }
end

-- the posteriors, cheapest first
M.NAMES = {
  "kidiq-kidscore_momiq", "eight_schools-eight_schools_noncentered", "mesquite-logmesquite",
  "kilpisjarvi_mod-kilpisjarvi", "earnings-logearn_interaction_z", "sblri-blr", "nes2000-nes", "arK-arK",
  "gp_pois_regr-gp_regr", "low_dim_gauss_mix-low_dim_gauss_mix", "garch-garch11", "arma-arma11",
  "hmm_example-hmm_example", "gp_pois_regr-gp_pois_regr", "bball_drive_event_0-hmm_drive_0",
}

-- dir: where the data files are
function M.load(name, dir)
  local pdb = dofile(dir .. "/" .. name .. ".lua")
  local model = assert(MODELS[name], name)(pdb.data)
  model.name, model.reference, model.ndraws = name, pdb.reference, pdb.ndraws
  model.params = params(model.declare)
  return model
end

return M
