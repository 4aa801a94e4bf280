-- ranks: nompi 1
-- SPDX-License-Identifier: MIT
-- Typed arrays: creation, flat and n-D indexing, conversion rules, errors.

local function fails(pattern, f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  msg = tostring(msg):gsub("%[rank %d+/%d+%] ", "", 1) -- the rank (array_errors_named.lua checks it)
  assert(msg:find(pattern, 1, true), "wrong message: " .. msg)
end

-- creation from dims: zeros
local a = mp.array("f64", 2, 3)
assert(#a == 6 and a.dtype == "f64" and a.ndim == 2)
local d1, d2 = a:dims()
assert(d1 == 2 and d2 == 3 and select("#", a:dims()) == 2)
for i = 1, #a do assert(a[i] == 0.0 and math.type(a[i]) == "float") end

-- column-major: a:get(i, j) is flat element i + (j - 1) * d1
a:set(2, 3, 7.5)
assert(a[6] == 7.5 and a:get(2, 3) == 7.5)
a[3] = 1.25
assert(a:get(1, 2) == 1.25)

-- from a list and from nested tables (t[i][j] == a:get(i, j))
local v = mp.array("i32", {10, 20, 30})
assert(#v == 3 and v[2] == 20 and math.type(v[2]) == "integer")
local m = mp.array("i64", {{1, 2, 3}, {4, 5, 6}})
assert(select("#", m:dims()) == 2 and m:get(1, 3) == 3 and m:get(2, 1) == 4)
assert(m[1] == 1 and m[2] == 4 and m[3] == 2)
local c = mp.array("u8", {{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}})
assert(c:get(2, 1, 2) == 6 and #c == 8)

-- totable is the inverse of the nested constructor
local t = m:totable()
assert(#t == 2 and #t[1] == 3 and t[2][3] == 6 and t[1][2] == 2)
assert(#v:totable() == 3 and v:totable()[3] == 30)
local ct = c:totable()
assert(ct[2][2][1] == 7)

-- i64 stores integers exactly
local big = mp.array("i64", {math.maxinteger, math.mininteger, -1})
assert(big[1] == math.maxinteger and big[2] == math.mininteger and big:sum() == math.maxinteger + math.mininteger - 1)
big[3] = 2.0^53
assert(big[3] == 9007199254740992 and math.type(big[3]) == "integer")

-- floats in integer arrays must be exact integers; u8/i32 ranges checked
local i32 = mp.array("i32", 3)
i32[1] = 3.0
assert(i32[1] == 3)
fails("cannot store 1.5 in an i32 array (not an integer)", function() i32[2] = 1.5 end)
fails("out of range -2147483648..2147483647", function() i32[2] = 2^31 end)
fails("cannot store 256 in a u8 array (out of range 0..255)", function() mp.array("u8", 1)[1] = 256 end)
fails("cannot store -1 in a u8 array", function() mp.array("u8", 1)[1] = -1 end)
fails("not an integer", function() mp.array("i64", 1)[1] = 0 / 0 end)
fails("number expected, got string", function() mp.array("f64", 1)[1] = "1" end)
fails("beyond the f32 range", function() mp.array("f32", 1)[1] = 1e300 end)
local f32 = mp.array("f32", {0.5, 1 / 0, -1 / 0})
assert(f32[1] == 0.5 and f32[2] == math.huge and f32[3] == -math.huge)

-- bounds and argument errors are worded like lauxlib
fails("bad argument #2 to 'a:set' (index 7 out of range 1..3)", function() a:set(1, 7, 0) end)
fails("bad argument #1 to 'a:get' (index 3 out of range 1..2)", function() a:get(3, 1) end)
fails("2 indices expected for a 2-D array, got 1", function() a:get(1) end)
fails("index 7 out of range 1..6", function() return a[7] end)
fails("index 0 out of range 1..6", function() a[0] = 1 end)
fails("number has no integer representation", function() return a[1.5] end)
fails("invalid dtype 'f16'", mp.array, "f16", 3)
fails("negative dimension", mp.array, "f64", 2, -1)
fails("at most 8 dimensions", mp.array, "f64", 1, 1, 1, 1, 1, 1, 1, 1, 1)
fails("ragged nested table (length 1, expected 2)", mp.array, "f64", {{1, 2}, {3}})
fails("at [2][1]: number expected, got string", mp.array, "f64", {{1, 2}, {"x", 4}})
fails("array too large", mp.array, "f64", 2^40, 2^40)

-- 0-element arrays
local z = mp.array("f64", 0)
assert(#z == 0 and z:sum() == 0 and #z:totable() == 0)
fails("index 1 out of range 1..0", function() return z[1] end)
local z2 = mp.array("i32", 3, 0)
assert(#z2 == 0 and select(2, z2:dims()) == 0 and #z2:totable() == 3)
assert(#mp.array("u8", {}) == 0)
for _ in pairs(z) do error("no elements") end

-- fill, copy, sum, zeros_like, array_like, conversion copy, pairs
local f = mp.array("f64", 4):fill(2.5)
assert(f:sum() == 10.0)
local g = f:copy()
g[1] = 0
assert(f[1] == 2.5 and g:sum() == 7.5)
assert(mp.array("u8", 3):fill(255):sum() == 765)
fails("not an integer", function() mp.array("i32", 2):fill(0.5) end)
local zl = m:zeros_like()
assert(zl.dtype == "i64" and select(2, zl:dims()) == 3 and zl:sum() == 0)
local al = mp.array_like(m, "f32")
assert(al.dtype == "f32" and #al == 6)
local conv = mp.array("f64", m)
assert(conv.dtype == "f64" and conv:get(2, 3) == 6.0)
fails("element 1: cannot store 2.5 in an i32 array", mp.array, "i32", mp.array("f64", {2.5}))
local n = 0
for i, x in pairs(v) do n = n + 1; assert(x == v[i]) end
assert(n == 3)

-- tostring
assert(tostring(mp.array("f64", 2, 3)):find("^mp%.Array%(f64, 2x3%)"))
assert(tostring(mp.array("i32", {1, 2})) == "mp.Array(i32, 2) {1, 2}")

-- several MiB: one allocation, zero-filled
local huge = mp.array("f64", 4 * 1024 * 1024)
assert(#huge == 4194304 and huge[#huge] == 0 and huge[1] == 0 and huge:sum() == 0)

print("array_basic ok")
