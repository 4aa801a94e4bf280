-- SPDX-License-Identifier: MIT
-- transforms: Stan's constraint transforms (pure Lua over ad).
--
--   local T = require "mplua.transforms"
--   local x, lj = T.lower(y, 0)          -- x = 0 + exp(y), log|dx/dy| = sum(y)
--
-- Each function maps unconstrained values y to constrained values x and
-- returns x and the log absolute Jacobian determinant lj of the map (what a
-- log density on x needs added to be a density on y). y may be a number, a
-- scalar var, a table of numbers/vars, an ad.Const or a vector var (an
-- ad.Vec slice of the sampler's vector): with vars in, x and lj are vars and
-- carry derivatives; with numbers in, they are numbers (ad.Consts for
-- vectors). Definitions follow the Stan reference manual ("Constraint
-- transforms"):
--
--   lower(y, lb)        x = lb + exp(y)                     lj = sum y
--   upper(y, ub)        x = ub - exp(y)                     lj = sum y
--   bounds(y, lb, ub)   x = lb + (ub - lb) inv_logit(y)
--                       lj = sum log(ub - lb) + log_inv_logit(y) + log_inv_logit(-y)
--   ordered(y)          x1 = y1, xk = x(k-1) + exp(yk)      lj = sum_{k>=2} yk
--   positive_ordered(y) x1 = exp(y1), xk = x(k-1) + exp(yk) lj = sum yk
--   simplex(y)          K-1 values -> K, stick breaking: z_k = inv_logit(y_k - log(K-k)),
--                       x_k = (1 - x_1 - ... - x_(k-1)) z_k, x_K the rest;
--                       lj = sum_k log(stick_k) + log z_k + log(1 - z_k)
--   unit_vector(y)      x = y / |y|; lj = -|y|^2 / 2 (not a Jacobian: it makes
--                       the density on y proper, as Stan does)
--   offset_multiplier(y, mu, s)  x = mu + s y           lj = sum log s (s > 0)
--   sum_to_zero(y)      N-1 values -> N summing to 0 (Stan's isometric transform,
--                       linear: lj = 0)
--   cholesky_factor_cov(y, M, N)  M x N lower factor (M >= N): row by row, the
--                       diagonal exp(y), the rest y; lj = sum of the diagonal's y
--   cov_matrix(y, K)    K + K(K-1)/2 values -> Sigma = L L', L as cholesky_factor_cov;
--                       lj = K log 2 + sum_k (K - k + 2) y_kk (Jacobian to Sigma's
--                       lower triangle)
--   corr_matrix(y, K)   K(K-1)/2 values -> Omega = L L', L as cholesky_corr;
--                       lj = sum log(1 - z^2) + 0.5 sum_(i>j) (K - j - 1) log(1 - z_ij^2)
--                       (Jacobian to Omega's strictly lower triangle)
--   cholesky_corr(y, K) K(K-1)/2 values -> the K x K lower Cholesky factor of a
--                       correlation matrix: z = tanh(y) (canonical partial
--                       correlations), row i: L[i][1] = z, L[i][j] = z sqrt(1 - sum of
--                       squares so far), L[i][i] = sqrt(1 - sum of squares);
--                       lj = sum log(1 - z^2) + sum 0.5 log(1 - sum of squares)
--                       (Jacobian of y -> the strictly lower triangle of L)
--
-- Bounds, offsets and multipliers may be numbers, vars, or vectors of
-- either (one per element). Vectors come back as ad vectors (vars) or
-- ad.Consts (numbers); the matrices as ad.matrix shapes (column-major).

local M = {}

local function len(y) return type(y) == "number" and 1 or #y end
local function at(y, i) if type(y) == "number" then return y end return y[i] end


-- pack a list of numbers/vars into one vector (ad vector or ad.Const)
local function pack(t) return ad.add(t, 0) end

-- a number or a scalar var (not a vector of them)
local function is_scalar(y)
  local mt = getmetatable(y)
  return type(y) == "number" or type(mt) == "table" and mt.__name == "ad.Var"
end

-- sum over the elements of log(w), w a scalar (for n elements) or a vector
local function sum_log(w, n)
  if is_scalar(w) then return n * ad.log(w) end
  return ad.sum(ad.log(w))
end

function M.lower(y, lb)
  if is_scalar(y) and is_scalar(lb) then return ad.exp(y) + lb, y end
  return ad.add(ad.exp(y), lb), ad.sum(y)
end

function M.upper(y, ub)
  if is_scalar(y) and is_scalar(ub) then return ub - ad.exp(y), y end
  return ad.sub(ub, ad.exp(y)), ad.sum(y)
end

function M.bounds(y, lb, ub)
  local w = ad.sub(ub, lb)
  local lj = ad.log_inv_logit(y) + ad.log_inv_logit(ad.neg(y))
  if is_scalar(y) and is_scalar(w) then return lb + w * ad.inv_logit(y), lj + ad.log(w) end
  return ad.add(ad.mul(ad.inv_logit(y), w), lb), ad.sum(lj) + sum_log(w, len(y))
end

function M.offset_multiplier(y, mu, sd)
  if is_scalar(y) and is_scalar(mu) and is_scalar(sd) then return mu + sd * y, ad.log(sd) end
  return ad.add(ad.mul(y, sd), mu), sum_log(sd, len(y))
end

-- Stan's sum_to_zero_constrain as a constant matrix (N x N-1, column-major)
local stz_cache = {}
local function stz_matrix(N)
  if stz_cache[N] then return stz_cache[N] end
  local Q = {}
  for c = 1, N - 1 do
    local z = {}
    for i = 1, N do z[i] = 0 end
    local sum_w = 0
    for i = N - 1, 1, -1 do
      local w = (i == c and 1 or 0) / math.sqrt(i * (i + 1))
      sum_w = sum_w + w
      z[i] = z[i] + sum_w
      z[i + 1] = z[i + 1] - w * i
    end
    for i = 1, N do Q[i + (c - 1) * N] = z[i] end
  end
  local A = ad.matrix(Q, N, N - 1)
  stz_cache[N] = A
  return A
end

function M.sum_to_zero(y)
  local N = len(y) + 1
  return ad.matvec(stz_matrix(N), y), 0
end

function M.ordered(y)
  local n, x = len(y), {}
  x[1] = at(y, 1)
  local lj = 0
  for k = 2, n do
    x[k] = x[k - 1] + ad.exp(at(y, k))
    lj = lj + at(y, k)
  end
  return pack(x), lj
end

function M.positive_ordered(y)
  local n, x = len(y), {}
  local e = ad.exp(y)
  x[1] = at(e, 1)
  for k = 2, n do x[k] = x[k - 1] + at(e, k) end
  return pack(x), ad.sum(y)
end

function M.simplex(y)
  local K = len(y) + 1
  local x, stick, lj = {}, 1, 0
  for k = 1, K - 1 do
    local a = at(y, k) - math.log(K - k)
    local z = ad.inv_logit(a)
    x[k] = stick * z
    lj = lj + ad.log(stick) + ad.log_inv_logit(a) + ad.log_inv_logit(-a)
    stick = stick - x[k]
  end
  x[K] = stick
  return pack(x), lj
end

function M.unit_vector(y)
  local r2 = ad.dot(y, y)
  return ad.div(y, ad.sqrt(r2)), -0.5 * r2
end

-- the K x K factor from K(K-1)/2 values
function M.cholesky_corr(y, K)
  assert(len(y) == K * (K - 1) // 2, "cholesky_corr: needs K(K-1)/2 values")
  local z = ad.tanh(y)
  local lj = ad.sum(ad.log1m(ad.square(z)))
  local L, k = {}, 0
  for i = 1, K do L[i] = {} for j = 1, K do L[i][j] = 0 end end
  L[1][1] = 1
  for i = 2, K do
    k = k + 1
    L[i][1] = at(z, k)
    local ss = ad.square(L[i][1])
    for j = 2, i - 1 do
      k = k + 1
      lj = lj + 0.5 * ad.log1m(ss)
      L[i][j] = at(z, k) * ad.sqrt(1 - ss)
      ss = ss + ad.square(L[i][j])
    end
    L[i][i] = ad.sqrt(1 - ss)
  end
  return ad.matrix(L), lj
end

-- rows (tables) of an M x N lower factor from free values: row by row,
-- entries left of the diagonal as they are, the diagonal exp(y)
local function lower_factor(y, M, N)
  local L, k, lj = {}, 0, 0
  for i = 1, M do
    L[i] = {}
    for j = 1, N do
      if j < i or i > N then
        k = k + 1
        L[i][j] = at(y, k)
      elseif j == i then
        k = k + 1
        L[i][j] = ad.exp(at(y, k))
        lj = lj + at(y, k)
      else
        L[i][j] = 0
      end
    end
  end
  return L, lj
end

function M.cholesky_factor_cov(y, Mr, N)
  N = N or Mr
  assert(len(y) == N * (N + 1) // 2 + (Mr - N) * N, "cholesky_factor_cov: needs N(N+1)/2 + (M-N)N values")
  local L, lj = lower_factor(y, Mr, N)
  return ad.matrix(L), lj
end

-- L L' of rows (a K x K lower factor), as rows
local function self_transpose(L, K)
  local S = {}
  for i = 1, K do S[i] = {} end
  for i = 1, K do
    for j = 1, i do
      local s = 0
      for k = 1, j do s = s + L[i][k] * L[j][k] end
      S[i][j], S[j][i] = s, s
    end
  end
  return S
end

function M.cov_matrix(y, K)
  assert(len(y) == K * (K + 1) // 2, "cov_matrix: needs K + K(K-1)/2 values")
  local L = lower_factor(y, K, K)
  local lj, k = K * math.log(2), 0
  for i = 1, K do
    k = k + i
    lj = lj + (K - i + 2) * at(y, k)
  end
  return ad.matrix(self_transpose(L, K)), lj
end

function M.corr_matrix(y, K)
  local Lm = M.cholesky_corr(y, K)
  local z = ad.tanh(y)
  local lj, k = ad.sum(ad.log1m(ad.square(z))), 0
  for i = 2, K do
    for j = 1, i - 1 do
      k = k + 1
      if K - j - 1 > 0 then lj = lj + 0.5 * (K - j - 1) * ad.log1m(ad.square(at(z, k))) end
    end
  end
  local L = {}
  for i = 1, K do
    L[i] = {}
    for j = 1, K do L[i][j] = Lm[i + (j - 1) * K] end
  end
  return ad.matrix(self_transpose(L, K)), lj
end

M.is_scalar = is_scalar
return M
