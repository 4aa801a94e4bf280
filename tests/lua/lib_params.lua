-- ranks: nompi
-- SPDX-License-Identifier: MIT
-- lib/params.lua: offset/multiplier (a ported non-centred declaration is the
-- non-centred model), bounds checked at declaration and naming the
-- parameter, vector and parameter-dependent bounds, matrix and array
-- parameters with CmdStan's names and order, the matrix kinds.

local params = require "mplua.params"
local T = require "mplua.transforms"
local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local fmt = string.format

-- 1. offset / multiplier: vector<offset=mu, multiplier=tau>[J] theta with
--    theta ~ normal(mu, tau) is exactly eta ~ normal(0, 1), theta = mu + tau eta
local J = 4
local m = params{
  {"mu"}, {"tau", lower = 0},
  {"theta", J, offset = function(p) return p.mu end, multiplier = function(p) return p.tau end},
}
assert(m.dim == 2 + J and #m.names == 2 + J)
local function centred(x)
  local p, lj = m:unpack(x)
  return lj + ad.normal_lpdf(p.theta, p.mu, p.tau) + ad.normal_lpdf(p.mu, 0, 5) + ad.normal_lpdf(p.tau, 0, 5)
end
local function noncentred(x)
  local mu, tau = x[1], ad.exp(x[2])
  local eta = {x[3], x[4], x[5], x[6]}
  return x[2] + ad.normal_lpdf(eta, 0, 1) + ad.normal_lpdf(mu, 0, 5) + ad.normal_lpdf(tau, 0, 5)
end
for _, x in ipairs{{0.1, -0.3, 0.5, -1, 2, 0.3}, {2, 1.5, -0.2, 0.4, 0.1, -2}} do
  assert(C.close(centred(x), noncentred(x), 1e-13), fmt("offset/multiplier: %g vs %g", centred(x), noncentred(x)))
  local p = m:unpack(x)
  assert(C.close(p.theta[2], x[1] + math.exp(x[2]) * x[4], 1e-15), "theta = mu + tau eta")
  C.grad("offset/multiplier", centred, x)
  C.hessian("offset/multiplier", centred, x)
end
-- constant offset and multiplier, a vector multiplier
local m2 = params{{"a", 3, offset = 1, multiplier = {0.5, 2, 4}}}
local p2, lj2 = m2:unpack({1, 1, 1})
assert(p2.a[1] == 1.5 and p2.a[3] == 5 and C.close(lj2, math.log(0.5 * 2 * 4), 1e-15))
local m3 = params{{"s", offset = 2}}
local p3, lj3 = m3:unpack({0.5})
assert(p3.s == 2.5 and lj3 == 0)

-- 2. bounds are checked at declaration, naming the parameter
C.fails("sigma: lower must be a number, a list of numbers or a function of the parameters declared before, got string",
        params.declare, {{"sigma", lower = "0"}})
C.fails("b: upper must be a number", params.declare, {{"b", 2, upper = true}})
C.fails("w: lower has 2 values, expected 3 (one per element)", params.declare, {{"w", 3, lower = {0, 1}}})
C.fails("w: lower[2] is a string, expected a number", params.declare, {{"w", 2, lower = {0, "1"}}})
C.fails("t: multiplier must be positive and finite", params.declare, {{"t", multiplier = -1}})
C.fails("t: lower/upper and offset/multiplier cannot be combined", params.declare, {{"t", lower = 0, offset = 1}})
C.fails("q: declared twice", params.declare, {{"q"}, {"q", 2}})
C.fails("z: sum_to_zero_vector needs a size of 2 or more", params.declare, {{"z", 1, "sum_to_zero_vector"}})

-- 3. vector and parameter-dependent bounds
local mb = params{
  {"lo"}, {"gap", lower = 0},
  {"x", lower = function(p) return p.lo end, upper = function(p) return p.lo + p.gap end},
  {"v", 3, lower = {-1, 0, 1}, upper = {0, 1, 5}},
}
local function lpb(x)
  local p, lj = mb:unpack(x)
  return lj + ad.normal_lpdf(p.x, 0, 1) + ad.normal_lpdf(p.v, 0, 1) + ad.normal_lpdf(p.lo, 0, 1) + ad.exponential_lpdf(p.gap, 1)
end
local xb = {0.3, -0.5, 1.2, 0.1, -2, 3}
local pb = mb:unpack(xb)
assert(pb.x > pb.lo and pb.x < pb.lo + pb.gap, "x within its parameter-dependent bounds")
assert(pb.v[1] > -1 and pb.v[1] < 0 and pb.v[3] > 1 and pb.v[3] < 5)
C.grad("parameter-dependent bounds", lpb, xb)
-- the log-Jacobian of x includes log(upper - lower), which depends on gap
local _, ljb = mb:unpack(xb)
local gap = math.exp(-0.5)
local want = -0.5 + math.log(gap) + math.log(1 / (1 + math.exp(-1.2))) + math.log(1 / (1 + math.exp(1.2)))
             + select(2, T.bounds({0.1, -2, 3}, {-1, 0, 1}, {0, 1, 5}))
assert(C.close(ljb, want, 1e-14), "log-Jacobian with parameter-dependent bounds")

-- 4. matrix and array parameters: CmdStan's names and order (column-major
--    over all indices, array indices first)
local mm = params{{"B", {3, 2}}, {"w", 3, "simplex", array = 2}, {"r", array = {2, 2}, lower = 0},
                  {"S", 2, "cov_matrix"}, {"R", 3, "corr_matrix"}, {"Lc", {3, 2}, "cholesky_factor_cov"},
                  {"z", 3, "sum_to_zero_vector"}}
assert(mm.dim == 6 + 2 * 2 + 4 + 3 + 3 + 5 + 2, "dim " .. mm.dim)
local want_names = {"B[1,1]", "B[2,1]", "B[3,1]", "B[1,2]", "B[2,2]", "B[3,2]",
                    "w[1,1]", "w[2,1]", "w[1,2]", "w[2,2]", "w[1,3]", "w[2,3]",
                    "r[1,1]", "r[2,1]", "r[1,2]", "r[2,2]", "S[1,1]", "S[2,1]", "S[1,2]", "S[2,2]"}
for i, n in ipairs(want_names) do assert(mm.names[i] == n, fmt("name %d: %s, expected %s", i, mm.names[i], n)) end
assert(#mm.names == 6 + 6 + 4 + 4 + 9 + 6 + 3)
local x0 = mm:init(3)
local p, lj = mm:unpack(x0)
local rows, cols = p.B:dims()
assert(rows == 3 and cols == 2 and p.B[4] == x0[4], "B is a 3x2 matrix, column-major")
assert(#p.w == 2 and #p.w[2] == 3 and p.r[2][1] > 0 and #p.r[2] == 2)
local v = mm:constrain(x0)
assert(v[1] == x0[1] and v[8] == p.w[2][1] and v[9] == p.w[1][2] and v[14] == p.r[2][1] and v[15] == p.r[1][2])
local Sv = ad.value(p.S)
assert(v[18] == Sv[2][1] and v[19] == Sv[1][2])
local zsum = 0
for i = 1, 3 do zsum = zsum + p.z[i] end
assert(math.abs(zsum) < 1e-15)
local function lpm(x)
  local q, l = mm:unpack(x)
  return l + ad.normal_lpdf(ad.matrix(q.B):slice(1, 6), 0, 1) + ad.sum(ad.log(q.w[1])) + ad.sum(ad.log(q.w[2]))
         + ad.normal_lpdf(q.r[1][2], 0, 1) + ad.sum(q.S) + ad.sum(q.R) + ad.sum(q.Lc) + ad.normal_lpdf(q.z, 0, 1)
end
C.grad("matrix and array parameters", lpm, x0)
assert(C.close(ad.grad(lpm, x0), lpm(x0), 1e-13))
print("lib_params ok")
