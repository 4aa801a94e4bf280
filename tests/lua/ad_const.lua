-- ranks: nompi
-- SPDX-License-Identifier: MIT
-- ad.Const: what ad functions return when no argument is a var (they used to
-- return plain tables, on which `/`, `*`... failed), with the interface of
-- a vector var: c[i], #c, ipairs, c:slice, arithmetic, and every ad
-- function takes it (borrowed, no copy).

local c = ad.exp({0, 1, 2})
assert(tostring(c):find("ad.const(3)", 1, true), tostring(c))
assert(#c == 3 and c[1] == 1 and c[2] == math.exp(1) and c[4] == nil and c[0] == nil and c[1.5] == nil)
local n = 0
for i, v in ipairs(c) do n = n + 1; assert(v == c[i]) end
assert(n == 3, "ipairs")
assert(ad.is_var(c) == false)
local t = ad.value(c)
assert(type(t) == "table" and t[3] == math.exp(2))
-- arithmetic with numbers, constants, tables and typed arrays stays constant
local d = (c - 1) / 2 * c ^ 2 + {1, 1, 1} - mp.array("f64", {0, 0, 1})
assert(tostring(d):find("ad.const", 1, true))
for i = 1, 3 do
  local want = (t[i] - 1) / 2 * t[i] ^ 2 + 1 - (i == 3 and 1 or 0)
  assert(math.abs(d[i] - want) <= 1e-15 * math.abs(want) + 1e-300, "arithmetic " .. i)
end
assert((-c)[2] == -math.exp(1))
-- slices share the values and keep them alive
local s = ad.add({1, 2, 3, 4, 5}, 0):slice(2, 4)
collectgarbage()
assert(#s == 3 and s[1] == 2 and s[3] == 4 and s:slice(2)[1] == 3)
-- read-only
local ok, err = pcall(function() c[1] = 5 end)
assert(not ok and err:find("read-only", 1, true), err)
-- reductions and densities take constants and give numbers
assert(ad.sum(c) == 1 + math.exp(1) + math.exp(2))
assert(ad.dot(c, {1, 0, 0}) == 1)
assert(type(ad.normal_lpdf(c, 0, 1)) == "number")
-- mixed with vars: vector vars; gradients flow through the var side only
local v, g = ad.grad(function(p) return ad.sum(c * p + ad.log(c) * p[1]) end, {1, 2, 3})
assert(math.abs(v - (ad.dot(c, {1, 2, 3}) + 3 * 1)) < 1e-12)
assert(g[1] == c[1] + 3 and g[2] == c[2] and g[3] == c[3])
-- as a starting point or direction for the drivers
local v2, g2 = ad.grad(function(p) return ad.dot(p, p) end, c)
assert(v2 == ad.dot(c, c) and g2[2] == 2 * c[2])
-- the same model code on numbers and on vars gives the same value
local y = mp.array("f64", {0.5, 1.5, -0.3})
local function model(beta)
  local mu = ad.matvec({{1, 0.2}, {1, -0.4}, {1, 1.1}}, beta)
  local z = ad.sub(y, mu) / ad.exp(beta[2])
  return ad.sum(z * z * -0.5) - 3 * beta[2]
end
local plain = model(ad.add({0.3, -0.2}, 0))
local taped = ad.grad(model, {0.3, -0.2})
assert(type(plain) == "number" and plain == taped, ("%.17g vs %.17g"):format(plain, taped))
print("ad_const: ok")
