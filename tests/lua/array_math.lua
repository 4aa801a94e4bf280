-- ranks: nompi 1
-- SPDX-License-Identifier: MIT
-- Array math against Lua reference loops: every binary op and unary function,
-- every dtype pair, scalars, broadcasting, strided views, out and in place,
-- NaN, and the errors.

local function fails(pattern, f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  msg = tostring(msg):gsub("%[rank %d+/%d+%] ", "", 1) -- the rank (array_errors_named.lua checks it)
  assert(msg:find(pattern, 1, true), "wrong message: " .. msg)
end

local DT = {"f64", "f32", "i64", "i32", "u8"}
local isf = {f64 = true, f32 = true}
local irank = {u8 = 1, i32 = 2, i64 = 3}
local nan, inf = 0 / 0, math.huge

-- the documented type rules, written again
local function promote(a, b)
  if a == b then return a end
  if isf[a] and isf[b] then return "f64" end
  if isf[a] or isf[b] then
    local f, i = isf[a] and a or b, isf[a] and b or a
    return (f == "f32" and i == "u8") and "f32" or "f64"
  end
  return irank[a] > irank[b] and a or b
end

local function f32(v) return (string.unpack("f", string.pack("f", v))) end
-- a Lua value as an element of dtype d (operands are converted first)
local function conv(d, v)
  if d == "f64" then return v + 0.0 end
  if d == "f32" then return f32(v + 0.0) end
  return v
end
-- a Lua result stored in dtype d: floats round, integers wrap
local function wrap(d, v)
  if d == "f64" then return v + 0.0 end
  if d == "f32" then return f32(v) end
  if d == "i64" then return v end
  if d == "i32" then return ((v + 0x80000000) & 0xFFFFFFFF) - 0x80000000 end
  return v & 0xFF
end

local function same(a, b)
  if a ~= a then return b ~= b end
  return a == b and math.type(a) == math.type(b)
end

local function check(got, want_dtype, want, what)
  assert(got.dtype == want_dtype, what .. ": dtype " .. got.dtype .. ", want " .. want_dtype)
  assert(#got == #want, what .. ": length")
  for i = 1, #want do
    if not same(got[i], want[i]) then
      error(string.format("%s: element %d is %s, want %s", what, i, tostring(got[i]), tostring(want[i])), 2)
    end
  end
end

local values = {
  f64 = {1.5, -2.25, 0.0, 3.0, -0.5, 1e10, nan, inf, -inf, 7.0, 2.0, -3.0},
  f32 = {1.5, -2.25, 0.0, 3.0, -0.5, f32(1e10), nan, inf, f32(0.1), 7.0, 2.0, -3.0},
  i64 = {1, -2, 0, 3, math.maxinteger, math.mininteger, 7, -7, 100, 2, -3, 5},
  i32 = {1, -2, 0, 3, 2147483647, -2147483648, 7, -7, 100, 2, -3, 5},
  u8 = {1, 2, 0, 3, 255, 128, 7, 9, 100, 2, 3, 5},
}
local function make(d, rot, nozero)
  local t = {}
  local v = values[d]
  for i = 1, #v do
    local x = v[(i + rot - 1) % #v + 1]
    if nozero and x == 0 then x = 1 end
    t[i] = x
  end
  return mp.array(d, t):reshape(3, 4), t
end

local ref = {
  add = function(x, y) return x + y end,
  sub = function(x, y) return x - y end,
  mul = function(x, y) return x * y end,
  div = function(x, y) return x / y end,
  pow = function(x, y) return x ^ y end,
  mod = function(x, y) return x % y end,
  idiv = function(x, y) return x // y end,
  minimum = function(x, y) return (x < y or x ~= x) and x or y end,
  maximum = function(x, y) return (x > y or x ~= x) and x or y end,
  band = function(x, y) return x & y end,
  bor = function(x, y) return x | y end,
  bxor = function(x, y) return x ~ y end,
}
local opsym = {add = "+", sub = "-", mul = "*", div = "/", pow = "^", mod = "%", idiv = "//",
               band = "&", bor = "|", bxor = "~"}
local operator = {}
for name, sym in pairs(opsym) do
  operator[name] = load("local a, b = ... return a " .. sym .. " b")
end

local function result_dtype(op, dx, dy)
  local R = promote(dx, dy)
  if (op == "div" or op == "pow") and not isf[R] then R = "f64" end
  return R
end

-- every op, every dtype pair, as function, method, operator, out= and in place
local n = 0
for op, f in pairs(ref) do
  local bitwise = op == "band" or op == "bor" or op == "bxor"
  for _, dx in ipairs(DT) do
    for _, dy in ipairs(DT) do
      local R = result_dtype(op, dx, dy)
      if bitwise and isf[R] then
        fails("integer operands expected", mp.Array[op], (make(dx, 0)), (make(dy, 3)))
      else
        local nozero = not isf[R] and (op == "mod" or op == "idiv")
        local x, tx = make(dx, 0)
        local y, ty = make(dy, 5, nozero)
        local want = {}
        for i = 1, #tx do want[i] = wrap(R, f(conv(R, tx[i]), conv(R, ty[i]))) end
        local what = op .. " " .. dx .. " " .. dy
        check(mp.Array[op](x, y), R, want, what)
        check(x[op](x, y), R, want, what .. " (method)")
        if operator[op] then check(operator[op](x, y), R, want, what .. " (operator)") end
        local out = mp.array(R, 3, 4)
        assert(mp.Array[op](x, y, out) == out)
        check(out, R, want, what .. " (out)")
        -- in place: when the result's kind is x's
        if isf[R] == isf[dx] then
          local xc = x:copy()
          assert(xc[op .. "_"](xc, y) == xc)
          local w2 = {}
          for i = 1, #want do w2[i] = wrap(dx, want[i]) end
          check(xc, dx, w2, what .. " (in place)")
        else
          fails("the result is " .. R .. ", the array is " .. dx, x[op .. "_"], x:copy(), y)
        end
        n = n + 1
      end
    end
  end
end
assert(n > 250)

-- scalars are weak: the array's dtype wins (f32 * 0.1 is f32, u8 + 1 is u8)
for _, d in ipairs(DT) do
  local x, tx = make(d, 2)
  for _, s in ipairs({2, -1, 0.5, 3.0}) do
    local R = isf[d] and d or (math.type(s) == "integer" and d or "f64")
    if d == "u8" and s < 0 then
      fails("cannot store -1 in a u8 array (out of range 0..255)", mp.Array.add, x, s)
    else
      local want1, want2 = {}, {}
      for i = 1, #tx do
        want1[i] = wrap(R, conv(R, tx[i]) * conv(R, s))
        want2[i] = wrap(R, conv(R, s) - conv(R, tx[i]))
      end
      check(x * s, R, want1, "scalar * " .. d)
      check(s - x, R, want2, "scalar - " .. d)
    end
  end
end
fails("cannot store 300 in a u8 array (out of range 0..255)", function() return mp.array("u8", 2) + 300 end)
fails("beyond the f32 range", function() return mp.array("f32", 2) * 1e300 end)
check(mp.array("u8", {250, 3}) + 10, "u8", {4, 13}, "u8 wraps")
check(mp.array("i32", {2147483647}) + 1, "i32", {-2147483648}, "i32 wraps")
check(mp.array("i64", {math.maxinteger}) * 2, "i64", {-2}, "i64 wraps like Lua")
check(mp.array("i32", {7}) / 2, "f64", {3.5}, "/ on integers is a float")
check(mp.array("i32", {7, -7}) // 2, "i32", {3, -4}, "// floors")
check(mp.array("i32", {7, -7}) % -3, "i32", {-2, -1}, "% has the divisor's sign")
check(mp.array("i64", {math.mininteger}) // -1, "i64", {math.mininteger}, "mininteger // -1")
check(mp.array("i64", {math.mininteger}) % -1, "i64", {0}, "mininteger % -1")
check(mp.array("f64", {5.5, -5.5}) % 2, "f64", {1.5, 0.5}, "float %")
check(mp.array("i32", {6}) & 3, "i32", {2}, "&")
check(mp.array("u8", {6}) ~ 0xFF, "u8", {249}, "~")
check(mp.array("i32", {6}) & 3.0, "i32", {2}, "& with an integral float")
fails("not an integer", function() return mp.array("i32", {6}) & 3.5 end)
fails("bad argument #2 to 'mp.Array.idiv' (integer division by zero)", function() return mp.array("i32", {1, 2}) // mp.array("i32", {1, 0}) end)
fails("bad argument #2 to 'mp.Array.mod' (integer division by zero)", function() return mp.array("u8", 3) % 0 end)
check(mp.array("f64", {1, -1, 0}) / 0, "f64", {inf, -inf, nan}, "float / 0")

-- unary: integer-keeping ones, and float functions (integers give f64)
check(-mp.array("i32", {5, -2147483648}), "i32", {-5, -2147483648}, "neg wraps")
check(-mp.array("u8", {1, 0}), "u8", {255, 0}, "u8 neg")
check(mp.array("i64", {math.mininteger, -3}):abs(), "i64", {math.mininteger, 3}, "abs like math.abs")
check(~mp.array("i32", {0, 5}), "i32", {-1, -6}, "bnot")
check(mp.array("i32", {3}):floor(), "i32", {3}, "floor keeps integers")
fails("integer array expected, got f64", function() return ~mp.array("f64", 1) end)
local lua_fn = {
  sqrt = math.sqrt, exp = math.exp, log = math.log, sin = math.sin, cos = math.cos, tan = math.tan,
  asin = math.asin, acos = math.acos, atan = math.atan, floor = function(x) return math.floor(x) + 0.0 end,
  ceil = function(x) return math.ceil(x) + 0.0 end, abs = math.abs, neg = function(x) return -x end,
  log2 = function(x) return math.log(x, 2) end, log10 = function(x) return math.log(x, 10) end,
  trunc = function(x) return x >= 0 and math.floor(x) + 0.0 or math.ceil(x) + 0.0 end,
}
local approx = {  -- functions Lua lacks: formulas, compared within 1e-12
  cbrt = function(x) return x < 0 and -(-x) ^ (1 / 3) or x ^ (1 / 3) end,
  expm1 = function(x) return math.exp(x) - 1 end, log1p = function(x) return math.log(1 + x) end,
  sinh = function(x) return (math.exp(x) - math.exp(-x)) / 2 end,
  cosh = function(x) return (math.exp(x) + math.exp(-x)) / 2 end,
  tanh = function(x) return (math.exp(x) - math.exp(-x)) / (math.exp(x) + math.exp(-x)) end,
}
local pts = {0.25, 0.5, 0.75, 0.9, 1.5, 2.5, 3.75}
for _, d in ipairs({"f64", "f32", "i32"}) do
  local t = {}
  for i, p in ipairs(pts) do t[i] = d == "i32" and i or conv(d, p) end
  local a = mp.array(d, t)
  local R = isf[d] and d or "f64"
  for name, f in pairs(lua_fn) do
    local keeps = ({neg = 1, abs = 1, floor = 1, ceil = 1, trunc = 1})[name]
    local Rn = (keeps and not isf[d]) and d or R
    local want = {}
    for i = 1, #t do want[i] = wrap(Rn, (not isf[Rn]) and math.tointeger(f(t[i])) or f(t[i])) end
    check(mp.Array[name](a), Rn, want, name .. " " .. d)
    check(a[name](a), Rn, want, name .. " " .. d .. " (method)")
    if Rn == d then
      local c = a:copy()
      assert(c[name .. "_"](c) == c)
      check(c, d, want, name .. "_ " .. d)
    end
  end
  for name, f in pairs(approx) do
    local got = mp.Array[name](a)
    assert(got.dtype == R)
    for i = 1, #t do
      local w = f(t[i])
      local tol = (R == "f32" and 1e-6 or 1e-12) * math.abs(w)
      assert(math.abs(got[i] - w) <= tol, name .. " " .. d .. " " .. i)
    end
  end
end
check(mp.array("f64", {-1, nan, inf, 0}):sqrt(), "f64", {nan, nan, inf, 0.0}, "sqrt domain")
check(mp.array("f64", {0}):log(), "f64", {-inf}, "log 0")

-- NaN goes through
check(mp.Array.minimum(mp.array("f64", {nan, 1, 2}), mp.array("f64", {1, nan, 1})), "f64",
      {nan, nan, 1.0}, "minimum propagates NaN")
check(mp.Array.maximum(mp.array("f32", {nan, 1}), 0), "f32", {nan, 1.0}, "maximum with a scalar")

-- broadcasting: extents 1 stretch, missing trailing dimensions are 1
local col = mp.array("f64", {{1}, {2}, {3}})          -- 3x1
local row = mp.array("f64", {{10, 20, 30, 40}})       -- 1x4
local s = col + row
assert(select("#", s:dims()) == 2 and select(1, s:dims()) == 3 and select(2, s:dims()) == 4)
for i = 1, 3 do for j = 1, 4 do assert(s:get(i, j) == i + 10 * j) end end
local v3 = mp.array("f64", {1, 2, 3})                  -- 3 against 3x4: trailing 1
local m34 = mp.array("f64", 3, 4):fill(1)
local b = m34 * v3
for i = 1, 3 do for j = 1, 4 do assert(b:get(i, j) == i) end end
m34:add_(col)
assert(m34:get(3, 4) == 4)
fails("bad argument #2 to 'mp.Array.add' (shape 4x3 vs 3x4)", mp.Array.add, mp.array("f64", 3, 4), mp.array("f64", 4, 3))
fails("bad argument #2 to 'mp.Array.add_' (shape 3x4 does not broadcast to 3x1)", mp.Array.add_, mp.array("f64", 3, 1), mp.array("f64", 3, 4))
fails("bad argument #3 to 'mp.Array.mul' (out has shape 2x2, the result 3x4)", mp.Array.mul, mp.array("f64", 3, 4), 2, mp.array("f64", 2, 2))
fails("bad argument #3 to 'mp.Array.mul' (the result is f64, out is i32)", mp.Array.mul, mp.array("f64", 3), 2, mp.array("i32", 3))
fails("bad argument #1 to 'mp.Array.add' (mp.Array expected, got two numbers)", mp.Array.add, 1, 2)
fails("bad argument #2 to 'mp.Array.add' (mp.Array, number or mp.Complex expected, got string)", mp.Array.add, mp.array("f64", 1), "1")
fails("bad argument #1 to 'mp.Array.sqrt' (mp.Array expected, got number)", mp.Array.sqrt, 4)
fails("bad argument #1 to 'mp.Array.add_' (mp.Array expected, got number)", mp.Array.add_, 1, mp.array("f64", 1))
fails("the result is f64, the array is i32", function() mp.array("i32", 2):mul_(0.5) end)

-- out of another dtype of the same kind: computed, then rounded / wrapped
local o32 = mp.array("f32", 2)
mp.Array.add(mp.array("f64", {0.1, 1e300}), 0.2, o32)
check(o32, "f32", {f32(0.1 + 0.2), inf}, "f64 result into f32 out")
local i8 = mp.array("u8", {200, 100})
i8:add_(mp.array("i32", {100, -101}))
check(i8, "u8", {44, 255}, "i32 result wrapped into u8 in place")

-- strided views as inputs and outputs, and views sharing memory
local big = mp.array("f64", 6, 8)
for i = 1, #big do big[i] = i end
local sv = big:view({1, -1, 2}, {2, 7, 3})     -- rows 1,3,5; cols 2,5
assert(not sv.contiguous and #sv == 6)
local want = {}
for j, c in ipairs({2, 5}) do for i, r in ipairs({1, 3, 5}) do want[i + 3 * (j - 1)] = 2 * big:get(r, c) + 1.0 end end
check(sv * 2 + 1, "f64", want, "strided input")
local dst = mp.array("f64", 6, 8)
mp.Array.mul(sv, 2, dst:view({2, 4}, {1, 2}))
assert(dst:get(2, 1) == 2 * big:get(1, 2) and dst:get(4, 2) == 2 * big:get(5, 5) and dst:get(1, 1) == 0)
-- overlapping: a shifted view updated from its neighbour reads old values
local line = mp.array("i64", {1, 2, 3, 4, 5, 6})
line:view({2, -1}):add_(line:view({1, -2}))
check(line, "i64", {1, 3, 5, 7, 9, 11}, "overlapping in place")
local rev = mp.array("i32", {1, 2, 3, 4})
rev:add_(rev:view({-1, 1, -1}))
check(rev, "i32", {5, 5, 5, 5}, "reversed view of itself")
local same_view = mp.array("f64", {1, 2})
same_view:mul_(same_view)
check(same_view, "f64", {1.0, 4.0}, "x * x in place")

-- empty arrays
local e = mp.array("f64", 0, 3)
check(e + 1, "f64", {}, "empty + 1")
check(e:sqrt(), "f64", {}, "sqrt empty")
assert(select(2, (e * e):dims()) == 3)

-- an operand of another type with its own metamethod gets its turn, in order
local other = setmetatable({}, {__mul = function(a, b) return {a, b} end,
                                __add = function(a, b) return "add" end})
local arr = mp.array("f64", {1, 2})
local r = arr * other
assert(r[1] == arr and r[2] == other, "the other operand's __mul, operands in order")
assert((other * arr)[1] == other and arr + other == "add")
assert(not pcall(function() return arr * {} end), "a plain table is still an error")

print("array_math ok")
