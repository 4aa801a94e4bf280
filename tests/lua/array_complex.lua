-- ranks: nompi 1
-- SPDX-License-Identifier: MIT
-- Complex numbers: mp.Complex values (arithmetic, methods, printing), c64 and c128
-- arrays (creation, access as a value or a pair, storing rules, views of the parts,
-- conversions), array math in C against the same loop over mp.Complex values in Lua
-- (bit for bit), type promotion, reductions, linear combinations, and the errors.

local function fails(pattern, f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(msg):find(pattern, 1, true), "wrong message: " .. tostring(msg))
end
local C = mp.complex
local function bits(x) return string.pack("<d", x) end
local function same(z, w, what)
  assert(getmetatable(z) == getmetatable(w), what .. ": not both complex")
  assert(bits(z.re) == bits(w.re) and bits(z.im) == bits(w.im),
         ("%s: %s ~= %s"):format(what, tostring(z), tostring(w)))
end
local function f32(x) return string.unpack("<f", string.pack("<f", x)) end

-- ------------------------------------------------------------ values
local z, w = C(1, 2), C(3, -1)
same(z + w, C(4, 1), "add")
same(z - w, C(-2, 3), "sub")
same(z * w, C(1 * 3 - 2 * -1, 1 * -1 + 2 * 3), "mul")
do -- Smith's method
  local rat = -1 / 3
  local scl = 1 / (3 + -1 * rat)
  same(z / w, C((1 + 2 * rat) * scl, (2 - 1 * rat) * scl), "div")
end
same(z + 1, C(2, 2), "number + complex")
same(2 * z, C(2, 4), "complex * number")
same(-z, C(-1, -2), "unm")
same(z ^ 2, z * z, "integer power is repeated products")
same(z ^ -1, C(1, 0) / z, "negative integer power")
same(z:conj(), C(1, -2), "conj")
assert(C(3, 4):abs() == 5 and C(0, 1):arg() == math.pi / 2)
assert(z.re == 1.0 and z.im == 2.0 and math.type(z.re) == "float")
local re, im = z:parts()
assert(re == 1 and im == 2)
assert(z == C(1, 2) and z ~= C(1, 3) and z ~= 1)
assert(C(2) == C(2, 0) and C({5, 6}) == C(5, 6) and C(z) == z)
assert(tostring(C(1.5, -2)) == "1.5-2i" and tostring(C(0, 1)) == "0+1i")
same(C(0, math.pi):exp(), mp.Complex.exp(C(0, math.pi)), "exp as method and function")
assert(math.abs(C(-1, 0):sqrt().im - 1) < 1e-15 and mp.Complex.log(C(1, 0)) == C(0, 0))
fails("cannot be changed", function() z.re = 3 end)
fails("attempt to", function() return z + "x" end)
fails("arithmetic on a boolean", function() return z + true end)
fails("number or mp.Complex expected", mp.Complex.abs, "x")

-- ------------------------------------------------------------ arrays
for _, dt in ipairs({"c128", "c64"}) do
  local a = mp.array(dt, 2, 3)
  assert(a.dtype == dt and #a == 6 and a[1] == C(0, 0))
  a[1] = C(1, 2)          -- a value
  a[2] = {3, -4}          -- a pair
  a[3] = 5                -- a number: imaginary part 0
  a:set(1, 3, C(0.5, 0.25))
  assert(a:get(1, 1) == C(1, 2) and a[2] == C(3, -4) and a[3] == C(5, 0))
  assert(a:get(1, 3) == C(0.5, 0.25))
  local t = a:totable()
  assert(t[1][1] == C(1, 2) and t[2][1] == C(3, -4))
  -- the parts as views
  local r, i = a:real(), a:imag()
  assert(r.dtype == (dt == "c64" and "f32" or "f64") and not r.contiguous)
  assert(r[1] == 1 and i[1] == 2 and r[2] == 3 and i[2] == -4 and r:get(1, 3) == 0.5)
  i:fill(9)
  assert(a[1] == C(1, 9) and a[6] == C(0, 9))
  r:view(1, ":"):fill(-1)
  assert(a:get(1, 2) == C(-1, 9) and a:get(2, 2) == C(0, 9))
  -- views of complex arrays
  local v = a:view({2, 2}, {1, 3, 2})
  assert(#v == 2 and v[1] == a:get(2, 1) and v[2] == a:get(2, 3))
  v:fill({7, 8})
  assert(a:get(2, 3) == C(7, 8) and a:get(2, 2) == C(0, 9))
  assert(mp.Array.copy(v)[2] == C(7, 8))
  -- nested tables make real-valued complex arrays (leaves are numbers or values)
  local n = mp.array(dt, {{1, 2}, {C(3, 1), 4}})
  assert(n:get(1, 2) == C(2, 0) and n:get(2, 1) == C(3, 1))
  -- storing rules
  fails("number, mp.Complex or {re, im} expected, got string", function() a[1] = "1" end)
  fails("number, mp.Complex or {re, im} expected, got table", function() a[1] = {1} end)
  if dt == "c64" then
    fails("beyond the f32 range", function() a[1] = C(1e300, 0) end)
    fails("beyond the f32 range", function() a[1] = {0, -1e39} end)
    a[1] = C(1 / 0, 0 / 0)
    assert(a[1].re == 1 / 0 and a[1].im ~= a[1].im)
  end
end
fails("a complex value", function() local f = mp.array("f64", 1); f[1] = C(1, 0) end)
fails("a complex value", function() mp.array("i32", 1):fill(C(1, 1)) end)
fails("number expected, got table", function() mp.array("f64", 1)[1] = {1, 2} end)

-- conversions: real to complex, c128 to c64 checked; complex to real refused
local c = mp.array("c128", mp.array("i32", {1, -2, 3}))
assert(c[2] == C(-2, 0))
local c64 = mp.array("c64", mp.array("c128", {C(1 / 3, -2 / 3)}))
assert(c64[1] == C(f32(1 / 3), f32(-2 / 3)))
fails("element 1: cannot store 1+1e+300i in a c64 array (beyond the f32 range)",
      mp.array, "c64", mp.array("c128", {C(1, 1e300)}))
fails("element 1: cannot store 0+0i in an f64 array (a complex value", mp.array, "f64", mp.array("c64", {0, C(0, 1)}))
fails("element 1: cannot store", function() mp.array("f64", 1):copy_from(mp.array("c128", {C(1, 1)})) end)
mp.array("c128", 2):copy_from(mp.array("f32", {1.5, 2})) -- real into complex: fine

-- ------------------------------------------------------------ array math against Lua
local function sample(dt, n, seed)
  local a = mp.array(dt, n)
  local s = seed
  for i = 1, n do
    s = (s * 1103515245 + 12345) % 2147483648
    local x = (s % 2001 - 1000) / 250
    s = (s * 1103515245 + 12345) % 2147483648
    a[i] = C(x, (s % 2001 - 1000) / 125)
  end
  return a
end
local N = 37
for _, dt in ipairs({"c128", "c64"}) do
  local x, y = sample(dt, N, 1), sample(dt, N, 2)
  local function store(v) local t = mp.array(dt, 1); t[1] = v; return t[1] end
  for _, op in ipairs({"add", "sub", "mul", "div", "pow"}) do
    local f = ({add = function(p, q) return p + q end, sub = function(p, q) return p - q end,
               mul = function(p, q) return p * q end, div = function(p, q) return p / q end,
               pow = function(p, q) return p ^ q end})[op]
    local ya = op == "pow" and mp.array(dt, N):fill(3) or y
    local r = mp.Array[op](x, ya)
    assert(r.dtype == dt)
    for i = 1, N do same(r[i], store(f(x[i], ya[i])), dt .. " " .. op .. " element " .. i) end
    local s = mp.Array[op](x, C(0.5, -2))
    for i = 1, N do same(s[i], store(f(x[i], C(0.5, -2))), dt .. " " .. op .. " with a value") end
  end
  for _, fn in ipairs({"neg", "conj", "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin",
                       "acos", "atan", "sinh", "cosh", "tanh"}) do
    local r = mp.Array[fn](x)
    for i = 1, N do
      local want = fn == "neg" and -x[i] or mp.Complex[fn](x[i])
      same(r[i], store(want), dt .. " " .. fn .. " element " .. i)
    end
  end
  local ab, ar = x:abs(), x:arg()
  assert(ab.dtype == (dt == "c64" and "f32" or "f64") and ar.dtype == ab.dtype)
  for i = 1, N do
    local pd = mp.array(ab.dtype, 2)
    pd[1], pd[2] = x[i]:abs(), x[i]:arg()
    assert(ab[i] == pd[1] and ar[i] == pd[2])
  end
  -- in place and out
  local o = x:copy()
  o:mul_(y)
  for i = 1, N do same(o[i], store(x[i] * y[i]), "mul_") end
  local out = mp.array(dt == "c64" and "c128" or "c64", N)
  mp.Array.add(x, y, out) -- another complex dtype: computed, then converted
  fails("the result is " .. (dt == "c64" and "f32" or "f64") .. ", the array is " .. dt,
        function() x:copy():abs_() end)
  fails("not defined on complex", function() return x % y end)
  fails("not defined on complex", mp.Array.minimum, x, y)
  fails("not defined on complex arrays", mp.Array.floor, x)
  fails("integer array expected", function() return ~x end)
  -- reductions
  local s, p = C(0, 0), C(1, 0)
  for i = 1, N do s = s + x[i]; p = p * x[i] end
  assert((x:sum() - s):abs() < 1e-12 * s:abs() + 1e-5 * (dt == "c64" and 1 or 0))
  assert((x:prod() - p):abs() <= 1e-10 * p:abs())
  assert((x:mean() - s / N):abs() < 1e-12 * s:abs() + 1e-5)
  local sq, m = 0, 0
  for i = 1, N do sq = sq + x[i]:abs() ^ 2; m = math.max(m, x[i]:abs()) end
  assert(math.abs(x:norm() - math.sqrt(sq)) < 1e-12 * math.sqrt(sq))
  assert(x:norm(math.huge) == m)
  local d = C(0, 0)
  for i = 1, N do d = d + x[i] * y[i] end
  assert((mp.Array.dot(x, y) - d):abs() < 1e-12 * d:abs() + 1e-4)
  fails("not defined on complex arrays (no order)", x.max, x)
  fails("not defined on complex arrays (no order)", x.min, x, 1)
  local byrow = x:reshape(N, 1):sum(2)
  assert(byrow.dtype == dt and byrow[3] == x[3])
  -- linear combinations with real and complex coefficients
  local l = mp.array(dt, N):lincomb(2, x, C(0, 1), y)
  for i = 1, N do same(l[i], store(2 * x[i] + C(0, 1) * y[i]), "lincomb element " .. i) end
  fails("number expected", function() mp.array("f64", 2):lincomb(C(1, 1), mp.array("f64", 2)) end)
end

-- promotion: NumPy's
local function dt_of(a, b) return (a + b).dtype end
local A = function(dt) return mp.array(dt, 2) end
assert(dt_of(A("c64"), A("f32")) == "c64" and dt_of(A("c64"), A("u8")) == "c64")
assert(dt_of(A("c64"), A("f64")) == "c128" and dt_of(A("c64"), A("i32")) == "c128")
assert(dt_of(A("c128"), A("f32")) == "c128" and dt_of(A("c64"), A("c128")) == "c128")
assert(dt_of(A("f32"), C(1, 1)) == "c64" and dt_of(A("i32"), C(1, 1)) == "c128")
assert(dt_of(A("c64"), 2.5) == "c64" and dt_of(C(0, 1), A("f64")) == "c128")
assert(mp.array("f64", {-4}):sqrt()[1] ~= mp.array("f64", {-4}):sqrt()[1]) -- NaN, no promotion
assert(mp.array("c128", {-4}):sqrt()[1] == C(0, 2))
-- what takes real numbers says so of a complex array
fails("real numbers expected, got a c128 array", ad.vars, mp.array("c128", 2))
print("array_complex ok")
