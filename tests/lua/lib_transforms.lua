-- ranks: nompi
-- SPDX-License-Identifier: MIT
-- lib/transforms.lua and lib/params.lua: each transform's log-Jacobian
-- against log|det| of a finite-difference Jacobian of the map, the
-- constraints holding, vars and numbers giving the same values, gradients
-- by ad.check_grad, and the model helper (declarations, names, unpacking).

local T = require "mplua.transforms"
local params = require "mplua.params"
local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local fmt = string.format

-- log |det A| by Gaussian elimination with partial pivoting (A: rows)
local function logdet(A)
  local n, a = #A, {}
  for i = 1, n do a[i] = {table.unpack(A[i])} end
  local ld = 0
  for k = 1, n do
    local p = k
    for i = k + 1, n do if math.abs(a[i][k]) > math.abs(a[p][k]) then p = i end end
    a[k], a[p] = a[p], a[k]
    ld = ld + math.log(math.abs(a[k][k]))
    for i = k + 1, n do
      local f = a[i][k] / a[k][k]
      for j = k, n do a[i][j] = a[i][j] - f * a[k][j] end
    end
  end
  return ld
end

-- the numbers of a constrained value (number, ad.Const, matrix) as a list
local function nums(x)
  if type(x) == "number" then return {x} end
  local t = {}
  for i = 1, #x do t[i] = x[i] end
  return t
end

-- finite-difference Jacobian of y -> pick(F(y)) (central, order 4)
local function fd_logdet(F, y, pick)
  local n, J = #y, {}
  local base = pick(nums((F(y))))
  for i = 1, #base do J[i] = {} end
  for j = 1, n do
    local h = 1e-4 * math.max(1, math.abs(y[j]))
    local cols = {}
    for s, k in ipairs{-2, -1, 1, 2} do
      local yy = {table.unpack(y)}
      yy[j] = y[j] + k * h
      cols[s] = pick(nums((F(yy))))
    end
    for i = 1, #base do J[i][j] = (cols[1][i] - 8 * cols[2][i] + 8 * cols[3][i] - cols[4][i]) / (12 * h) end
  end
  return logdet(J)
end

local all = function(t) return t end
local cases = {
  {"lower", function(y) return T.lower(y, -1.5) end, {0.3, -1.2, 2.0}, all},
  {"upper", function(y) return T.upper(y, 2.5) end, {0.3, -1.2, 2.0}, all},
  {"bounds", function(y) return T.bounds(y, -1, 3) end, {0.3, -1.2, 2.0}, all},
  {"ordered", function(y) return T.ordered(y) end, {0.3, -1.2, 2.0, 0.1}, all},
  {"positive_ordered", function(y) return T.positive_ordered(y) end, {0.3, -1.2, 2.0, 0.1}, all},
  -- a simplex's density is on its first K-1 values
  {"simplex", function(y) return T.simplex(y) end, {0.3, -1.2, 2.0, 0.1},
   function(t) return {table.unpack(t, 1, #t - 1)} end},
  -- the Cholesky factor's on its strictly lower triangle
  {"cholesky_corr", function(y) return T.cholesky_corr(y, 4) end, {0.3, -1.2, 0.9, 0.1, -0.4, 0.6},
   function(t)
     local r, K = {}, 4
     for j = 1, K do for i = j + 1, K do r[#r + 1] = t[i + (j - 1) * K] end end
     return r
   end},
  -- vector bounds and multipliers, one per element
  {"bounds (vectors)", function(y) return T.bounds(y, {-1, 0, 2}, {3, 0.5, 9}) end, {0.3, -1.2, 2.0}, all},
  {"lower (vector)", function(y) return T.lower(y, {-1, 0, 2}) end, {0.3, -1.2, 2.0}, all},
  {"offset_multiplier", function(y) return T.offset_multiplier(y, 1.5, 0.3) end, {0.3, -1.2, 2.0}, all},
  {"offset_multiplier (vectors)", function(y) return T.offset_multiplier(y, {1, 2, 3}, {0.5, 2, 4}) end, {0.3, -1.2, 2.0}, all},
  {"cholesky_factor_cov", function(y) return T.cholesky_factor_cov(y, 4, 3) end,
   {0.3, -1.2, 0.9, 0.1, -0.4, 0.6, 0.2, -0.3, 0.7}, function(t) -- the free entries: lower triangle, all of row 4
     local r = {}
     for j = 1, 3 do for i = j, 4 do r[#r + 1] = t[i + (j - 1) * 4] end end
     return r
   end},
  -- a covariance matrix's density is on its lower triangle, a correlation
  -- matrix's on its strictly lower triangle
  {"cov_matrix", function(y) return T.cov_matrix(y, 3) end, {0.3, -1.2, 0.9, 0.1, -0.4, 0.6},
   function(t) local r = {} for j = 1, 3 do for i = j, 3 do r[#r + 1] = t[i + (j - 1) * 3] end end return r end},
  {"corr_matrix", function(y) return T.corr_matrix(y, 4) end, {0.3, -1.2, 0.9, 0.1, -0.4, 0.6},
   function(t) local r = {} for j = 1, 4 do for i = j + 1, 4 do r[#r + 1] = t[i + (j - 1) * 4] end end return r end},
}
for _, c in ipairs(cases) do
  local name, F, y, pick = c[1], c[2], c[3], c[4]
  local x, lj = F(y)
  local want = fd_logdet(F, y, pick)
  assert(math.abs(lj - want) <= 1e-7 * math.max(1, math.abs(want)),
         fmt("%s: log-Jacobian %.12g, finite-difference log|det| %.12g", name, lj, want))
  -- vars give the same numbers, and derivatives
  local xs = nums(x)
  local v = ad.grad(function(t)
    local xv, ljv = F(t)
    for i = 1, #xs do assert(ad.value(xv[i]) == xs[i], name .. ": vars and numbers disagree") end
    return ljv
  end, y)
  assert(v == lj, name .. ": log-Jacobian on vars")
  local w = {}
  for i = 1, #xs do w[i] = math.cos(i) end
  C.grad(name, function(t) local xv, ljv = F(t); return ad.dot(w, xv) + ljv end, y)
end
-- scalars
for _, c in ipairs{{"lower", T.lower, -1.5}, {"upper", T.upper, 2.5}} do
  local x, lj = c[2](0.7, c[3])
  assert(type(x) == "number" and lj == 0.7, c[1] .. " scalar")
end
local xb, ljb = T.bounds(0.7, -1, 3)
assert(math.abs(ljb - (math.log(4) + math.log(1 / (1 + math.exp(-0.7))) + math.log(1 / (1 + math.exp(0.7))))) < 1e-15)
assert(xb > -1 and xb < 3)

-- the constraints hold
local s = T.simplex({5, -7, 0.3, 30})
local tot = 0
for i = 1, #s do assert(s[i] >= 0, "simplex: negative"); tot = tot + s[i] end
assert(#s == 5 and math.abs(tot - 1) < 1e-15, "simplex sums to 1")
assert(C.close(T.simplex({0, 0, 0})[1], 0.25, 1e-15), "simplex: y = 0 is the centre")
local o = T.ordered({3, -5, 2, -1})
for i = 2, #o do assert(o[i] > o[i - 1], "ordered") end
local po = T.positive_ordered({-3, -5, 2, -1})
assert(po[1] > 0)
for i = 2, #po do assert(po[i] > po[i - 1], "positive_ordered") end
local u, lju = T.unit_vector({3, 4})
assert(C.close(u[1], 0.6, 1e-15) and C.close(u[2], 0.8, 1e-15) and lju == -12.5, "unit_vector")
C.grad("unit_vector", function(t) local x, l = T.unit_vector(t); return ad.dot({1, -2, 0.5}, x) + l end, {0.3, -1.2, 2})
local L = ad.value(T.cholesky_corr({0.3, -1.2, 0.9, 0.1, -0.4, 0.6}, 4))
for i = 1, 4 do
  local ss = 0
  for j = 1, 4 do ss = ss + L[i][j] ^ 2; if j > i then assert(L[i][j] == 0) end end
  assert(C.close(ss, 1, 1e-14) and L[i][i] > 0, "cholesky_corr: rows of unit length")
end

-- sum_to_zero: sums to 0, linear (its log-Jacobian, a constant, is left out as Stan does)
local z0 = T.sum_to_zero({0.3, -1.2, 2.0, 0.5})
local zs = 0
for i = 1, 5 do zs = zs + z0[i] end
assert(#z0 == 5 and math.abs(zs) < 1e-14, "sum_to_zero sums to zero")
local function stz4(y) local x = T.sum_to_zero(y); return x end
local d1 = fd_logdet(stz4, {0.3, -1.2, 2.0, 0.5}, function(t) return {table.unpack(t, 1, 4)} end)
local d2 = fd_logdet(stz4, {-2, 1, 0.1, 3}, function(t) return {table.unpack(t, 1, 4)} end)
assert(math.abs(d1 - d2) < 1e-8 and select(2, T.sum_to_zero({1, 2})) == 0, "sum_to_zero: constant Jacobian")
-- its image is isometric: |x|^2 = |y|^2 (Stan's transform, not the sum-to-the-rest one)
local zz = 0
for i = 1, 5 do zz = zz + z0[i] ^ 2 end
assert(C.close(zz, 0.09 + 1.44 + 4 + 0.25, 1e-14), "sum_to_zero is isometric")
-- correlation and covariance matrices: symmetric, positive definite, unit diagonal
local Om = ad.value(T.corr_matrix({0.3, -1.2, 0.9, 0.1, -0.4, 0.6}, 4))
for i = 1, 4 do
  assert(C.close(Om[i][i], 1, 1e-14), "corr_matrix: unit diagonal")
  for j = 1, 4 do assert(Om[i][j] == Om[j][i] and math.abs(Om[i][j]) <= 1) end
end
local Sg = ad.value(T.cov_matrix({0.3, -1.2, 0.9, 0.1, -0.4, 0.6}, 3))
assert(C.close(Sg[1][1], math.exp(0.6), 1e-14) and C.close(Sg[2][1], -1.2 * math.exp(0.3), 1e-14) and Sg[1][2] == Sg[2][1])

-- the parameter declarations (lib/params.lua)
local m = params{
  {"mu"}, {"tau", lower = 0}, {"theta", 3}, {"sigma", 2, lower = 0, upper = 5},
  {"w", 3, "simplex"}, {"c", 3, "ordered"}, {"R", 3, "cholesky_corr"},
}
assert(m.dim == 1 + 1 + 3 + 2 + 2 + 3 + 3, "dim " .. m.dim)
assert(#m.names == 1 + 1 + 3 + 2 + 3 + 3 + 9 and m.names[1] == "mu" and m.names[3] == "theta[1]"
       and m.names[#m.names] == "R[3,3]" and m.names[#m.names - 1] == "R[2,3]", "names")
local x0 = m:init(7)
assert(#x0 == m.dim)
for i = 1, m.dim do assert(x0[i] > -2 and x0[i] < 2, "init in (-2, 2)") end
local p, lj = m:unpack(x0)
assert(type(p.mu) == "number" and p.mu == x0[1] and p.tau == math.exp(x0[2]) and #p.theta == 3 and #p.w == 3)
local vals = m:constrain(x0)
assert(#vals == #m.names and vals[2] == p.tau and vals[#vals] == ad.value(p.R)[3][3])
-- lj is the sum of the parts
local want = x0[2] + select(2, T.bounds({x0[6], x0[7]}, 0, 5)) + select(2, T.simplex({x0[8], x0[9]}))
             + select(2, T.ordered({x0[10], x0[11], x0[12]})) + select(2, T.cholesky_corr({x0[13], x0[14], x0[15]}, 3))
assert(C.close(lj, want, 1e-14), "model log-Jacobian")
-- through ad.grad: the same numbers, and gradients
local function logp(x)
  local q, l = m:unpack(x)
  return l + ad.normal_lpdf(q.theta, q.mu, q.tau) + ad.normal_lpdf(q.c, 0, q.sigma[1])
         + ad.sum(ad.log(q.w)) + ad.sum(ad.matrix(q.R):slice(1, 3))
end
assert(C.close(ad.grad(logp, x0), logp(x0), 1e-14), "model: vars and numbers")
C.grad("model", logp, x0)
-- a multi-chain fit's draws, constrained and named
local fake = {chains = 2, n = 1, dim = m.dim, draws = {{x0}, {m:init(8)}}, names = {}}
local cf = m:constrain_fit(fake)
assert(cf.dim == #m.names and cf.names[2] == "tau" and cf.draws[1][1][2] == p.tau and cf.draws[2][1][1] == m:init(8)[1])
assert(fake.draws[1][1] == x0, "the fit itself is left alone")
C.fails("params: 3 unconstrained values given, 15 declared", m.unpack, m, {1, 2, 3})
C.fails("unknown kind", params.declare, {{"a", 2, "simplx"}})
C.fails("bounds apply to reals only", params.declare, {{"a", 3, "simplex", lower = 0}})
C.fails("lower must be below upper", params.declare, {{"a", lower = 2, upper = 1}})
C.fails("size must be a positive integer", params.declare, {{"a", 0}})
print("lib_transforms: ok")
