-- ranks: nompi 1
-- SPDX-License-Identifier: MIT
-- Reductions (sum prod min max mean norm dot), whole and along a dimension,
-- against Lua reference loops: every dtype, strided views, empty arrays, NaN.

local function fails(pattern, f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  msg = tostring(msg):gsub("%[rank %d+/%d+%] ", "", 1) -- the rank (array_errors_named.lua checks it)
  assert(msg:find(pattern, 1, true), "wrong message: " .. msg)
end
local function same(a, b)
  if a ~= a then return b ~= b end
  return a == b and math.type(a) == math.type(b)
end
local function close(a, b, rel)
  if a ~= a then return b ~= b end
  return math.abs(a - b) <= rel * math.max(1, math.abs(b))
end

local DT = {"f64", "f32", "i64", "i32", "u8"}
local isf = {f64 = true, f32 = true}
local nan, inf = 0 / 0, math.huge

-- integer sums, products and dots wrap like Lua integers: exact
local wrapping = mp.array("i64", {math.maxinteger, 2, 3})
assert(wrapping:sum() == math.maxinteger + 5 and wrapping:prod() == math.maxinteger * 6)
assert(mp.array("u8", 1000):fill(255):sum() == 255000, "u8 sums do not wrap at 8 bits")
assert(mp.array("i32", {2147483647, 2147483647}):sum() == 4294967294)

for _, d in ipairs(DT) do
  local a = mp.array(d, 7, 5)
  for i = 1, #a do a[i] = isf[d] and (i % 11) * 0.5 - 2 or (d == "u8" and i % 13 or (i % 13) - 6) end
  -- Lua references
  local s, p, mn, mx, sq, ab = 0, 1, math.huge, -math.huge, 0, 0
  if not isf[d] then s, p = 0, 1 end
  for i = 1, #a do
    local x = a[i]
    s, p = s + x, p * x
    mn, mx = math.min(mn, x), math.max(mx, x)
    sq, ab = sq + x * x, ab + math.abs(x)
  end
  if isf[d] then
    assert(close(a:sum(), s, 1e-15) and math.type(a:sum()) == "float", d .. " sum")
    assert(close(a:prod(), p, 1e-15), d .. " prod")
  else
    assert(same(a:sum(), s) and same(a:prod(), p), d .. " integer sum/prod exact")
  end
  assert(a:min() == mn and a:max() == mx, d .. " min/max")
  assert(math.type(a:min()) == (isf[d] and "float" or "integer"))
  assert(close(a:mean(), s / #a, 1e-15) and math.type(a:mean()) == "float", d .. " mean")
  assert(close(a:norm(), math.sqrt(sq), 1e-14), d .. " norm")
  assert(close(a:norm(1), ab, 1e-15) and a:norm(math.huge) == math.max(math.abs(mn), math.abs(mx)))
  local dd = mp.Array.dot(a, a)
  if isf[d] then assert(close(dd, sq, 1e-14)) else assert(same(dd, math.tointeger(sq))) end

  -- along each dimension: extent 1 there; i64 for integer sums and products
  for dim = 1, 2 do
    local r = a:sum(dim)
    local rm, rx, rmean = a:min(dim), a:max(dim), a:mean(dim)
    assert(r.dtype == (isf[d] and d or "i64") and rm.dtype == d and rx.dtype == d)
    assert(rmean.dtype == (d == "f32" and "f32" or "f64"))
    local n1, n2 = a:dims()
    local e1, e2 = r:dims()
    assert((dim == 1 and e1 == 1 and e2 == n2) or (dim == 2 and e1 == n1 and e2 == 1))
    for i = 1, e1 do
      for j = 1, e2 do
        local acc, lo, hi, cnt = 0, math.huge, -math.huge, 0
        for k = 1, (dim == 1 and n1 or n2) do
          local x = dim == 1 and a:get(k, j) or a:get(i, k)
          acc, cnt = acc + x, cnt + 1
          lo, hi = math.min(lo, x), math.max(hi, x)
        end
        if d == "f32" then acc = string.unpack("f", string.pack("f", acc)) end
        assert(close(r:get(i, j), acc, 1e-15), d .. " sum along " .. dim)
        assert(rm:get(i, j) == lo and rx:get(i, j) == hi)
        local m = acc / cnt
        if d == "f32" then m = string.unpack("f", string.pack("f", m)) end
        assert(close(rmean:get(i, j), m, 1e-6), d .. " mean along " .. dim)
      end
    end
  end
  assert(a:prod(2):get(1, 1) == a:get(1, 1) * a:get(1, 2) * a:get(1, 3) * a:get(1, 4) * a:get(1, 5))
  -- strided views reduce the elements they show
  local v = a:view({2, -1, 2}, {1, -1, 2})
  local vs = 0
  for i = 1, #v do vs = vs + v[i] end
  assert(close(v:sum(), vs, 1e-15) and not v.contiguous)
  assert(close(v:sum(1):sum(), vs, 1e-15))
end

-- pairwise summation: accurate where a serial sum drifts
local many = mp.array("f32", 1000000):fill(0.1)
assert(math.abs(many:sum() - 1000000 * string.unpack("f", string.pack("f", 0.1))) < 1e-6)
local ones = mp.array("f64", 10000001):fill(1)
assert(ones:sum() == 10000001.0)

-- empty arrays
local e = mp.array("f64", 0)
assert(same(e:sum(), 0.0) and same(e:prod(), 1.0) and same(mp.array("i32", 0):sum(), 0))
assert(e:norm() == 0 and mp.Array.dot(e, e) == 0)
assert(e:mean() ~= e:mean(), "mean of nothing is nan")
fails("bad argument #1 to 'mp.Array.min' (empty array)", mp.Array.min, e)
fails("bad argument #1 to 'mp.Array.max' (empty dimension 2)", mp.Array.max, mp.array("i32", 3, 0), 2)
local z = mp.array("f64", 3, 0):sum(1)
assert(#z == 0 and select(2, z:dims()) == 0)
assert(#mp.array("f64", 0, 4):sum(1) == 4)

-- NaN anywhere: NaN (min and max included, wherever it is)
for pos = 1, 3 do
  local t = mp.array("f64", {1, 2, 3})
  t[pos] = nan
  assert(t:min() ~= t:min() and t:max() ~= t:max() and t:sum() ~= t:sum(), "NaN at " .. pos)
  assert(t:norm() ~= t:norm() and t:norm(math.huge) ~= t:norm(math.huge))
  local m2 = mp.array("f32", 3, 2):fill(1)
  m2:set(pos, 2, nan)
  local mm = m2:min(1)
  assert(mm[1] == 1 and mm[2] ~= mm[2])
end
assert(mp.array("f64", {1, inf}):norm() == inf and mp.array("f64", {-inf, 1}):min() == -inf)

-- the 2-norm survives over- and underflow of the squares
assert(close(mp.array("f64", {3e200, 4e200}):norm(), 5e200, 1e-15))
assert(close(mp.array("f64", {3e-200, 4e-200}):norm(), 5e-200, 1e-15))

-- dot: same shape, dtypes promote
assert(mp.Array.dot(mp.array("i32", {1, 2}), mp.array("f64", {0.5, 0.25})) == 1.0)
assert(same(mp.Array.dot(mp.array("u8", {200, 200}), mp.array("u8", {200, 1})), 40200))
fails("bad argument #2 to 'mp.Array.dot' (shape 3 vs 2)", mp.Array.dot, mp.array("f64", 2), mp.array("f64", 3))
fails("bad argument #2 to 'mp.Array.sum' (dimension 3 out of range 1..2)", mp.Array.sum, mp.array("f64", 2, 2), 3)
fails("bad argument #2 to 'mp.Array.norm' (p must be 1, 2 or math.huge, got 3)", mp.Array.norm, mp.array("f64", 2), 3)
fails("bad argument #1 to 'mp.Array.sum' (mp.Array expected, got table)", mp.Array.sum, {1, 2})

print("array_reduce ok")
