-- ranks: nompi 1
-- SPDX-License-Identifier: MIT
-- Range views (view, interior), copies between views (copy_from, fill), and
-- linear combinations (lincomb, axpy, axpby): a stencil and its halo.

local function fails(pattern, f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  msg = tostring(msg):gsub("%[rank %d+/%d+%] ", "", 1) -- the rank (array_errors_named.lua checks it)
  assert(msg:find(pattern, 1, true), "wrong message: " .. msg)
end
local function shape(a) return table.concat({a:dims()}, "x") end

local a = mp.array("i32", 5, 6)
for j = 1, 6 do for i = 1, 5 do a:set(i, j, 10 * i + j) end end

-- ranges {lo, hi [, step]}, ':' or nil for all, negative indices from the end
local v = a:view({2, 4}, {3, -1})
assert(shape(v) == "3x4" and not v.contiguous and v.ndim == 2)
assert(v:get(1, 1) == 23 and v:get(3, 4) == 46)
assert(select(1, v:strides()) == 1 and select(2, v:strides()) == 5)
assert(shape(a:view(":", {2, 2})) == "5x1" and a:view(":", {2, 2}).contiguous)
assert(shape(a:view(nil, {-2})) == "5x2" and a:view(nil, {-2}):get(1, 1) == 15)
assert(shape(a:view()) == "5x6" and a:view().contiguous)
-- steps, reversed ranges
local st = a:view({1, -1, 2}, {6, 1, -2})
assert(shape(st) == "3x3" and st:get(1, 1) == 16 and st:get(3, 3) == 52 and st:get(2, 2) == 34)
-- an integer index drops its dimension
local r3 = a:view(3, ":")
assert(shape(r3) == "6" and r3[1] == 31 and r3[6] == 36 and select(1, r3:strides()) == 5)
local c2 = a:view(":", -1)
assert(shape(c2) == "5" and c2.contiguous and c2[5] == 56)
local one = a:view(2, 3)
assert(shape(one) == "1" and one[1] == 23)
-- empty ranges
assert(#a:view({3, 2}, ":") == 0 and shape(a:view({3, 2}, ":")) == "0x6")
assert(#a:view({1, 0, 1}) == 0)
-- access through strided views: [], get/set, totable, tostring, pairs
v[1] = -1
assert(a:get(2, 3) == -1)
v:set(3, 4, -2)
assert(a:get(4, 6) == -2)
assert(v:totable()[2][3] == 35 and #v:totable() == 3)
assert(tostring(a:view({1, 2}, {1, 2})) == "mp.Array(i32, 2x2) {11, 21, 12, 22}")
local n = 0
for i, x in pairs(st) do n = n + 1; assert(x == st[i]) end
assert(n == 9)
fails("index 13 out of range 1..12", function() return v[13] end)
-- views of views keep the root owner and compose strides
local vv = st:view({2, 3}, 2)
assert(shape(vv) == "2" and vv[1] == 34 and vv[2] == 54)
-- errors, worded like lauxlib
fails("bad argument #2 to 'mp.Array.view' (index 6 out of range 1..5 of dimension 1)", a.view, a, 6)
fails("bad argument #3 to 'mp.Array.view' (index 7 out of range 1..6 of dimension 2)", a.view, a, ":", {2, 7})
fails("bad argument #2 to 'mp.Array.view' (index -6 out of range 1..5 of dimension 1)", a.view, a, -6)
fails("bad argument #2 to 'mp.Array.view' (range step must not be 0)", a.view, a, {1, 2, 0})
fails("bad argument #4 to 'mp.Array.view' (3 ranges for a 2-D array)", a.view, a, 1, 1, 1)
fails("bad argument #2 to 'mp.Array.view' (index, {lo, hi [, step]} or ':' expected, got boolean)", a.view, a, true)
fails("bad argument #2 to 'mp.Array.view' (range item 2 is not an integer (string))", a.view, a, {1, "x"})
fails("cannot reshape a strided view (copy it first)", v.reshape, v, 12)
assert(v:copy().contiguous and v:copy():reshape(12)[1] == -1)
-- slice works on strided views too
local sl = v:slice(2, 3)
assert(shape(sl) == "3x2" and sl:get(1, 1) == 24)

-- a strided view keeps its owner alive
local keep
do
  local owner = mp.array("f64", 100, 100)
  owner:set(100, 100, 7)
  keep = owner:view({2, -1, 2}, {100, 1, -1})
end
collectgarbage()
collectgarbage()
assert(keep:get(50, 1) == 7)

-- fill and copy_from on strided views; copy_from broadcasts and converts
local f = mp.array("f64", 4, 4)
f:interior(1):fill(1)
assert(f:sum() == 4 and f:get(2, 2) == 1 and f:get(1, 1) == 0)
f:view(":", 1):copy_from(mp.array("i32", {1, 2, 3, 4}))
assert(f:get(3, 1) == 3.0 and math.type(f:get(3, 1)) == "float")
f:view(1, ":"):copy_from(f:view(":", 1))   -- row 1 from column 1: they share (1, 1)
assert(f:get(1, 1) == 1 and f:get(1, 2) == 2 and f:get(1, 4) == 4)
f:copy_from(mp.array("f64", {{9}}))         -- 1x1 broadcast to all
assert(f:sum() == 144)
f:copy_from(0.5)
assert(f:sum() == 8)
local col = mp.array("f64", 4, 1):fill(2)
f:copy_from(col)
assert(f:get(4, 4) == 2)
assert(f:copy_from(f) == f)
fails("bad argument #2 to 'mp.Array.copy_from' (shape 3 vs 4x4)", f.copy_from, f, mp.array("f64", 3))
fails("bad argument #2 to 'mp.Array.copy_from' (element 2: cannot store 300 in a u8 array (out of range 0..255))",
      mp.array("u8", 3).copy_from, mp.array("u8", 3), mp.array("i32", {1, 300, 2}))
fails("element 1: cannot store 0.5 in an i64 array (not an integer)", function()
  mp.array("i64", 2, 2):view({1, 2}, 1):copy_from(mp.array("f32", {0.5, 1}))
end)
fails("bad argument #2 to 'mp.Array.copy_from' (mp.Array or number expected, got table)", f.copy_from, f, {})
-- overlapping copy: reads the source as it was
local sh = mp.array("u8", {1, 2, 3, 4, 5})
sh:view({2, 5}):copy_from(sh:view({1, 4}))
assert(table.concat(sh:totable(), ",") == "1,1,2,3,4")

-- interior: the block w in from every edge, shifted by offsets
local u = mp.array("f64", 6, 5)
for i = 1, #u do u[i] = i end
local c = u:interior(1)
assert(shape(c) == "4x3" and c:get(1, 1) == u:get(2, 2))
assert(u:interior(1, -1, 0):get(1, 1) == u:get(1, 2))
assert(u:interior(1, 0, 1):get(4, 3) == u:get(5, 5))
assert(shape(u:interior({2, 0})) == "2x5")
assert(shape(u:interior(0)) == "6x5" and u:interior(0).contiguous)
fails("bad argument #3 to 'mp.Array.interior' (offset 2 beyond the width 1 of dimension 1)", u.interior, u, 1, 2)
fails("bad argument #2 to 'mp.Array.interior' (width 3 does not fit dimension 2 of extent 5)", u.interior, u, 3)
fails("bad argument #5 to 'mp.Array.interior' (3 offsets for a 2-D array)", u.interior, u, 1, 0, 0, 0)

-- the 5-point Jacobi step, three ways, against a Lua loop
local N = 9
local x = mp.array("f64", N, N)
for i = 1, #x do x[i] = math.sin(i) end
local want = mp.array("f64", N, N)
for j = 2, N - 1 do
  for i = 2, N - 1 do
    want:set(i, j, 0.25 * (x:get(i - 1, j) + x:get(i + 1, j) + x:get(i, j - 1) + x:get(i, j + 1)))
  end
end
local y = mp.array("f64", N, N)
y:interior(1):lincomb(0.25, x:interior(1, -1, 0), 0.25, x:interior(1, 1, 0),
                      0.25, x:interior(1, 0, -1), 0.25, x:interior(1, 0, 1))
assert((y - want):norm(math.huge) == 0, "lincomb stencil")
local y2 = mp.array("f64", N, N)
y2:interior(1):copy_from(x:interior(1, -1, 0)):add_(x:interior(1, 1, 0)):add_(x:interior(1, 0, -1))
  :add_(x:interior(1, 0, 1)):mul_(0.25)
assert((y2 - want):norm(math.huge) == 0, "eager stencil")
local y3 = mp.array("f64", N, N)
y3:interior(1):copy_from((x:interior(1, -1, 0) + x:interior(1, 1, 0) + x:interior(1, 0, -1)
                          + x:interior(1, 0, 1)) * 0.25)
assert((y3 - want):norm(math.huge) == 0, "operator stencil")
-- the halo is a view: copy the last interior column into the first halo column
y:view({2, -2}, 1):copy_from(y:view({2, -2}, -2))
assert(y:get(5, 1) == y:get(5, N - 1))

-- lincomb: any number of terms up to 16, every dtype, y among the terms
for _, d in ipairs({"f64", "f32", "i64", "i32", "u8"}) do
  local t = {}
  for k = 1, 7 do
    t[k] = mp.array(d, 3, 4)
    for i = 1, 12 do t[k][i] = (i * k) % 7 end
  end
  for K = 1, 7 do
    local args, ref = {}, {}
    for k = 1, K do args[2 * k - 1], args[2 * k] = k, t[k] end
    for i = 1, 12 do
      local s = 0
      for k = 1, K do s = s + k * t[k][i] end
      ref[i] = s
    end
    local out = mp.array(d, 3, 4):lincomb(table.unpack(args))
    for i = 1, 12 do
      local w = ref[i]
      if d == "u8" then w = w & 0xFF end
      assert(out[i] == w, d .. " lincomb K=" .. K)
    end
  end
  -- strided terms and a strided y
  local big = mp.array(d, 6, 8)
  local yv = big:view({1, -1, 2}, {1, 4})
  yv:lincomb(2, t[1]:view(":", {1, 4}), 1, yv)
  assert(big:get(3, 2) == 2 * t[1]:get(2, 2) and big:get(2, 2) == 0)
end
local acc = mp.array("f64", {1, 2, 3})
assert(acc:axpy(2, mp.array("f64", {1, 1, 1})) == acc)
assert(table.concat(acc:totable(), ",") == "3.0,4.0,5.0")
acc:axpby(1, mp.array("f64", {1, 1, 1}), -1)
assert(table.concat(acc:totable(), ",") == "-2.0,-3.0,-4.0")
local ia = mp.array("i32", {1, 2})
ia:axpy(3, mp.array("i32", {1, 1}))
assert(ia[1] == 4 and ia[2] == 5)
-- a term overlapping y (not as y itself) is read before the update
local ov = mp.array("f64", {1, 2, 3, 4})
ov:view({2, 4}):lincomb(1, ov:view({1, 3}), 1, ov:view({2, 4}))
assert(table.concat(ov:totable(), ",") == "1.0,3.0,5.0,7.0")
-- a term broadcast to y's shape
local bc = mp.array("f64", 2, 3):lincomb(1, mp.array("f64", {{1, 2, 3}}))
assert(bc:get(2, 3) == 3)
fails("bad argument #3 to 'mp.Array.lincomb' (f32 array, the result is f64 (convert it with mp.array))",
      mp.Array.lincomb, mp.array("f64", 2), 1, mp.array("f32", 2))
fails("bad argument #2 to 'mp.Array.lincomb' (integer coefficient expected for an i32 array, got 0.5)",
      mp.Array.lincomb, mp.array("i32", 2), 0.5, mp.array("i32", 2))
fails("bad argument #3 to 'mp.Array.lincomb' (shape 3 vs 2)", mp.Array.lincomb, mp.array("f64", 2), 1, mp.array("f64", 3))
fails("bad argument #5 to 'mp.Array.lincomb' (coefficient and array pairs expected, got 3 values)",
      mp.Array.lincomb, mp.array("f64", 2), 1, mp.array("f64", 2), 2)
fails("bad argument #2 to 'mp.Array.lincomb' (number expected, got table)", mp.Array.lincomb, mp.array("f64", 2), {}, mp.array("f64", 2))
local toomany = {}
for k = 1, 17 do toomany[2 * k - 1], toomany[2 * k] = 1, mp.array("f64", 1) end
fails("(at most 16 terms)", mp.Array.lincomb, mp.array("f64", 1), table.unpack(toomany))

print("array_slices ok")
