-- ranks: nompi
-- SPDX-License-Identifier: MIT
-- ad's multivariate and structured densities against closed forms (2x2
-- determinants and inverses written out, the univariate cases they reduce
-- to, LKJ's normalization on 2x2 correlations), their gradients by
-- ad.check_grad and Hessians against differences of gradients (second
-- order through Cholesky factors and triangular solves), bad input.

local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local fmt, log, exp, pi = string.format, math.log, math.exp, math.pi
local lg = ad.lgamma
local function ref(name, got, want, tol)
  assert(C.close(got, want, tol or 1e-12), fmt("%s: %.17g, closed form %.17g", name, got, want))
end

-- 2x2 helpers
local function det2(S) return S[1][1] * S[2][2] - S[1][2] * S[2][1] end
local function quad2(S, v) -- v' S^-1 v
  local d = det2(S)
  return (S[2][2] * v[1] ^ 2 - 2 * S[1][2] * v[1] * v[2] + S[1][1] * v[2] ^ 2) / d
end

-- dirichlet
local th, al = {0.2, 0.3, 0.5}, {1.5, 2, 3}
ref("dirichlet", ad.dirichlet_lpdf(th, al),
    lg(6.5) - lg(1.5) - lg(2) - lg(3) + 0.5 * log(0.2) + log(0.3) + 2 * log(0.5))
ref("dirichlet of an array", ad.dirichlet_lpdf({th, {0.1, 0.1, 0.8}}, al), ad.dirichlet_lpdf(th, al) + ad.dirichlet_lpdf({0.1, 0.1, 0.8}, al))
-- multi_normal: one vector, several (a list and a matrix of columns)
local S, mu, y = {{2, 0.6}, {0.6, 1}}, {0.5, -1}, {1.2, 0.3}
local r = {y[1] - mu[1], y[2] - mu[2]}
local want = -log(2 * pi) - 0.5 * log(det2(S)) - 0.5 * quad2(S, r)
ref("multi_normal", ad.multi_normal_lpdf(y, mu, S), want)
ref("multi_normal, list", ad.multi_normal_lpdf({y, y}, mu, S), 2 * want)
ref("multi_normal, columns", ad.multi_normal_lpdf(ad.matrix({{y[1], y[1]}, {y[2], y[2]}}), mu, S), 2 * want)
-- multi_student_t
local nu = 4.5
want = lg((nu + 2) / 2) - lg(nu / 2) - log(nu * pi) - 0.5 * log(det2(S)) - (nu + 2) / 2 * log(1 + quad2(S, r) / nu)
ref("multi_student_t", ad.multi_student_t_lpdf(y, nu, mu, S), want)
ref("multi_student_t_cholesky", ad.multi_student_t_cholesky_lpdf(y, nu, mu, ad.cholesky_decompose(S)), want)
-- LKJ: on 2x2 correlations the density of r integrates to 1; the Cholesky
-- form differs from the matrix form by the Jacobian sum (K - k) log L_kk
for _, eta in ipairs{0.7, 1, 2.5} do
  local n, s = 4000, 0
  for i = 1, n do
    local rr = -1 + (i - 0.5) * 2 / n
    s = s + exp(ad.lkj_corr_lpdf({{1, rr}, {rr, 1}}, eta)) * 2 / n
  end
  assert(math.abs(s - 1) < (eta < 1 and 2e-2 or 1e-5), fmt("lkj_corr(eta = %g) integrates to %g", eta, s))
end
ad.rng_seed(3)
for _, K in ipairs{3, 4} do
  local L = ad.lkj_corr_cholesky_rng(K, 1.7)
  local Lv = ad.value(L)
  local jac = 0
  for k = 2, K do jac = jac + (K - k) * log(Lv[k][k]) end
  ref("lkj_corr_cholesky vs lkj_corr, K = " .. K, ad.lkj_corr_cholesky_lpdf(L, 1.7),
      ad.lkj_corr_lpdf(ad.multiply_lower_tri_self_transpose(L), 1.7) + jac, 1e-11)
end
-- wishart and inv_wishart: K = 1 is a gamma and an inverse gamma
ref("wishart K = 1", ad.wishart_lpdf({{1.7}}, 3.5, {{0.8}}), ad.gamma_lpdf(1.7, 1.75, 1 / 1.6))
ref("inv_wishart K = 1", ad.inv_wishart_lpdf({{1.7}}, 3.5, {{0.8}}), ad.inv_gamma_lpdf(1.7, 1.75, 0.4))
local W, nuw = {{2, 0.3}, {0.3, 1}}, 4
local Sinv = {{S[2][2] / det2(S), -S[1][2] / det2(S)}, {-S[2][1] / det2(S), S[1][1] / det2(S)}}
local tr = Sinv[1][1] * W[1][1] + 2 * Sinv[1][2] * W[1][2] + Sinv[2][2] * W[2][2]
local lmg = 0.5 * log(pi) + lg(nuw / 2) + lg(nuw / 2 - 0.5)
ref("wishart 2x2", ad.wishart_lpdf(W, nuw, S),
    -nuw * log(2) - lmg - nuw / 2 * log(det2(S)) + (nuw - 3) / 2 * log(det2(W)) - tr / 2)
local Winv = {{W[2][2] / det2(W), -W[1][2] / det2(W)}, {-W[2][1] / det2(W), W[1][1] / det2(W)}}
tr = S[1][1] * Winv[1][1] + 2 * S[1][2] * Winv[1][2] + S[2][2] * Winv[2][2]
ref("inv_wishart 2x2", ad.inv_wishart_lpdf(W, nuw, S),
    -nuw * log(2) - lmg + nuw / 2 * log(det2(S)) - (nuw + 3) / 2 * log(det2(W)) - tr / 2)
-- categorical, multinomial, ordered
ref("categorical", ad.categorical_lpmf({1, 3, 3}, th), log(0.2) + 2 * log(0.5))
local beta = {0.1, -0.4, 1.2}
local lse = log(exp(0.1) + exp(-0.4) + exp(1.2))
ref("categorical_logit", ad.categorical_logit_lpmf({2, 3}, beta), -0.4 + 1.2 - 2 * lse)
ref("multinomial", ad.multinomial_lpmf({2, 0, 3}, th), lg(6) - lg(3) - lg(4) + 2 * log(0.2) + 3 * log(0.5))
ref("multinomial_logit", ad.multinomial_logit_lpmf({2, 0, 3}, beta), lg(6) - lg(3) - lg(4) + 2 * 0.1 + 3 * 1.2 - 5 * lse)
local function il(x) return 1 / (1 + exp(-x)) end
local c, eta = {-0.5, 0.4, 1.5}, {0.2, -0.3, 0.8, 0.1}
local ys = {1, 2, 4, 3}
want = log(1 - il(eta[1] - c[1])) + log(il(eta[2] - c[1]) - il(eta[2] - c[2])) + log(il(eta[3] - c[3]))
       + log(il(eta[4] - c[2]) - il(eta[4] - c[3]))
ref("ordered_logistic", ad.ordered_logistic_lpmf(ys, eta, c), want)
local function Phi(x) return exp(ad.std_normal_lcdf(x)) end
want = log(1 - Phi(eta[1] - c[1])) + log(Phi(c[2] - eta[2]) - Phi(c[1] - eta[2])) + log(1 - Phi(c[3] - eta[3]))
       + log(Phi(c[3] - eta[4]) - Phi(c[2] - eta[4]))
ref("ordered_probit", ad.ordered_probit_lpmf(ys, eta, c), want, 1e-10)
-- GLMs equal their compositions
local X, yy, cnt, bin = {{1, 0.5}, {0.2, -1}, {-0.3, 2}}, {0.4, -0.2, 1.1}, {0, 3, 1}, {1, 0, 1}
local lin = {}
for i = 1, 3 do lin[i] = 0.3 + X[i][1] * 0.7 + X[i][2] * -0.2 end
ref("normal_id_glm", ad.normal_id_glm_lpdf(yy, X, 0.3, {0.7, -0.2}, 1.3), ad.normal_lpdf(yy, lin, 1.3))
ref("poisson_log_glm", ad.poisson_log_glm_lpmf(cnt, X, 0.3, {0.7, -0.2}), ad.poisson_log_lpmf(cnt, lin))
ref("bernoulli_logit_glm", ad.bernoulli_logit_glm_lpmf(bin, X, 0.3, {0.7, -0.2}), ad.bernoulli_logit_lpmf(bin, lin))
ref("neg_binomial_2_log_glm", ad.neg_binomial_2_log_glm_lpmf(cnt, X, 0.3, {0.7, -0.2}, 2), ad.neg_binomial_2_log_lpmf(cnt, lin, 2))

-- gradients and Hessians (the latter through the Cholesky factor, solves, log-determinants)
local function corr(t) return ad.matrix({{1, 0}, {ad.tanh(t), ad.sqrt(1 - ad.square(ad.tanh(t)))}}) end
local models = {
  {"dirichlet", function(t) return ad.dirichlet_lpdf(ad.softmax({t[1], t[2], 0}), ad.exp({t[3], t[3] + 0.5, 1})) end, {0.2, -0.3, 0.4}},
  {"multi_normal", function(t)
     return ad.multi_normal_lpdf({y, {0.1, 0.9}}, {t[1], t[2]}, {{ad.exp(t[3]), 0.3}, {0.3, 1.5}}) end, {0.3, -0.2, 0.5}},
  {"multi_student_t", function(t)
     return ad.multi_student_t_lpdf(y, ad.exp(t[3]) + 2, {t[1], t[2]}, {{2, t[1] * 0.2}, {t[1] * 0.2, 1}}) end, {0.3, -0.2, 0.5}},
  {"lkj_corr_cholesky", function(t) return ad.lkj_corr_cholesky_lpdf(corr(t[1]), ad.exp(t[2])) end, {0.4, 0.3}},
  {"lkj_corr", function(t) return ad.lkj_corr_lpdf(ad.multiply_lower_tri_self_transpose(corr(t[1])), ad.exp(t[2])) end, {0.4, 0.3}},
  {"wishart", function(t) return ad.wishart_lpdf({{ad.exp(t[1]), t[2]}, {t[2], 1}}, 4, {{2, 0.3}, {0.3, ad.exp(t[3])}}) end, {0.5, 0.2, 0.1}},
  {"inv_wishart", function(t) return ad.inv_wishart_lpdf({{ad.exp(t[1]), t[2]}, {t[2], 1}}, 4, {{2, 0.3}, {0.3, ad.exp(t[3])}}) end, {0.5, 0.2, 0.1}},
  {"categorical_logit", function(t) return ad.categorical_logit_lpmf({1, 3, 3}, {t[1], t[2], t[3]}) end, {0.5, 0.2, 0.1}},
  {"multinomial", function(t) return ad.multinomial_lpmf({2, 0, 3}, ad.softmax({t[1], t[2], 0})) end, {0.5, 0.2}},
  {"ordered_logistic", function(t) return ad.ordered_logistic_lpmf(ys, ad.mul(t[1], eta), ad.cumulative_sum({t[2], ad.exp(t[3]), 1})) end, {0.5, -0.2, 0.1}},
  {"ordered_probit", function(t) return ad.ordered_probit_lpmf(ys, ad.mul(t[1], eta), ad.cumulative_sum({t[2], ad.exp(t[3]), 1})) end, {0.5, -0.2, 0.1}},
  {"normal_id_glm", function(t) return ad.normal_id_glm_lpdf(yy, X, t[1], {t[2], t[3]}, 1.3) end, {0.3, 0.7, -0.2}},
  {"bernoulli_logit_glm", function(t) return ad.bernoulli_logit_glm_lpmf(bin, X, t[1], {t[2], t[3]}) end, {0.3, 0.7, -0.2}},
}
for _, m in ipairs(models) do
  C.grad(m[1], m[2], m[3])
  C.hessian(m[1], m[2], m[3], 1e-5)
end
-- bad input
C.fails("bad argument #1 to 'ad.categorical_lpmf' (element 2 is 4, expected an integer in 1..3)", ad.categorical_lpmf, {1, 4}, th)
C.fails("bad argument #1 to 'ad.multinomial_lpmf' (element 1 is -1, expected a non-negative integer)", ad.multinomial_lpmf, {-1, 2, 0}, th)
C.fails("ad.dirichlet_lpdf: theta and alpha differ in length", ad.dirichlet_lpdf, {0.5, 0.5}, al)
print("ad_mvdists: ok")
