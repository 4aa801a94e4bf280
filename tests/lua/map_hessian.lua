-- ranks: nompi 1 2 3 4
-- SPDX-License-Identifier: MIT
-- Second order and forward mode through mp.mapper: ad.hessian and ad.hvp of
-- a model whose terms are mapper jobs (each job's Hessians computed on the
-- rank that owns it) against the same model taped inline; a Newton /
-- Laplace step on the mapped posterior; m:jvp (directional derivatives on
-- the owners) and ad.jvp through the map against inline; errors.

local C = dofile((arg[0]:match("^(.*)/") or ".") .. "/helpers/adcheck.lua")
local fmt = string.format

-- a hierarchical nonlinear regression: phi = (mu, log_s) shared, theta_j =
-- (a_j, b_j) per group; group j's rows (x, y) are its data; each job returns
-- its log likelihood and, ragged, one residual per row (second output)
local J, K = 7, 5
local xr = {}
for j = 1, J do
  local x, y = {}, {}
  for i = 1, K + j % 3 do
    x[i] = 0.3 * i - 0.1 * j
    y[i] = math.sin(x[i] * j) + 0.05 * i
  end
  xr[j] = {x = x, y = y}
end
local function job(phi, theta, d)
  local s = ad.exp(phi[2])
  local mu = ad.add(ad.mul(ad.tanh(ad.mul(d.x, theta[2])), theta[1]), phi[1])
  local ll = ad.normal_lpdf(d.y, mu, s)
  return {ll, ad.sum(ad.square(ad.sub(d.y, mu))) * 0.5}
end
local m = mp.mapper(job, xr)
local NP = 2 + 2 * J
local function split(p)
  local th = {}
  for j = 1, J do th[j] = p:slice(2 + 2 * j - 1, 2 + 2 * j) end
  return p:slice(1, 2), th
end
local function prior(p)
  return ad.normal_lpdf(p:slice(3, NP), 0, 2) + ad.normal_lpdf(p[1], 0, 1) + ad.normal_lpdf(p[2], 0, 1)
end
local function logp_map(p)
  local phi, th = split(p)
  local s = prior(p)
  for _, y in ipairs(m(phi, th)) do s = s + y[1] + 0.01 * y[2] end
  return s
end
local function logp_inline(p)
  local phi, th = split(p)
  local s = prior(p)
  for j = 1, J do
    local y = job(phi, th[j], xr[j])
    s = s + y[1] + 0.01 * y[2]
  end
  return s
end
local p0 = {}
for i = 1, NP do p0[i] = 0.1 * math.cos(i) end

-- Hessian: map vs inline
local v1, g1, H1 = ad.hessian(logp_map, p0)
local v2, g2, H2 = ad.hessian(logp_inline, p0)
assert(C.close(v1, v2, 1e-13), fmt("value %.17g vs %.17g", v1, v2))
for i = 1, NP do
  assert(C.close(g1[i], g2[i], 1e-12), "gradient " .. i)
  for k = 1, NP do
    assert(C.close(H1[i][k], H2[i][k], 1e-11), fmt("H[%d][%d] map %.17g inline %.17g", i, k, H1[i][k], H2[i][k]))
  end
end
-- the map's Hessian is symmetric and matches finite differences of its gradient
C.hessian("map", logp_map, p0, 1e-6)
-- the same twice: bitwise
local _, _, H3 = ad.hessian(logp_map, p0)
for i = 1, NP do for k = 1, NP do assert(H3[i][k] == H1[i][k], "repeatable") end end

-- Hessian-vector products through the map
local v = {}
for i = 1, NP do v[i] = math.sin(3 * i) end
local _, _, hv1 = ad.hvp(logp_map, p0, v)
local _, _, hv2 = ad.hvp(logp_inline, p0, v)
for i = 1, NP do
  local s = 0
  for k = 1, NP do s = s + H1[i][k] * v[k] end
  assert(C.close(hv1[i], hv2[i], 1e-11) and C.close(hv1[i], s, 1e-12), "hvp " .. i)
end

-- constants among the parameters: no rows or columns for them
local function logp_part(p)
  local th = {}
  for j = 1, J do th[j] = {p[1], 0.5} end -- b_j fixed, a_j = p[1] for every job
  local s = 0
  for _, y in ipairs(m({0.2, p[2]}, th)) do s = s + y[1] end
  return s
end
local _, _, Hp = ad.hessian(logp_part, {0.3, -0.2})
C.hessian("constants among the parameters", logp_part, {0.3, -0.2}, 1e-6)
assert(C.close(Hp[1][2], Hp[2][1], 1e-13) and Hp[1][2] ~= 0, "mixed partial through the map")

-- m(phi) inside ad.hessian
local mphi = mp.mapper(function(phi, theta, d) return {ad.normal_lpdf(d.y, phi[1], ad.exp(phi[2]))} end, xr)
C.hessian("m(phi)", function(p) local s = 0 for _, y in ipairs(mphi(p)) do s = s + y[1] end return s end, {0.1, -0.3}, 1e-6)

-- a Newton step to the mode, and the Laplace approximation, through the map
local function solve(A, b) -- Gaussian elimination with partial pivoting
  local n, M = #b, {}
  for i = 1, n do M[i] = {table.unpack(A[i])}; M[i][n + 1] = b[i] end
  for k = 1, n do
    local p = k
    for i = k + 1, n do if math.abs(M[i][k]) > math.abs(M[p][k]) then p = i end end
    M[k], M[p] = M[p], M[k]
    for i = k + 1, n do
      local f = M[i][k] / M[k][k]
      for c = k, n + 1 do M[i][c] = M[i][c] - f * M[k][c] end
    end
  end
  local x, ld = {}, 0
  for i = n, 1, -1 do
    local s = M[i][n + 1]
    for c = i + 1, n do s = s - M[i][c] * x[c] end
    x[i] = s / M[i][i]
    ld = ld + math.log(math.abs(M[i][i]))
  end
  return x, ld
end
local function newton(logp, p)
  p = {table.unpack(p)}
  local ld
  for _ = 1, 30 do
    local _, g, H = ad.hessian(logp, p)
    local d
    d, ld = solve(H, g)
    local step = 0
    for i = 1, #p do p[i] = p[i] - d[i]; step = math.max(step, math.abs(d[i])) end
    if step < 1e-12 then break end
  end
  local lp = ad.grad(logp, p)
  return p, lp + 0.5 * #p * math.log(2 * math.pi) - 0.5 * ld -- Laplace log evidence
end
local pm, lm = newton(logp_map, p0)
local pi_, li = newton(logp_inline, p0)
local _, gm = ad.grad(logp_map, pm)
for i = 1, NP do
  assert(math.abs(gm[i]) < 1e-8, "Newton: gradient at the mode " .. gm[i])
  assert(C.close(pm[i], pi_[i], 1e-9), "Newton: modes differ")
end
assert(C.close(lm, li, 1e-10), fmt("Laplace: %.15g vs %.15g", lm, li))

-- forward mode: m:jvp on the owners, against ad.jvp of the inline jobs
local phi0, th0, dphi, dth = {0.2, -0.4}, {}, {0.3, 0.1}, {}
for j = 1, J do th0[j] = {0.5 + 0.1 * j, 1 - 0.05 * j}; dth[j] = {math.cos(j), math.sin(j)} end
local ys, dys = m:jvp(phi0, th0, dphi, dth)
assert(#ys == J and #dys == J)
for j = 1, J do
  local x = {phi0[1], phi0[2], th0[j][1], th0[j][2]}
  local dir = {dphi[1], dphi[2], dth[j][1], dth[j][2]}
  local yv, jv = ad.jvp(function(t) return job(t:slice(1, 2), t:slice(3, 4), xr[j]) end, x, dir)
  for i = 1, 2 do
    assert(ys[j][i] == m(phi0, th0)[j][i], "m:jvp values are the call's")
    assert(C.close(ys[j][i], yv[i], 1e-14) and C.close(dys[j][i], jv[i], 1e-12),
           fmt("job %d output %d: jvp %.17g vs %.17g", j, i, dys[j][i], jv[i]))
  end
end
-- (theta, dtheta) and (phi, dphi) forms
local m2 = mp.mapper(function(t, d) return {ad.sum(ad.mul(d.x, t[1]))} end, xr)
local y2, d2 = m2:jvp(th0, dth)
local sx = 0
for _, xv in ipairs(xr[3].x) do sx = sx + xv end
assert(C.close(d2[3][1], dth[3][1] * sx, 1e-14) and C.close(y2[3][1], th0[3][1] * sx, 1e-14))
local y3, d3 = mphi:jvp({0.1, -0.3}, {1, 0})
local _, g3 = ad.grad(function(p) return ad.normal_lpdf(xr[4].y, p[1], ad.exp(p[2])) end, {0.1, -0.3})
assert(C.close(d3[4][1], g3[1], 1e-13) and C.close(y3[4][1], mphi({0.1, -0.3})[4][1], 0))
-- ad.jvp through the map (precomputed Jacobians) equals the inline one
local _, jm = ad.jvp(logp_map, p0, v)
local _, ji = ad.jvp(logp_inline, p0, v)
assert(C.close(jm, ji, 1e-12), "ad.jvp through the map")

-- errors
C.fails("m:jvp takes numbers, not ad vars", ad.grad, function(p)
  local t = {}
  for j = 1, J do t[j] = {p[1]} end
  return m2:jvp(t, dth)[1][1]
end, {1})
local short = {}
for j = 1, J do short[j] = {1} end
C.fails("the direction's lengths do not match", m2.jvp, m2, th0, short)
-- job 2 goes through a Cholesky factor: its Hessian goes through the map
local mch = mp.mapper(function(t, d)
  if d[1] == 1 then return {t[1] * t[1]} end
  return {ad.sum(ad.cholesky_decompose(ad.matrix({{t[1], 0}, {0, t[1]}})))}
end, {{1}, {2}})
local _, gch, Hch = ad.hessian(function(p) return mch({p, p})[2][1] end, {4})
assert(gch[1] == 0.5 and C.close(Hch[1][1], -1 / 16, 1e-14), "second order through a Cholesky factor in a job")
-- job 2 goes through gamma_lcdf (first order only), job 1 does not
local mc = mp.mapper(function(t, d)
  if d[1] == 1 then return {t[1] * t[1]} end
  return {ad.gamma_lcdf(2, t[1], 1)}
end, {{1}, {2}})
assert(ad.grad(function(p) return mc({p, p})[2][1] end, {4}) ~= 0, "first order through gamma_lcdf")
C.fails("no second-order information for this operation", ad.hessian, function(p) return mc({p, p})[2][1] end, {4})
C.fails("job 2:", ad.hessian, function(p) return mc({p, p})[2][1] end, {4})
print("map_hessian ok", mp.size)
