-- ranks: nompi 1
-- SPDX-License-Identifier: MIT
-- Typed arrays: reshape and slice are views sharing data with their owner,
-- and a view keeps the owner's memory alive.

local function fails(pattern, f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(msg):find(pattern, 1, true), "wrong message: " .. tostring(msg))
end

local a = mp.array("f64", 2, 3)
for i = 1, #a do a[i] = i end

-- reshape: same elements, same order, shared
local r = a:reshape(3, 2)
assert(#r == 6 and select("#", r:dims()) == 2 and select(1, r:dims()) == 3)
assert(r:get(3, 1) == 3 and r:get(1, 2) == 4)
r[1] = 100
assert(a[1] == 100)
a:set(2, 3, -6)
assert(r[6] == -6)
local flat = a:reshape(6)
assert(flat.ndim == 1 and flat[5] == 5)
fails("new shape has 4 elements, array has 6", a.reshape, a, 4)

-- slice along the last dimension: columns lo..hi of a 2-D array
local s = a:slice(2, 3)
assert(select(2, s:dims()) == 2 and #s == 4)
assert(s:get(1, 1) == a:get(1, 2) and s:get(2, 2) == a:get(2, 3))
s:set(1, 1, 42)
assert(a:get(1, 2) == 42)
local one = a:slice(3)            -- hi defaults to the last index
assert(#one == 2 and one[1] == a:get(1, 3))
local empty = a:slice(2, 1)       -- hi = lo - 1: an empty view
assert(#empty == 0 and select(2, empty:dims()) == 0)
fails("index 4 out of range 1..3", a.slice, a, 2, 4)
fails("index 0 out of range 1..4", a.slice, a, 0)

-- views of views share the same memory
local v = mp.array("i32", {1, 2, 3, 4, 5, 6, 7, 8})
local w = v:slice(3, 8):reshape(2, 3):slice(2, 3)
assert(w[1] == 5 and #w == 4)
w[4] = 80
assert(v[8] == 80)

-- fill and copy on views
v:slice(1, 2):fill(9)
assert(v[1] == 9 and v[2] == 9 and v[3] == 3)
local cp = v:slice(1, 2):copy()
cp[1] = 0
assert(v[1] == 9)

-- a view keeps its owner alive
local keep
do
  local owner = mp.array("f64", 1000)
  owner[1000] = 7
  keep = owner:reshape(10, 100):slice(100)
end
collectgarbage()
collectgarbage()
assert(keep[10] == 7)

-- 1-D slice is a sub-range
local x = mp.array("u8", {10, 20, 30, 40})
local y = x:slice(2, 3)
assert(#y == 2 and y[1] == 20 and y[2] == 30)
fails("index 3 out of range 1..2", function() return y[3] end)

print("array_views ok")
