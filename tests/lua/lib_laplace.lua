-- ranks: nompi
-- SPDX-License-Identifier: MIT
-- laplace.laplace_sample: exact on a normal target (the mode, the Hessian,
-- draws with its mean and covariance, log_p - log_g constant); the Jacobian
-- choice moves the mode as it should (a gamma density on a positive
-- parameter: a/b with the Jacobian, (a-1)/b without); a Gaussian process
-- through its Cholesky factor; explicit errors.

local laplace = require "mplua.laplace"
local params = require "mplua.params"
local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local fmt = string.format

-- 1. a correlated normal: mean (1, -2), covariance S
local S = {{2, 0.8}, {0.8, 1}}
local function logp(x)
  return ad.multi_normal_lpdf({x[1], x[2]}, {1, -2}, S)
end
local r = laplace.laplace_sample(function(x, jac) return logp(x) end, {0, 0}, {jacobian = true, draws = 4000, seed = 3})
assert(C.close(r.mode[1], 1, 1e-6) and C.close(r.mode[2], -2, 1e-6), fmt("mode %g %g", r.mode[1], r.mode[2]))
local det = 2 - 0.64
assert(C.close(-r.hessian[1][1], 1 / det, 1e-10) and C.close(-r.hessian[1][2], -0.8 / det, 1e-10), "Hessian = -S^-1")
local m1, m2, c11, c12 = 0, 0, 0, 0
for _, d in ipairs(r.draws) do m1, m2 = m1 + d[1] / 4000, m2 + d[2] / 4000 end
for _, d in ipairs(r.draws) do c11, c12 = c11 + (d[1] - m1) ^ 2 / 3999, c12 + (d[1] - m1) * (d[2] + 2) / 3999 end
assert(math.abs(m1 - 1) < 4 * math.sqrt(2 / 4000) and math.abs(m2 + 2) < 4 * math.sqrt(1 / 4000), "draws' mean")
assert(math.abs(c11 - 2) < 0.15 and math.abs(c12 - 0.8) < 0.1, fmt("draws' covariance %g %g", c11, c12))
for t = 2, #r.draws do assert(C.close(r.log_p[t] - r.log_g[t], r.log_p[1] - r.log_g[1], 1e-6), "constant weights") end
-- at the exact mode (given: optimize = false) the approximation is the target
local e = laplace.laplace_sample(function(x, jac) return logp(x) end, {1, -2}, {jacobian = true, draws = 50, optimize = false})
for t = 1, 50 do assert(C.close(e.log_p[t], e.log_g[t], 1e-12), "exact: log_p = log_g") end

-- 2. the Jacobian choice: sigma > 0 with density gamma(sigma | 3, 2)
local m = params{{"sigma", lower = 0}}
local function lpj(x, jacobian)
  local p, lj = m:unpack(x)
  return (jacobian and lj or 0) + ad.gamma_lpdf(p.sigma, 3, 2)
end
local with = laplace.laplace_sample(lpj, {0}, {jacobian = true, draws = 10})
local without = laplace.laplace_sample(lpj, {0}, {jacobian = false, draws = 10})
assert(C.close(math.exp(with.mode[1]), 1.5, 1e-6), "with the Jacobian: the mode of log sigma, sigma = a/b")
assert(C.close(math.exp(without.mode[1]), 1.0, 1e-6), "without: the mode of sigma's density, (a - 1)/b")
assert(with.jacobian and not without.jacobian and #with.draws == 10)

-- 3. a Gaussian process regression: the Hessian goes through the Cholesky factor
local gm = params{{"rho", lower = 0}, {"alpha", lower = 0}, {"sigma", lower = 0}}
local xs, ys = {-2, -1, 0, 1, 2, 3}, {0.3, 0.9, 1.2, 0.7, -0.1, -0.6}
local function gp(x, jacobian)
  local p, lj = gm:unpack(x)
  local K = ad.add_diag(ad.gp_exp_quad_cov(xs, p.alpha, p.rho), ad.square(p.sigma))
  return (jacobian and lj or 0) + ad.gamma_lpdf(p.rho, 5, 5) + ad.normal_lpdf(p.alpha, 0, 2)
    + ad.normal_lpdf(p.sigma, 0, 1) + ad.multi_normal_cholesky_lpdf(ys, 0, ad.cholesky_decompose(K))
end
local g = laplace.laplace_sample(gp, {0, 0, -1}, {jacobian = true, draws = 200, seed = 5})
local _, grad = ad.grad(function(x) return gp(x, true) end, g.mode)
for i = 1, 3 do assert(math.abs(grad[i]) < 1e-5, "the gradient vanishes at the mode") end
C.hessian("gp at the mode", function(x) return gp(x, true) end, g.mode, 1e-5)
for t = 1, 200 do assert(g.log_p[t] == g.log_p[t] and g.log_g[t] < g.log_g[t] + 1) end

-- 4. errors
C.fails("opts.jacobian must be given: true", laplace.laplace_sample, lpj, {0}, {draws = 10})
C.fails("unknown option 'iter'", laplace.laplace_sample, lpj, {0}, {jacobian = true, iter = 10})
C.fails("the Hessian at the mode is not negative definite", laplace.laplace_sample,
        function(x) return ad.square(x[1]) - ad.square(x[2]) end, {0, 0}, {jacobian = false, optimize = false})
print("lib_laplace ok")
