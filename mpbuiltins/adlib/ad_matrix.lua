-- SPDX-License-Identifier: MIT
-- ad's matrix and vector functions written over its primitives (compiled
-- into mplua, chunk "=ad.matrix"): Stan's names and argument orders. Each
-- is a composition of recorded operations that have second derivatives
-- (pack, elementwise ops, dot, sums, products, triangular solves, the
-- Cholesky factor), so gradients and Hessians go through all of them. A
-- matrix argument is anything ad.matrix takes (a table of rows, a matrix
-- var or constant, a 2-d mp.array); results are matrices (ad.matrix shape),
-- vectors or scalars, vars when an argument is one and numbers otherwise.
local ad = ...
local fmt = string.format

local function mat(A, fname, arg)
  local ok, M = pcall(ad.matrix, A)
  if not ok then error(fmt("bad argument #%d to '%s' (matrix expected)", arg or 1, fname), 3) end
  local r, c = M:dims()
  return M, r, c
end
local function len(v) return type(v) == "number" and 1 or #v end
local function at(v, i) if type(v) == "number" then return v end return v[i] end
local function is_matrix(v)
  if type(v) == "table" then return type(v[1]) == "table" end
  return type(v) == "userdata" and (pcall(ad.matrix, v))
end

-- a matrix from a flat column-major list of numbers and vars
local function from_flat(t, r, c) return ad.matrix(ad.add(t, 0), r, c) end

function ad.transpose(A)
  local M, r, c = mat(A, "ad.transpose")
  local t = {}
  for i = 1, r do for j = 1, c do t[j + (i - 1) * c] = M[i + (j - 1) * r] end end
  return from_flat(t, c, r)
end

function ad.diagonal(A)
  local M, r, c = mat(A, "ad.diagonal")
  local t = {}
  for i = 1, math.min(r, c) do t[i] = M[i + (i - 1) * r] end
  return ad.add(t, 0)
end

function ad.diag_matrix(v)
  local n, t = len(v), {}
  for j = 1, n do for i = 1, n do t[i + (j - 1) * n] = i == j and at(v, i) or 0 end end
  return from_flat(t, n, n)
end

function ad.trace(A) return ad.sum(ad.diagonal(A)) end
function ad.to_vector(A) local M, r, c = mat(A, "ad.to_vector"); return M:slice(1, r * c) end
function ad.dot_self(v) return ad.dot(v, v) end
function ad.rep_vector(x, n) local t = {} for i = 1, n do t[i] = x end return ad.add(t, 0) end
function ad.rep_matrix(x, m, n) local t = {} for i = 1, m * n do t[i] = x end return from_flat(t, m, n) end

function ad.append_row(a, b)
  local t = {}
  for i = 1, len(a) do t[#t + 1] = at(a, i) end
  for i = 1, len(b) do t[#t + 1] = at(b, i) end
  return ad.add(t, 0)
end

function ad.crossprod(A) return ad.matmul(ad.transpose(A), A) end
function ad.tcrossprod(A) return ad.matmul(A, ad.transpose(A)) end

-- L L' of the lower triangle of L
function ad.multiply_lower_tri_self_transpose(A)
  local M, r, c = mat(A, "ad.multiply_lower_tri_self_transpose")
  local t = {}
  for j = 1, c do for i = 1, r do t[i + (j - 1) * r] = i >= j and M[i + (j - 1) * r] or 0 end end
  return ad.tcrossprod(from_flat(t, r, c))
end

-- diag(v) M and M diag(v): elementwise products with v repeated
function ad.diag_pre_multiply(v, A)
  local M, r, c = mat(A, "ad.diag_pre_multiply", 2)
  if len(v) ~= r then error(fmt("ad.diag_pre_multiply: vector of %d for %d rows", len(v), r), 2) end
  local t = {}
  for j = 1, c do for i = 1, r do t[i + (j - 1) * r] = at(v, i) end end
  return ad.matrix(ad.mul(ad.add(t, 0), M), r, c)
end

function ad.diag_post_multiply(A, v)
  local M, r, c = mat(A, "ad.diag_post_multiply")
  if len(v) ~= c then error(fmt("ad.diag_post_multiply: vector of %d for %d columns", len(v), c), 2) end
  local t = {}
  for j = 1, c do for i = 1, r do t[i + (j - 1) * r] = at(v, j) end end
  return ad.matrix(ad.mul(ad.add(t, 0), M), r, c)
end

-- quad_form(A, B) = B' A B (a number when B is a vector)
function ad.quad_form(A, B)
  if not is_matrix(B) then return ad.dot(B, ad.matvec(A, B)) end
  return ad.matmul(ad.transpose(B), ad.matmul(A, B))
end
function ad.quad_form_sym(A, B)
  local Q = ad.quad_form(A, B)
  if type(Q) == "number" or not Q.dims then return Q end
  return ad.matrix(ad.mul(0.5, ad.add(Q, ad.transpose(Q))), Q:dims())
end
function ad.quad_form_diag(A, v) return ad.diag_post_multiply(ad.diag_pre_multiply(v, A), v) end

function ad.softmax(v) return ad.exp(ad.log_softmax(v)) end
function ad.log_softmax(v) return ad.sub(v, ad.log_sum_exp(v)) end

function ad.mean(v) return ad.sum(v) / len(v) end
function ad.variance(v)
  local n = len(v)
  local d = ad.sub(v, ad.mean(v))
  return ad.dot(d, d) / (n - 1)
end
function ad.sd(v) return ad.sqrt(ad.variance(v)) end

function ad.cumulative_sum(v)
  local t, s = {}, 0
  for i = 1, len(v) do s = s + at(v, i); t[i] = s end
  return ad.add(t, 0)
end

function ad.columns_dot_product(A, B)
  local M, r, c = mat(A, "ad.columns_dot_product")
  local N = mat(B, "ad.columns_dot_product", 2)
  local t = {}
  for j = 1, c do t[j] = ad.dot(M:slice((j - 1) * r + 1, j * r), N:slice((j - 1) * r + 1, j * r)) end
  return ad.add(t, 0)
end
function ad.columns_dot_self(A) return ad.columns_dot_product(A, A) end
function ad.rows_dot_product(A, B) return ad.columns_dot_product(ad.transpose(A), ad.transpose(B)) end
function ad.rows_dot_self(A) return ad.rows_dot_product(A, A) end

-- Gauss-Jordan elimination on scalars (numbers and vars), pivoting on the
-- values: inverse(A), mdivide_left(A, B) = A^-1 B, determinant(A)
local function rows_of(A, fname)
  local M, r, c = mat(A, fname)
  if r ~= c then error(fmt("bad argument #1 to '%s' (square matrix expected, got %dx%d)", fname, r, c), 3) end
  local R = {}
  for i = 1, r do R[i] = {} for j = 1, c do R[i][j] = M[i + (j - 1) * r] end end
  return R, r
end

local function solve(A, B, nb, fname)
  local R, n = rows_of(A, fname)
  for i = 1, n do for j = 1, nb do R[i][n + j] = B(i, j) end end
  local det = 1
  for k = 1, n do
    local p, best = k, math.abs(ad.value(R[k][k]))
    for i = k + 1, n do
      local v = math.abs(ad.value(R[i][k]))
      if v > best then p, best = i, v end
    end
    if p ~= k then R[k], R[p] = R[p], R[k]; det = -det end
    local piv = R[k][k]
    det = det * piv
    for j = k, n + nb do R[k][j] = R[k][j] / piv end
    for i = 1, n do
      if i ~= k then
        local f = R[i][k]
        if ad.value(f) ~= 0 or type(f) ~= "number" then
          for j = k, n + nb do R[i][j] = R[i][j] - f * R[k][j] end
        end
      end
    end
  end
  return R, n, det
end

function ad.inverse(A)
  local R, n = solve(A, function(i, j) return i == j and 1 or 0 end, (mat(A, "ad.inverse")):dims(), "ad.inverse")
  local t = {}
  for j = 1, n do for i = 1, n do t[i + (j - 1) * n] = R[i][n + j] end end
  return from_flat(t, n, n)
end

function ad.mdivide_left(A, B)
  local vec = not is_matrix(B)
  local Bm, br, bc
  if vec then Bm, br, bc = B, len(B), 1 else Bm, br, bc = mat(B, "ad.mdivide_left", 2) end
  local R, n = solve(A, function(i, j) return vec and at(Bm, i) or Bm[i + (j - 1) * br] end, bc, "ad.mdivide_left")
  local t = {}
  for j = 1, bc do for i = 1, n do t[i + (j - 1) * n] = R[i][n + j] end end
  return vec and ad.add(t, 0) or from_flat(t, n, bc)
end

-- B A^-1 = (A'^-1 B')'
function ad.mdivide_right(B, A)
  if not is_matrix(B) then return ad.mdivide_left(ad.transpose(A), B) end
  return ad.transpose(ad.mdivide_left(ad.transpose(A), ad.transpose(B)))
end

function ad.determinant(A)
  local _, _, det = solve(A, function() return 0 end, 0, "ad.determinant")
  return det
end

-- symmetric positive definite: through the Cholesky factor
function ad.mdivide_left_spd(A, B)
  local L = ad.cholesky_decompose(A)
  return ad.mdivide_left_tri_low(L, ad.mdivide_left_tri_low(L, B), "T")
end
function ad.inverse_spd(A)
  local _, n = mat(A, "ad.inverse_spd")
  return ad.mdivide_left_spd(A, ad.diag_matrix(ad.rep_vector(1, n)))
end
-- B L^-1 for a lower L: (L'^-1 B')'
function ad.mdivide_right_tri_low(B, L)
  if not is_matrix(B) then return ad.mdivide_left_tri_low(L, B, "T") end
  return ad.transpose(ad.mdivide_left_tri_low(L, ad.transpose(B), "T"))
end

-- Gaussian process covariances (Stan's gp_*_cov): x a list of numbers or
-- of vectors; x2 optional (cross covariances); the squared distances are
-- data when the points are, so only alpha, rho (and the period) are vars.
local function sq_dist(x1, x2)
  local n1, n2, d2 = #x1, #x2, {}
  local numbers = true
  for _, xs in ipairs{x1, x2} do
    for i = 1, #xs do
      local p = xs[i]
      if type(p) == "table" then for k = 1, #p do numbers = numbers and type(p[k]) == "number" end
      else numbers = numbers and type(p) == "number" end
    end
  end
  for j = 1, n2 do
    for i = 1, n1 do
      local a, b, s = x1[i], x2[j], 0
      if type(a) == "table" or type(a) == "userdata" then
        for k = 1, #a do s = s + (a[k] - b[k]) ^ 2 end
      else
        s = (a - b) ^ 2
      end
      d2[i + (j - 1) * n1] = s
    end
  end
  return numbers and ad.matrix(d2, n1, n2) or from_flat(d2, n1, n2), n1, n2
end

local function gp(name, x1, rest, kernel)
  local x2 = x1
  if type(rest[1]) == "table" then x2 = table.remove(rest, 1) end
  if type(x1) ~= "table" or #x1 == 0 then error(fmt("bad argument #1 to 'ad.%s' (list of points expected)", name), 3) end
  local D2, n1, n2 = sq_dist(x1, x2)
  return ad.matrix(kernel(D2, table.unpack(rest)), n1, n2)
end

function ad.gp_exp_quad_cov(x, ...)
  return gp("gp_exp_quad_cov", x, {...}, function(D2, alpha, rho)
    return ad.mul(ad.exp(ad.mul(D2, -0.5 / ad.square(rho))), ad.square(alpha))
  end)
end
function ad.gp_exponential_cov(x, ...)
  return gp("gp_exponential_cov", x, {...}, function(D2, alpha, rho)
    return ad.mul(ad.exp(ad.div(ad.neg(ad.sqrt(ad.add(D2, 0))), rho)), ad.square(alpha))
  end)
end
function ad.gp_matern32_cov(x, ...)
  return gp("gp_matern32_cov", x, {...}, function(D2, alpha, rho)
    local r = ad.div(ad.mul(ad.sqrt(ad.add(D2, 0)), math.sqrt(3)), rho)
    return ad.mul(ad.mul(ad.add(r, 1), ad.exp(ad.neg(r))), ad.square(alpha))
  end)
end
function ad.gp_matern52_cov(x, ...)
  return gp("gp_matern52_cov", x, {...}, function(D2, alpha, rho)
    local r = ad.div(ad.mul(ad.sqrt(ad.add(D2, 0)), math.sqrt(5)), rho)
    local poly = ad.add(ad.add(r, ad.div(ad.square(r), 3)), 1)
    return ad.mul(ad.mul(poly, ad.exp(ad.neg(r))), ad.square(alpha))
  end)
end
function ad.gp_periodic_cov(x, ...)
  return gp("gp_periodic_cov", x, {...}, function(D2, alpha, rho, period)
    local s = ad.sin(ad.div(ad.mul(ad.sqrt(ad.add(D2, 0)), math.pi), period))
    return ad.mul(ad.exp(ad.div(ad.mul(ad.square(s), -2), ad.square(rho))), ad.square(alpha))
  end)
end
function ad.gp_dot_prod_cov(x, sigma)
  local n, t = #x, {}
  for j = 1, n do
    for i = 1, n do
      local a, b = x[i], x[j]
      t[i + (j - 1) * n] = (type(a) == "number") and a * b or ad.dot(a, b)
    end
  end
  return ad.matrix(ad.add(from_flat(t, n, n), ad.square(sigma)), n, n)
end
