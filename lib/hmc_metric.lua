-- SPDX-License-Identifier: MIT
-- hmc_metric: the Euclidean metrics of Stan's samplers (unit_e, diag_e,
-- dense_e) and their estimators for warmup.
--
-- A metric holds the inverse metric Minv (the posterior covariance it
-- approximates): a list (unit_e, diag_e) or a table of rows (dense_e, with
-- its lower Cholesky factor L, Minv = L L'). The kinetic energy is
-- p' Minv p / 2, the velocity Minv p, and momenta are drawn from N(0, M):
-- p = z / sqrt(Minv) (diagonal), p = L'^-1 z (dense).
--
-- The estimators are Welford's running (co)variance of the draws in a
-- window, regularized towards 1e-3 I as Stan does:
--   Minv = n / (n + 5) C + 1e-3 * 5 / (n + 5) I.

local M = {}
local sqrt = math.sqrt
local fmt = string.format

-- lower Cholesky factor of a symmetric positive definite table of rows, or nil
local function cholesky(A)
  local n, L = #A, {}
  for i = 1, n do L[i] = {} for j = 1, n do L[i][j] = 0 end end
  for j = 1, n do
    local s = A[j][j]
    for k = 1, j - 1 do s = s - L[j][k] * L[j][k] end
    if not (s > 0) then return nil end
    local d = sqrt(s)
    L[j][j] = d
    for i = j + 1, n do
      local t = A[i][j]
      for k = 1, j - 1 do t = t - L[i][k] * L[j][k] end
      L[i][j] = t / d
    end
  end
  return L
end
M.cholesky = cholesky

local Diag, Dense = {}, {}
Diag.__index, Dense.__index = Diag, Dense

function Diag:kinetic(p)
  local k, minv = 0, self.minv
  for i = 1, #p do k = k + minv[i] * p[i] * p[i] end
  return 0.5 * k
end
function Diag:velocity(p)
  local r, minv = {}, self.minv
  for i = 1, #p do r[i] = minv[i] * p[i] end
  return r
end
function Diag:draw(rng)
  local p, minv = {}, self.minv
  for i = 1, self.dim do p[i] = rng.normal() / sqrt(minv[i]) end
  return p
end
function Diag:copy()
  local c = {}
  for i = 1, self.dim do c[i] = self.minv[i] end
  return c
end

function Dense:velocity(p)
  local r, A, n = {}, self.minv, self.dim
  for i = 1, n do
    local row, s = A[i], 0
    for j = 1, n do s = s + row[j] * p[j] end
    r[i] = s
  end
  return r
end
function Dense:kinetic(p)
  local v, k = self:velocity(p), 0
  for i = 1, #p do k = k + v[i] * p[i] end
  return 0.5 * k
end
function Dense:draw(rng)
  local n, L, p = self.dim, self.L, {}
  for i = 1, n do p[i] = rng.normal() end
  for i = n, 1, -1 do -- L' p = z: back substitution (row i of L' is column i of L)
    local s = p[i]
    for k = i + 1, n do s = s - L[k][i] * p[k] end
    p[i] = s / L[i][i]
  end
  return p
end
function Dense:copy()
  local c = {}
  for i = 1, self.dim do c[i] = {table.unpack(self.minv[i])} end
  return c
end

-- A metric of kind "unit_e", "diag_e" or "dense_e" in dim dimensions, from
-- inv (nil: the identity). Returns nil, message when inv does not fit.
function M.new(kind, dim, inv)
  if kind == "dense_e" then
    local A = {}
    for i = 1, dim do
      A[i] = {}
      for j = 1, dim do
        local v = inv and (type(inv[i]) == "table" and inv[i][j]) or (not inv and (i == j and 1 or 0))
        if type(v) ~= "number" then
          return nil, fmt("inv_metric must be a %dx%d table of rows for metric \"dense_e\"", dim, dim)
        end
        A[i][j] = v + 0.0
      end
    end
    for i = 1, dim do
      for j = 1, i - 1 do
        if math.abs(A[i][j] - A[j][i]) > 1e-12 * math.max(1, math.abs(A[i][j])) then
          return nil, fmt("inv_metric is not symmetric ([%d][%d] ~= [%d][%d])", i, j, j, i)
        end
      end
    end
    local L = cholesky(A)
    if not L then return nil, "inv_metric is not positive definite" end
    return setmetatable({kind = kind, dim = dim, minv = A, L = L}, Dense)
  end
  local d = {}
  for i = 1, dim do
    local v = 1.0
    if kind == "diag_e" and inv then v = inv[i] end
    if type(v) ~= "number" or not (v > 0 and v < math.huge) then
      return nil, fmt("inv_metric must hold %d positive numbers for metric \"%s\"", dim, kind)
    end
    d[i] = v + 0.0
  end
  if kind == "unit_e" and inv then return nil, "metric \"unit_e\" takes no inv_metric" end
  return setmetatable({kind = kind, dim = dim, minv = d}, Diag)
end

-- A window's estimator: add(q) each draw, estimate() the regularized Minv.
function M.estimator(kind, dim)
  local E = {n = 0, mean = {}, m2 = {}}
  local dense = kind == "dense_e"
  for i = 1, dim do
    E.mean[i] = 0
    if dense then E.m2[i] = {} for j = 1, dim do E.m2[i][j] = 0 end else E.m2[i] = 0 end
  end
  function E.add(q)
    E.n = E.n + 1
    local d = {}
    for i = 1, dim do
      d[i] = q[i] - E.mean[i]
      E.mean[i] = E.mean[i] + d[i] / E.n
    end
    for i = 1, dim do
      local after = q[i] - E.mean[i]
      if dense then
        local row = E.m2[i]
        for j = 1, dim do row[j] = row[j] + after * d[j] end
      else
        E.m2[i] = E.m2[i] + d[i] * after
      end
    end
  end
  function E.estimate()
    local n = E.n
    local w, r = n / (n + 5), 1e-3 * 5 / (n + 5)
    local out = {}
    for i = 1, dim do
      if dense then
        out[i] = {}
        for j = 1, dim do out[i][j] = w * E.m2[i][j] / (n - 1) + (i == j and r or 0) end
      else
        out[i] = w * E.m2[i] / (n - 1) + r
      end
    end
    if dense then -- exact symmetry (rounding in the running sums)
      for i = 1, dim do for j = 1, i - 1 do
        local s = 0.5 * (out[i][j] + out[j][i])
        out[i][j], out[j][i] = s, s
      end end
    end
    return out
  end
  return E
end

return M
