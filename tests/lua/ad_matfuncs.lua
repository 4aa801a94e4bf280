-- ranks: nompi
-- SPDX-License-Identifier: MIT
-- ad's matrix functions and special functions: values against plain Lua
-- computations and known constants, gradients by ad.check_grad, Hessians
-- against differences of gradients (all are compositions of operations
-- with second derivatives), constants in, numbers out.

local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local fmt, exp, log, sqrt = string.format, math.exp, math.log, math.sqrt
local function ref(name, got, want, tol)
  assert(C.close(got, want, tol or 1e-13), fmt("%s: %.17g, expected %.17g", name, got, want))
end
local function rows(M) return ad.value(M) end

-- special functions (values to 16 digits, from their series or as printed by
-- Python's math module: erf, erfc, gamma; tables of the normal distribution)
ref("erf", ad.erf(0.5), 0.52049987781304652)
ref("erfc", ad.erfc(1.5), 0.033894853524689274)
ref("Phi", ad.Phi(1.96), 0.97500210485177952)
ref("inv_Phi", ad.inv_Phi(0.975), 1.9599639845400538, 1e-14)
ref("inv_Phi tail", ad.std_normal_lcdf(ad.inv_Phi(1e-20)), log(1e-20), 1e-14)
for _, p in ipairs{1e-300, 1e-10, 0.02, 0.3, 0.5, 0.77, 0.999} do ref("Phi(inv_Phi)", ad.Phi(ad.inv_Phi(p)), p, 1e-13) end
ref("trigamma", ad.trigamma(1), math.pi ^ 2 / 6)
ref("tgamma", ad.tgamma(4.5), 11.631728396567448)
ref("lbeta", ad.lbeta(2.5, 1.5), ad.lgamma(2.5) + ad.lgamma(1.5) - ad.lgamma(4))
ref("lchoose", ad.lchoose(10, 3), log(120))
ref("hypot", ad.hypot(3, 4), 5)
ref("atan2", ad.atan2(1, -1), 3 * math.pi / 4)
ref("log_inv_logit_diff", ad.log_inv_logit_diff(1.2, -0.3), log(1 / (1 + exp(-1.2)) - 1 / (1 + exp(0.3))))
ref("lmultiply", ad.lmultiply(2, 3), 2 * log(3))
assert(ad.lmultiply(0, 0) == 0 and ad.fdim(3, 5) == 0 and ad.fdim(5, 3) == 2)
ref("sinh/cosh", ad.cosh(0.7) ^ 2 - ad.sinh(0.7) ^ 2, 1)
ref("asinh", ad.asinh(ad.sinh(1.3)), 1.3)
ref("atanh", ad.atanh(0.5), 0.5 * log(3))
ref("inv_cloglog", ad.inv_cloglog(0.3), 1 - exp(-exp(0.3)))
ref("log1m_inv_logit", ad.log1m_inv_logit(2), log(1 - 1 / (1 + exp(-2))))
ref("Phi_approx", ad.Phi_approx(0.4), 1 / (1 + exp(-(0.07056 * 0.4 ^ 3 + 1.5976 * 0.4))))
ref("cbrt log2 log10 exp2", ad.cbrt(-27) + ad.log2(8) + ad.log10(1000) + ad.exp2(3), -3 + 3 + 3 + 8)
C.grad("special functions", function(t)
  return ad.erf(t[1]) + ad.Phi(t[2]) + ad.inv_Phi(ad.inv_logit(t[3])) + ad.trigamma(ad.exp(t[1])) + ad.lbeta(ad.exp(t[1]), ad.exp(t[2]))
    + ad.hypot(t[1], t[2]) + ad.atan2(t[2], t[3]) + ad.log_inv_logit_diff(t[1] + 2, t[2]) + ad.tgamma(ad.exp(t[3]))
end, {0.3, -0.4, 0.2})

-- matrices
local A = {{4, 1, 0.5}, {1, 3, 0.2}, {0.5, 0.2, 2}}
local B = {{1, 2}, {0, -1}, {3, 0.5}}
local function mm(X, Y) -- plain product of tables of rows
  local Z = {}
  for i = 1, #X do Z[i] = {} for j = 1, #Y[1] do local s = 0 for k = 1, #Y do s = s + X[i][k] * Y[k][j] end Z[i][j] = s end end
  return Z
end
local function tr(X) local T = {} for i = 1, #X[1] do T[i] = {} for j = 1, #X do T[i][j] = X[j][i] end end return T end
local function same(name, M, W, tol)
  local V = type(M) == "table" and M or rows(M)
  for i = 1, #W do
    if type(W[i]) == "table" then for j = 1, #W[i] do ref(fmt("%s[%d][%d]", name, i, j), V[i][j], W[i][j], tol) end
    else ref(fmt("%s[%d]", name, i), V[i], W[i], tol) end
  end
end
same("transpose", ad.transpose(B), tr(B))
same("crossprod", ad.crossprod(B), mm(tr(B), B))
same("tcrossprod", ad.tcrossprod(B), mm(B, tr(B)))
same("quad_form", ad.quad_form(A, B), mm(tr(B), mm(A, B)))
same("inverse", ad.matmul(ad.inverse(A), A), {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, 1e-14)
same("inverse_spd", ad.matmul(ad.inverse_spd(A), A), {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, 1e-14)
same("mdivide_left", ad.matmul(A, ad.mdivide_left(A, B)), B, 1e-14)
same("mdivide_left_spd", ad.matmul(A, ad.mdivide_left_spd(A, B)), B, 1e-14)
same("mdivide_right", ad.matmul(ad.mdivide_right(tr(B), A), A), tr(B), 1e-14)
ref("determinant", ad.determinant(A), 4 * (6 - 0.04) - 1 * (2 - 0.1) + 0.5 * (0.2 - 1.5), 1e-14)
ref("log_determinant", ad.log_determinant(A), log(ad.determinant(A)), 1e-14)
same("diag_pre_multiply", ad.diag_pre_multiply({1, 2, 3}, B), {{1, 2}, {0, -2}, {9, 1.5}})
same("diag_post_multiply", ad.diag_post_multiply(B, {2, -1}), {{2, -2}, {0, 1}, {6, -0.5}})
same("diagonal", ad.diagonal(A), {4, 3, 2})
same("diag_matrix", ad.diag_matrix({1, 2}), {{1, 0}, {0, 2}})
ref("trace", ad.trace(A), 9)
same("softmax", ad.softmax({1, 2, 3}), {exp(1) / (exp(1) + exp(2) + exp(3)), exp(2) / (exp(1) + exp(2) + exp(3)), exp(3) / (exp(1) + exp(2) + exp(3))})
same("log_softmax", ad.log_softmax({1, 2}), {1 - log(exp(1) + exp(2)), 2 - log(exp(1) + exp(2))})
ref("mean/variance/sd", ad.mean({1, 2, 6}) + ad.variance({1, 2, 6}) + ad.sd({1, 2, 6}), 3 + 7 + sqrt(7))
same("cumulative_sum", ad.cumulative_sum({1, 2, 3}), {1, 3, 6})
same("columns_dot_product", ad.columns_dot_product(B, B), {10, 5.25})
same("rows_dot_self", ad.rows_dot_self(B), {5, 1, 9.25})
same("multiply_lower_tri_self_transpose", ad.multiply_lower_tri_self_transpose({{1, 9}, {2, 3}}), {{1, 2}, {2, 13}})
local x = {0.3, 1.1, 2.5}
local K = ad.gp_exp_quad_cov(x, 1.5, 0.7)
same("gp_exp_quad_cov", K, {{2.25, 2.25 * exp(-0.64 / 0.98), 2.25 * exp(-4.84 / 0.98)}})
ref("gp_matern32_cov", ad.value(ad.gp_matern32_cov(x, 1.5, 0.7))[1][2], 2.25 * (1 + sqrt(3) * 0.8 / 0.7) * exp(-sqrt(3) * 0.8 / 0.7))
ref("gp_matern52_cov", ad.value(ad.gp_matern52_cov(x, 1.5, 0.7))[1][3],
    2.25 * (1 + sqrt(5) * 2.2 / 0.7 + 5 * 4.84 / (3 * 0.49)) * exp(-sqrt(5) * 2.2 / 0.7))
ref("gp_exponential_cov", ad.value(ad.gp_exponential_cov(x, 1.5, 0.7))[2][3], 2.25 * exp(-1.4 / 0.7))
ref("gp_periodic_cov", ad.value(ad.gp_periodic_cov(x, 1.5, 0.7, 2))[1][2], 2.25 * exp(-2 * math.sin(math.pi * 0.8 / 2) ^ 2 / 0.49))
ref("gp_exp_quad_cov of vectors", ad.value(ad.gp_exp_quad_cov({{0, 1}, {1, 1}}, 1, 1))[1][2], exp(-0.5))
-- eigenvalues (ascending) and eigenvectors: A v = lambda v, the trace and the determinant
local lam, V = ad.value(ad.eigenvalues_sym(A)), ad.value(ad.eigenvectors_sym(A))
assert(lam[1] < lam[2] and lam[2] < lam[3])
ref("eigenvalues: trace", lam[1] + lam[2] + lam[3], 9)
ref("eigenvalues: determinant", lam[1] * lam[2] * lam[3], ad.determinant(A), 1e-13)
for k = 1, 3 do
  for i = 1, 3 do
    local s = 0
    for j = 1, 3 do s = s + A[i][j] * V[j][k] end
    ref(fmt("A v = lambda v [%d][%d]", i, k), s, lam[k] * V[i][k], 1e-13)
  end
end
local function Mt(t) return {{4 + t[1], 1, t[2]}, {1, 3, 0.2}, {t[2], 0.2, 2 + t[3]}} end
C.grad("eigenvalues_sym", function(t) return ad.dot({1, 2, 3}, ad.eigenvalues_sym(Mt(t))) end, {0.1, 0.5, -0.2})
C.grad("eigenvectors_sym", function(t) return ad.dot({1, 2, 3, 4, 5, 6, 7, 8, 9}, ad.eigenvectors_sym(Mt(t))) end, {0.1, 0.5, -0.2})
local Kx = ad.gp_exp_quad_cov({0, 1}, {0.5, 1.5, 2}, 1, 1)
assert(select(2, Kx:dims()) == 3, "cross covariance")

-- gradients and Hessians through the compositions
local function M3(t) return {{ad.exp(t[1]) + 3, t[2], 0.5}, {t[2], 3, t[3]}, {0.5, t[3], 2}} end
local funcs = {
  {"inverse", function(t) return ad.sum(ad.inverse(M3(t))) end},
  {"mdivide_left", function(t) return ad.sum(ad.mdivide_left(M3(t), {t[1], 1, t[3]})) end},
  {"determinant", function(t) return ad.determinant(M3(t)) end},
  {"mdivide_left_spd", function(t) return ad.sum(ad.mdivide_left_spd(M3(t), B)) end},
  {"quad_form", function(t) return ad.quad_form(M3(t), {t[1], t[2], 1}) end},
  {"diag_pre_multiply", function(t) return ad.sum(ad.diag_pre_multiply({t[1], t[2], t[3]}, M3(t))) end},
  {"gp_exp_quad_cov", function(t)
     local Kt = ad.add_diag(ad.gp_exp_quad_cov(x, ad.exp(t[1]), ad.exp(t[2])), 0.1)
     return ad.multi_normal_cholesky_lpdf({0.1, -0.3, 0.8}, t[3], ad.cholesky_decompose(Kt)) end},
  {"gp_matern52_cov", function(t) return ad.sum(ad.gp_matern52_cov(x, ad.exp(t[1]), ad.exp(t[2]))) end},
  {"softmax", function(t) return ad.dot({1, 2, 3}, ad.softmax({t[1], t[2], t[3]})) end},
  {"variance", function(t) return ad.variance({t[1], t[2], t[3], 1}) end},
}
for _, f in ipairs(funcs) do
  C.grad(f[1], f[2], {0.2, 0.4, -0.3})
  C.hessian(f[1], f[2], {0.2, 0.4, -0.3}, 1e-5)
end
assert(type(ad.determinant(A)) == "number" and type(ad.trace(A)) == "number")
print("ad_matfuncs: ok")
