-- ranks: nompi 1 2 3
-- SPDX-License-Identifier: MIT
-- The same f works in a plain call (numbers: f gets ad.Consts) and a
-- differentiated one (vars), with the same values: jobs written with
-- operators on vectors (ad.sub(y, mu) / s used to fail in plain calls:
-- "attempt to perform arithmetic on a table value"), and m(phi) for
-- parameters shared by every job (used to need m(phi, {{}, {}, ...})).

local function close(a, b, tol)
  return math.abs(a - b) <= tol * math.max(1, math.abs(a), math.abs(b))
end

-- data: J groups of rows (X, y), a linear regression per group
local J, N, K = 7, 40, 3
local xr, xi, seed = {}, {}, 7
local function u() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
for j = 1, J do
  local X, y = mp.array("f64", N, K), mp.array("f64", N)
  for i = 1, N do
    for k = 1, K do X:set(i, k, u() - 0.5) end
    y[i] = u() * 2 - 1
  end
  xr[j], xi[j] = X, y
end

-- phi = (beta[1..K], log_sigma); theta = (offset); vector operators throughout
local function job(phi, theta, X, y)
  local beta = phi:slice(1, K)
  local s = ad.exp(phi[K + 1])
  local mu = ad.matvec(X, beta) + theta[1] * 0.5
  local z = ad.sub(y, mu) / s
  local r = z * z * -0.5 - ad.log(s)
  local n = 0
  for _ in ipairs(theta) do n = n + 1 end
  assert(n == #theta, "ipairs and # agree")
  return {ad.sum(r), ad.sum(mu) * 0 + #theta}
end
local m = mp.mapper(job, xr, xi)
local phi0 = {0.3, -0.2, 0.1, -0.5}
local th0 = {}
for j = 1, J do th0[j] = {0.05 * j} end

-- plain call: numbers, equal to the same f run here on constants
local y = m(phi0, th0)
for j = 1, J do
  local want = job(ad.matrix(phi0, #phi0, 1):slice(1, #phi0), ad.matrix(th0[j], 1, 1):slice(1, 1), xr[j], xi[j])
  assert(type(want[1]) == "number", "ad of constants gives numbers")
  assert(y[j][1] == want[1] and y[j][2] == 1, ("job %d: %.17g vs %.17g"):format(j, y[j][1], want[1]))
end

-- differentiated call: the same values, and the gradient against inline
local function total(p, use_map)
  local phi = p:slice(1, K + 1)
  local th = {}
  for j = 1, J do th[j] = {p[K + 1 + j]} end
  local ys = {}
  if use_map then ys = m(phi, th)
  else for j = 1, J do ys[j] = job(phi, th[j], xr[j], xi[j]) end end
  local s = 0
  for j = 1, J do s = s + ys[j][1] end
  return s
end
local p0 = {}
for i, v in ipairs(phi0) do p0[i] = v end
for j = 1, J do p0[K + 1 + j] = th0[j][1] end
local v1, g1 = ad.grad(function(p) return total(p, true) end, p0)
local v2, g2 = ad.grad(function(p) return total(p, false) end, p0)
local plain = 0
for j = 1, J do plain = plain + y[j][1] end
assert(close(v1, plain, 1e-13), ("differentiated %.17g vs plain %.17g"):format(v1, plain))
assert(close(v1, v2, 1e-13))
for i = 1, #p0 do assert(close(g1[i], g2[i], 1e-12), "gradient " .. i) end

-- m(phi): shared parameters only, every job gets an empty theta
local mp_ = mp.mapper(function(phi, theta, X, yy)
  assert(#theta == 0, "m(phi): theta is empty")
  return {ad.normal_lpdf(yy, ad.matvec(X, phi:slice(1, K)), ad.exp(phi[K + 1]))}
end, xr, xi)
local a = mp_(phi0)
local empty = {}
for j = 1, J do empty[j] = {} end
local b = mp_(phi0, empty)
for j = 1, J do assert(a[j][1] == b[j][1], "m(phi) == m(phi, {{}, ...})") end
for _, kind in ipairs{"table", "array", "const"} do
  local arg = kind == "table" and phi0 or kind == "array" and mp.array("f64", phi0)
              or ad.add(mp.array("f64", phi0), 0)
  local c = mp_(arg)
  for j = 1, J do assert(close(c[j][1], a[j][1], 1e-15), "m(phi) with phi a " .. kind) end
end
local vg, gg = ad.grad(function(p)
  local s = 0
  for _, yj in ipairs(mp_(p)) do s = s + yj[1] end
  return s
end, phi0)
local vi, gi = ad.grad(function(p)
  local s = 0
  for j = 1, J do s = s + ad.normal_lpdf(xi[j], ad.matvec(xr[j], p:slice(1, K)), ad.exp(p[K + 1])) end
  return s
end, phi0)
assert(close(vg, vi, 1e-13))
for i = 1, #phi0 do assert(close(gg[i], gi[i], 1e-12), "m(phi) gradient " .. i) end
-- with vars in a table
local vt = ad.grad(function(p) return mp_({p[1], p[2], p[3], p[4]})[1][1] end, phi0)
assert(close(vt, a[1][1], 1e-15))

-- a mapper without data cannot know how many jobs m(phi) means
local nodata = mp.mapper(function(phi, t) return {phi[1]} end)
local ok, err = pcall(nodata, {1, 2})
assert(not ok and err:find("m(phi) needs the number of jobs", 1, true), err)
assert(nodata({1, 2}, {{}, {}})[2][1] == 1)

-- f returning ad.Consts (plain) / ad vectors (differentiated) as its output
local ident = mp.mapper(function(t) return t * 2 end, {{}, {}, {}})
local yi = ident({{1, 2}, {3}, {4, 5, 6}})
assert(yi[3][3] == 12 and #yi[1] == 2)
local vv, gv = ad.grad(function(p) return ident({{p[1], 2}, p, {4, 5, p[1]}})[2][1] end, {1.5})
assert(vv == 3 and gv[1] == 2)
print("map_plain ok", mp.size)
