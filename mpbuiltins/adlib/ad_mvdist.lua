-- SPDX-License-Identifier: MIT
-- ad's multivariate and structured log densities (compiled into mplua,
-- chunk "=ad.mvdist"), Stan's names and argument orders, full normalizing
-- constants as Stan's _lpdf/_lpmf: dirichlet, multi_normal,
-- multi_student_t(_cholesky), lkj_corr(_cholesky), wishart, inv_wishart,
-- categorical(_logit), multinomial(_logit), ordered_logistic,
-- ordered_probit, and the GLMs normal_id_glm, poisson_log_glm,
-- bernoulli_logit_glm, neg_binomial_2_log_glm. Each is a composition of
-- recorded operations with second derivatives (the Cholesky factor and
-- triangular solves included), so Hessians go through them.
local ad = ...
local fmt = string.format
local LOG_PI, LOG_2 = math.log(math.pi), math.log(2)

local function len(v) return type(v) == "number" and 1 or #v end
local function at(v, i) if type(v) == "number" then return v end return v[i] end
-- a vector: a table, or an ad vector / constant (not a scalar var)
local function is_vector(v)
  if type(v) == "table" then return true end
  local mt = getmetatable(v)
  return type(v) == "userdata" and not (type(mt) == "table" and mt.__name == "ad.Var")
end
local function is_list_of_vectors(y) return type(y) == "table" and is_vector(y[1]) end
local function dims(A, fname, arg)
  local ok, M = pcall(ad.matrix, A)
  if not ok then error(fmt("bad argument #%d to '%s' (matrix expected)", arg, fname), 3) end
  local r, c = M:dims()
  return M, r, c
end
-- the diagonal of a square matrix as a vector, and its sum of logs
local function log_diag(M, n)
  local d = {}
  for i = 1, n do d[i] = M[i + (i - 1) * n] end
  return ad.log(ad.add(d, 0))
end

-- a list of vectors (or a matrix whose columns are the vectors) as an
-- n x N matrix
local function columns(y, fname, arg)
  if is_list_of_vectors(y) then
    local n, t = #y[1], {}
    for c = 1, #y do
      if #y[c] ~= n then error(fmt("bad argument #%d to '%s' (vector %d has %d elements, not %d)", arg, fname, c, #y[c], n), 3) end
      for i = 1, n do t[#t + 1] = y[c][i] end
    end
    return ad.matrix(ad.add(t, 0), n, #y), n, #y
  end
  if type(y) == "userdata" and y.dims and select("#", y:dims()) == 2 then
    local r, c = y:dims()
    return y, r, c
  end
  return y, len(y), 1
end

-- ------------------------------------------------------------- dirichlet

-- dirichlet(theta | alpha) = lgamma(sum alpha) - sum lgamma(alpha) + sum (alpha - 1) log theta
local function dirichlet1(theta, alpha)
  return ad.lgamma(ad.sum(alpha)) - ad.sum(ad.lgamma(alpha)) + ad.dot(ad.sub(alpha, 1), ad.log(theta))
end
function ad.dirichlet_lpdf(theta, alpha)
  if is_list_of_vectors(theta) then
    local s = 0
    for k = 1, #theta do s = s + dirichlet1(theta[k], is_list_of_vectors(alpha) and alpha[k] or alpha) end
    return s
  end
  if len(theta) ~= len(alpha) then error("ad.dirichlet_lpdf: theta and alpha differ in length", 2) end
  return dirichlet1(theta, alpha)
end

-- ------------------------------------------------------ multivariate normal

function ad.multi_normal_lpdf(y, mu, Sigma)
  local Y = columns(y, "ad.multi_normal_lpdf", 1)
  local M = is_list_of_vectors(mu) and columns(mu, "ad.multi_normal_lpdf", 2) or mu
  return ad.multi_normal_cholesky_lpdf(Y, M, ad.cholesky_decompose(Sigma))
end

-- multi_student_t(y | nu, mu, L L') per observation: lgamma((nu+K)/2) - lgamma(nu/2)
-- - K/2 log(nu pi) - sum log diag L - (nu+K)/2 log1p(|L^-1 (y - mu)|^2 / nu)
function ad.multi_student_t_cholesky_lpdf(y, nu, mu, L)
  local Y, K, N = columns(y, "ad.multi_student_t_cholesky_lpdf", 1)
  local M = is_list_of_vectors(mu) and columns(mu, "ad.multi_student_t_cholesky_lpdf", 3) or mu
  local Lm = ad.matrix(L)
  local lp = 0
  local half = ad.mul(ad.add(nu, K), 0.5)
  local const = ad.lgamma(half) - ad.lgamma(ad.mul(nu, 0.5)) - ad.mul(ad.log(ad.mul(nu, math.pi)), K / 2)
  local ld = ad.sum(log_diag(Lm, K))
  for c = 1, N do
    local yc = N == 1 and Y or ad.matrix(Y):slice((c - 1) * K + 1, c * K)
    local mc = (len(M) == K * N and N > 1) and ad.matrix(M):slice((c - 1) * K + 1, c * K) or M
    local z = ad.mdivide_left_tri_low(Lm, ad.sub(yc, mc))
    lp = lp + const - ld - half * ad.log1p(ad.dot(z, z) / nu)
  end
  return lp
end
function ad.multi_student_t_lpdf(y, nu, mu, Sigma)
  return ad.multi_student_t_cholesky_lpdf(y, nu, mu, ad.cholesky_decompose(Sigma))
end

-- ---------------------------------------------------------------- LKJ

-- Lewandowski, Kurowicka & Joe (2009), theorem 5: the log normalizing
-- constant of LKJ(eta) on K x K correlation matrices
local function lkj_constant(eta, K)
  local Km1 = K - 1
  local c = Km1 * ad.lgamma(eta + 0.5 * Km1)
  for k = 1, Km1 do c = c - 0.5 * k * LOG_PI - ad.lgamma(eta + 0.5 * (Km1 - k)) end
  return c
end

-- lkj_corr_cholesky(L | eta) = const + sum_{k>=2} (K - k + 2 eta - 2) log L_kk
function ad.lkj_corr_cholesky_lpdf(L, eta)
  local Lm, K, K2 = dims(L, "ad.lkj_corr_cholesky_lpdf", 1)
  if K ~= K2 then error("ad.lkj_corr_cholesky_lpdf: square matrix expected", 2) end
  if K == 1 then return 0 end
  local w, d = {}, {}
  for k = 2, K do
    w[k - 1] = (K - k - 2) + 2 * eta
    d[k - 1] = Lm[k + (k - 1) * K]
  end
  return lkj_constant(eta, K) + ad.dot(ad.add(w, 0), ad.log(ad.add(d, 0)))
end

-- lkj_corr(Omega | eta) = const + (eta - 1) log det Omega
function ad.lkj_corr_lpdf(Omega, eta)
  local _, K = dims(Omega, "ad.lkj_corr_lpdf", 1)
  local Lc = ad.cholesky_decompose(Omega)
  return lkj_constant(eta, K) + (eta - 1) * 2 * ad.sum(log_diag(Lc, K))
end

-- ------------------------------------------------------------- Wishart

local function lmgamma(K, x)
  local s = K * (K - 1) / 4 * LOG_PI
  for j = 1, K do s = s + ad.lgamma(x + (1 - j) / 2) end
  return s
end

-- S^-1 from the Cholesky factor of S
local function inverse_from_chol(Lc, K)
  return ad.mdivide_left_tri_low(Lc, ad.mdivide_left_tri_low(Lc, ad.diag_matrix(ad.rep_vector(1, K))), "T")
end

-- wishart(W | nu, S) = -(nu K / 2) log 2 - lmgamma(K, nu/2) - (nu/2) log det S
--   + ((nu - K - 1)/2) log det W - tr(S^-1 W) / 2
function ad.wishart_lpdf(W, nu, S)
  local Wm, K = dims(W, "ad.wishart_lpdf", 1)
  local LS, LW = ad.cholesky_decompose(S), ad.cholesky_decompose(Wm)
  local ldS, ldW = 2 * ad.sum(log_diag(LS, K)), 2 * ad.sum(log_diag(LW, K))
  local tr = ad.dot(inverse_from_chol(LS, K), Wm)
  return -(nu * K / 2) * LOG_2 - lmgamma(K, nu / 2) - (nu / 2) * ldS + ((nu - K - 1) / 2) * ldW - tr / 2
end

-- inv_wishart(W | nu, S) = -(nu K / 2) log 2 - lmgamma(K, nu/2) + (nu/2) log det S
--   - ((nu + K + 1)/2) log det W - tr(S W^-1) / 2
function ad.inv_wishart_lpdf(W, nu, S)
  local Wm, K = dims(W, "ad.inv_wishart_lpdf", 1)
  local LS, LW = ad.cholesky_decompose(S), ad.cholesky_decompose(Wm)
  local ldS, ldW = 2 * ad.sum(log_diag(LS, K)), 2 * ad.sum(log_diag(LW, K))
  local tr = ad.dot(inverse_from_chol(LW, K), ad.matrix(S))
  return -(nu * K / 2) * LOG_2 - lmgamma(K, nu / 2) + (nu / 2) * ldS - ((nu + K + 1) / 2) * ldW - tr / 2
end

-- ------------------------------------------------------ categorical & co

-- outcomes as a list of integers in 1..K (checked)
local function outcomes(y, K, fname)
  local ys = type(y) == "number" and {y} or y
  for i = 1, #ys do
    local v = ys[i]
    if math.type(v) ~= "integer" and not (type(v) == "number" and v == math.floor(v)) or v < 1 or v > K then
      error(fmt("bad argument #1 to '%s' (element %d is %s, expected an integer in 1..%d)", fname, i, tostring(v), K), 3)
    end
  end
  return ys
end
-- counts[k] = how many outcomes are k
local function counts(ys, K)
  local c = {}
  for k = 1, K do c[k] = 0 end
  for i = 1, #ys do c[ys[i]] = c[ys[i]] + 1 end
  return c
end

function ad.categorical_lpmf(y, theta)
  local K = len(theta)
  return ad.dot(counts(outcomes(y, K, "ad.categorical_lpmf"), K), ad.log(theta))
end
function ad.categorical_logit_lpmf(y, beta)
  local K = len(beta)
  local ys = outcomes(y, K, "ad.categorical_logit_lpmf")
  return ad.dot(counts(ys, K), beta) - #ys * ad.log_sum_exp(beta)
end

local function check_counts(ns, fname)
  for i = 1, #ns do
    local v = ns[i]
    if type(v) ~= "number" or v < 0 or v ~= math.floor(v) then
      error(fmt("bad argument #1 to '%s' (element %d is %s, expected a non-negative integer)", fname, i, tostring(v)), 3)
    end
  end
end
local function multinomial_const(ns)
  local N, c = 0, 0
  for i = 1, #ns do N = N + ns[i]; c = c - ad.lgamma(ns[i] + 1) end
  return c + ad.lgamma(N + 1), N
end
function ad.multinomial_lpmf(ns, theta)
  check_counts(ns, "ad.multinomial_lpmf")
  return multinomial_const(ns) + ad.dot(ns, ad.log(theta))
end
function ad.multinomial_logit_lpmf(ns, gamma)
  check_counts(ns, "ad.multinomial_logit_lpmf")
  local c, N = multinomial_const(ns)
  return c + ad.dot(ns, gamma) - N * ad.log_sum_exp(gamma)
end

-- ordered_logistic(y | eta, c): y in 1..K, K - 1 increasing cut points c;
-- P(y = k) = F(c_k - eta) - F(c_{k-1} - eta), c_0 = -inf, c_K = +inf. The
-- outcomes at either end have one term (no infinities reach the tape).
local function ordered(y, eta, c, fname, lcdf)
  local K = len(c) + 1
  local ys = outcomes(y, K, fname)
  local n = #ys
  if len(eta) ~= 1 and len(eta) ~= n then error(fmt("%s: eta has %d elements for %d outcomes", fname, len(eta), n), 3) end
  local g = {first = {c = {}, e = {}}, last = {c = {}, e = {}}, mid = {u = {}, l = {}, e = {}}}
  for i = 1, n do
    local k, e = ys[i], at(eta, i)
    if k == 1 then g.first.c[#g.first.c + 1], g.first.e[#g.first.e + 1] = at(c, 1), e
    elseif k == K then g.last.c[#g.last.c + 1], g.last.e[#g.last.e + 1] = at(c, K - 1), e
    else
      local m = g.mid
      m.u[#m.u + 1], m.l[#m.l + 1], m.e[#m.e + 1] = at(c, k), at(c, k - 1), e
    end
  end
  local lp = 0
  if #g.first.c > 0 then lp = lp + ad.sum(lcdf(ad.sub(g.first.c, g.first.e))) end
  if #g.last.c > 0 then lp = lp + ad.sum(lcdf(ad.sub(g.last.e, g.last.c))) end -- 1 - F(x) = F(-x)
  if #g.mid.u > 0 then
    lp = lp + ad.sum(ad.log_diff_exp(lcdf(ad.sub(g.mid.u, g.mid.e)), lcdf(ad.sub(g.mid.l, g.mid.e))))
  end
  return lp
end
function ad.ordered_logistic_lpmf(y, eta, c)
  return ordered(y, eta, c, "ad.ordered_logistic_lpmf", function(x) return ad.log_inv_logit(x) end)
end
function ad.ordered_probit_lpmf(y, eta, c)
  return ordered(y, eta, c, "ad.ordered_probit_lpmf", function(x) return ad.each.std_normal_lcdf(x) end)
end

-- ------------------------------------------------------------------ GLMs

-- the linear predictor alpha + x beta (x an N x K matrix of data)
local function linear(x, alpha, beta, fname)
  local eta = ad.matvec(x, beta)
  return ad.add(eta, alpha)
end
function ad.normal_id_glm_lpdf(y, x, alpha, beta, sigma)
  return ad.normal_lpdf(y, linear(x, alpha, beta), sigma)
end
function ad.poisson_log_glm_lpmf(y, x, alpha, beta)
  return ad.poisson_log_lpmf(y, linear(x, alpha, beta))
end
function ad.bernoulli_logit_glm_lpmf(y, x, alpha, beta)
  return ad.bernoulli_logit_lpmf(y, linear(x, alpha, beta))
end
function ad.neg_binomial_2_log_glm_lpmf(y, x, alpha, beta, phi)
  return ad.neg_binomial_2_log_lpmf(y, linear(x, alpha, beta), phi)
end
