-- SPDX-License-Identifier: MIT
-- msggen: random Lua values of every kind a message can carry, made from a
-- seed, and a bit-exact comparison (tests/lua/msg_gen.lua). A receiver makes
-- for itself, from the same seed, what it should have received, and compares:
-- floats by their bytes (NaN payloads, -0.0), integer vs float subtype,
-- strings byte by byte, tables structurally with identity (a table shared in
-- the sent value is shared in the received one, no two distinct tables merge,
-- cycles and metatables kept), keys of every kind (float keys that are
-- integers, tables, functions, arrays and booleans as keys), Lua functions
-- by calling them (upvalues, shared upvalues, recursion, _ENV as the
-- receiver's globals), C functions by identity, typed arrays and complex
-- values by their bits. Loaded on every rank with mp.require("msggen").
local G = {}

-- ------------------------------------------------------------ randomness
local function sm64(x) -- splitmix64 (integers wrap)
  x = x + 0x9e3779b97f4a7c15
  x = (x ~ (x >> 30)) * 0xbf58476d1ce4e5b9
  x = (x ~ (x >> 27)) * 0x94d049bb133111eb
  return x ~ (x >> 31)
end

function G.seed(...)
  local s = 0x2545F4914F6CDD1D
  for _, v in ipairs({...}) do s = sm64(s ~ v) end
  return s
end

-- r(): a 64-bit integer; r(n): 0..n-1
function G.rng(seed)
  local s = seed
  return function(n)
    s = s + 0x9e3779b97f4a7c15
    local x = s
    x = (x ~ (x >> 30)) * 0xbf58476d1ce4e5b9
    x = (x ~ (x >> 27)) * 0x94d049bb133111eb
    x = x ~ (x >> 31)
    if n then return math.ult(x, 0) and 0 or (x >> 1) % n end
    return x
  end
end

local function pick(r, list) return list[r(#list) + 1] end
local function bitsf(b) return (string.unpack("<d", string.pack("<i8", b))) end

-- ------------------------------------------------------------ thresholds
-- Sizes on both sides of every threshold of the codec and the transport:
-- short strings (31, wire), the small-message pool (240-byte blocks less the
-- 24-byte user header: chan/msg.c), a small message decoded from the rank's
-- buffer (4096, chan/codec.c) and received in the probing call (4096,
-- chan/arrive.c), arrays sent in place (4096 bytes, wire.h), a send straight
-- from the encoding buffer (8192, chan/send.c), strings sent in place and
-- messages that travel framed (64 KiB: wire.h, send.c), the collector step
-- before large receives (1 MiB, arrive.c).
G.STR_SIZES = {0, 1, 2, 7, 8, 30, 31, 32, 33, 127, 128, 200, 215, 216, 217, 239, 240, 241,
               1000, 4071, 4072, 4073, 4095, 4096, 4097, 8167, 8168, 8169, 8191, 8192,
               8193, 16384, 65535, 65536, 65537, 131072, (1 << 20) - 1, 1 << 20,
               (1 << 20) + 1}
-- array byte sizes (divided by the element size)
G.ARR_BYTES = {0, 8, 16, 64, 200, 216, 4080, 4088, 4096, 4104, 8168, 8192, 8200, 65528,
               65536, 65544, 1 << 20, (1 << 20) + 16}
G.DTYPES = {"f64", "f32", "i64", "i32", "u8", "c64", "c128"}
G.ESIZE = {f64 = 8, f32 = 4, i64 = 8, i32 = 4, u8 = 1, c64 = 8, c128 = 16}

-- integers: around every varint length of the zigzag encoding and the
-- one-byte range 0..127
local INTS = {0, 1, -1, 2, 63, 64, -64, -65, 126, 127, 128, 129, 255, 256, 8191, 8192,
              -8192, -8193, (1 << 20), -(1 << 20), (1 << 31) - 1, -(1 << 31), 1 << 32,
              (1 << 53) + 1, math.maxinteger, math.mininteger, math.maxinteger - 1,
              math.mininteger + 1}
-- floats: zeros, integral floats, infinities, NaNs with payloads and signs,
-- subnormals, the extremes
local FLOATS = {0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 1e308, -1e308, math.huge, -math.huge,
                bitsf(0x7ff8000000000000), bitsf(0x7ff8000000000001),
                bitsf(0xfff8000000000000), bitsf(0x7ff0000000000001),  -- signalling
                bitsf(0xfff4000000000abc), bitsf(0x7fffffffffffffff),
                bitsf(1), bitsf(0x000fffffffffffff), bitsf(0x8000000000000001),
                bitsf(0x0010000000000000), 1.7976931348623157e308, 2^53, 2^63, -2^63,
                127.0, 128.0, 3.141592653589793}

function G.rint(r)
  if r(3) == 0 then return r() end
  return pick(r, INTS)
end

function G.rfloat(r)
  local k = r(3)
  if k == 0 then return bitsf(r()) end         -- any bits (NaNs with random payloads)
  if k == 1 then return (r() >> 11) * 2.0^-53 * 10.0^(r(40) - 20) end
  return pick(r, FLOATS)
end

function G.rstring(r, n)
  if n <= 64 then
    local t = {}
    for i = 1, n do t[i] = r(256) end
    return string.char(table.unpack(t))
  end
  -- long: a random block of 64 bytes repeated, with the seed's bytes at both ends
  local head = G.rstring(r, 64)
  local s = string.rep(head, n // 64) .. head:sub(1, n % 64)
  return "\0" .. s:sub(2, -2) .. (n > 1 and "\255" or "")
end

-- ------------------------------------------------------------ arrays
-- Element i's value, from the seed: any bits for floats (NaN payloads),
-- the whole range for integers.
local function element(r, dtype)
  if dtype == "f64" or dtype == "c128" then return G.rfloat(r) end
  if dtype == "f32" or dtype == "c64" then
    local x = G.rfloat(r)
    if x ~= x or x == math.huge or x == -math.huge then return x end
    x = string.unpack("<f", string.pack("<f", (x > 3e38 or x < -3e38) and 1.5 or x))
    return x
  end
  if dtype == "i64" then return G.rint(r) end
  if dtype == "i32" then return r(1 << 32) - (1 << 31) end
  return r(256)
end

function G.array(r, dtype, n, shape)
  local a
  if shape == 2 and n % 2 == 0 and n > 0 then a = mp.array(dtype, 2, n // 2)
  elseif shape == 3 and n % 4 == 0 and n > 0 then a = mp.array(dtype, 2, 2, n // 4)
  else a = mp.array(dtype, n) end
  local cplx = dtype == "c64" or dtype == "c128"
  local re, im = a, nil
  if cplx then re, im = a:real(), a:imag() end
  local function set(i)
    re[i] = element(r, dtype)
    if cplx then im[i] = element(r, dtype) end
  end
  if n <= 4096 then
    for i = 1, n do set(i) end
  else -- large: a few random elements at both ends and in the middle
    for _, i in ipairs({1, 2, n // 2, n - 1, n}) do set(i) end
  end
  return a
end

-- ------------------------------------------------------------ functions
-- Every generated function answers f("probe") with a value made of its
-- upvalues, so the comparison calls both and compares the answers.
local MAKERS = {
  function(r, sub) local k = G.rint(r) return function(x) if x == "probe" then return k end return k end end,
  function(r, sub) local t = sub() return function(x) return t end end,
  function(r, sub) -- recursive: its own upvalue
    local n = 3 + r(5)
    local function fact(m) if m == "probe" then return fact(n) end if m <= 1 then return 1 end return m * fact(m - 1) end
    return fact
  end,
  function(r) -- _ENV: the receiver's globals
    return function(x) return MSGGEN_MARK, type(print), math.type(1) end
  end,
  function(r, sub) -- a function as an upvalue, and a C function
    local inner = G.func(r, sub)
    local s = pick(r, {math.sin, string.format, print, table.concat, mp.send, mp.array})
    return function(x) if x == "probe" then return inner("probe"), s end end
  end,
  function(r) -- two closures sharing one upvalue: it stays shared
    local n = r(100)
    local function inc() n = n + 1 return n end
    local function get(x) if x == "probe" then return "shared" end return n end
    return {_pair = true, inc = inc, get = get}
  end,
  function(r) return pick(r, {math.sin, print, string.rep, mp.recv, mp.bcast, table.unpack}) end,
}

function G.func(r, sub)
  local f = MAKERS[r(#MAKERS - 2) + 1](r, sub)
  return f
end

-- ------------------------------------------------------------ values
local SCALAR_KINDS = {"nil", "bool", "int", "float", "str", "smallstr"}

-- A value of at most about `budget` bytes of payload, nesting at most `depth`.
-- ctx.objs: the tables made so far (for shared references and cycles)
local function value(r, ctx, depth, budget)
  local k = r(16)
  if depth <= 0 or budget < 16 then k = r(6) end
  if k == 0 then return nil
  elseif k == 1 then return r(2) == 0
  elseif k == 2 then return G.rint(r)
  elseif k == 3 then return G.rfloat(r)
  elseif k == 4 then return G.rstring(r, r(40))
  elseif k == 5 then return G.rstring(r, pick(r, G.STR_SIZES) % (budget + 1))
  elseif k == 6 or k == 7 or k == 8 then -- a table
    if #ctx.objs > 0 and r(4) == 0 then return pick(r, ctx.objs) end -- shared, or a cycle
    local t = {}
    ctx.nid = ctx.nid + 1
    local id = ctx.nid
    ctx.objs[#ctx.objs + 1] = t
    local narr, nhash = r(6), r(6)
    local share = budget // (narr + nhash + 1)
    for i = 1, narr do t[i] = value(r, ctx, depth - 1, share) end
    if r(5) == 0 then t[narr + 2] = value(r, ctx, depth - 1, share) end -- a hole
    for _ = 1, nhash do
      local kk = r(9)
      local key
      if kk == 0 then key = G.rint(r)
      elseif kk == 1 then key = G.rfloat(r); if key ~= key then key = 0.25 end
      elseif kk == 2 then key = (r(10) + 1) * 1.0 -- 2.0: an integer key
      elseif kk == 3 then key = r(2) == 0
      elseif kk == 4 and #ctx.objs > 0 then key = pick(r, ctx.objs)
      elseif kk == 5 then key = G.rstring(r, r(40))
      else key = "k" .. r(1000) end
      if key ~= nil then t[key] = value(r, ctx, depth - 1, share) end
    end
    if r(6) == 0 then -- a metatable: one shared class, or its own
      if not ctx.class or r(2) == 0 then
        ctx.class = {__index = {kind = "class" .. r(10)}, name = "C" .. r(10)}
        if r(2) == 0 then -- finalizers and closers travel, and run where the table dies
          ctx.class.__gc = function(o) MSGGEN_GC = (MSGGEN_GC or 0) + 1 end
          ctx.class.__close = function(o) MSGGEN_CLOSED = (MSGGEN_CLOSED or 0) + 1 end
        end
      end
      setmetatable(t, ctx.class)
    end
    t._id = id
    return t
  elseif k == 9 then return G.func(r, function() return value(r, ctx, depth - 1, budget // 2) end)
  elseif k == 10 or k == 11 then
    local dtype = pick(r, G.DTYPES)
    local bytes = math.min(pick(r, G.ARR_BYTES), budget)
    local a = G.array(r, dtype, bytes // G.ESIZE[dtype], r(3) + 1)
    if ctx.arrays and r(3) == 0 and #ctx.arrays > 0 then return pick(r, ctx.arrays) end
    ctx.arrays = ctx.arrays or {}
    ctx.arrays[#ctx.arrays + 1] = a
    return a
  elseif k == 12 then return mp.complex(G.rfloat(r), G.rfloat(r))
  elseif k == 13 then return pick(r, {math, string, _G, mp})
  else return pick(r, {math.maxinteger, math.mininteger, -0.0, 0.0, 1, 1.0, 0 / 0, -(0 / 0)})
  end
end

-- The values of one message: a list {n = count, ...} (trailing nils kept).
function G.values(seed, budget, depth)
  local r = G.rng(seed)
  local ctx = {objs = {}, nid = 0}
  local n = r(5)
  local t = {n = n}
  for i = 1, n do t[i] = value(r, ctx, depth or 4, budget or 4096) end
  return t
end

-- ------------------------------------------------------------ comparison
local function fbits(x) return string.pack("<d", x) end

local function fail(path, fmt, ...)
  error(("msggen: %s: " .. fmt):format(path, ...), 0)
end

local same

local function keysig(k, map)
  local tk = type(k)
  if tk == "table" then
    if rawget(k, "_id") then return "t" .. rawget(k, "_id") end
    return nil
  end
  if tk == "number" then return math.type(k) == "integer" and "i" .. k or "f" .. fbits(k) end
  if tk == "string" or tk == "boolean" then return tk .. tostring(k) end
  return nil
end

local function same_table(a, b, path, m)
  if getmetatable(a) ~= nil or getmetatable(b) ~= nil then
    if type(getmetatable(b)) ~= "table" then fail(path, "metatable lost") end
    same(getmetatable(a), getmetatable(b), path .. "<metatable>", m)
  end
  local bykey = {}
  for k in next, b do
    local s = keysig(k)
    if not s then fail(path, "unexpected key of type %s", type(k)) end
    if bykey[s] ~= nil then fail(path, "two keys with one signature %q", s) end
    bykey[s] = k
  end
  local na = 0
  for k, v in next, a do
    na = na + 1
    local s = keysig(k)
    local kb = bykey[s]
    if kb == nil then fail(path, "key %s missing", tostring(k)) end
    if type(k) == "table" then same(k, kb, path .. "<key>", m) end
    if type(k) == "number" and math.type(k) ~= math.type(kb) then
      fail(path, "key %s has subtype %s", tostring(k), math.type(kb))
    end
    same(v, rawget(b, kb), path .. "[" .. tostring(k) .. "]", m)
  end
  local nb = 0
  for _ in next, b do nb = nb + 1 end
  if na ~= nb then fail(path, "%d keys, expected %d", nb, na) end
end

local function same_array(a, b, path)
  if getmetatable(b) ~= getmetatable(a) then fail(path, "not an mp.Array: %s", type(b)) end
  if a.dtype ~= b.dtype then fail(path, "dtype %s, expected %s", b.dtype, a.dtype) end
  local da, db = table.pack(a:dims()), table.pack(b:dims())
  if da.n ~= db.n then fail(path, "ndim %d, expected %d", db.n, da.n) end
  for i = 1, da.n do if da[i] ~= db[i] then fail(path, "shape differs at dim %d", i) end end
  local n = #a
  local cplx = a.dtype == "c64" or a.dtype == "c128"
  local ra, rb = a, b
  if cplx then ra, rb = a:real(), b:real() end
  local function cmp(x, y, i, part)
    if math.type(x) ~= math.type(y) or (math.type(x) == "float" and fbits(x) ~= fbits(y))
       or (math.type(x) == "integer" and x ~= y) then
      fail(path, "element %d%s: %s, expected %s", i, part, tostring(y), tostring(x))
    end
  end
  -- every element of arrays up to 64 Ki elements; past that, every 61st and
  -- the ends (a block out of place is longer than that)
  local step = n > 65536 and 61 or 1
  local function walk(x, y, part)
    for i = 1, n, step do cmp(x[i], y[i], i, part) end
    for i = math.max(1, n - 8), n do cmp(x[i], y[i], i, part) end
    if n > 4 then cmp(x[n // 2], y[n // 2], n // 2, part) end
  end
  walk(ra, rb, "")
  if cplx then walk(a:imag(), b:imag(), " (imaginary)") end
end

-- m: identity maps both ways (exp -> got, got -> exp)
same = function(a, b, path, m)
  local ta, tb = type(a), type(b)
  if ta ~= tb then fail(path, "%s, expected %s", tb, ta) end
  if ta == "number" then
    if math.type(a) ~= math.type(b) then fail(path, "%s %s, expected %s %s", math.type(b), tostring(b), math.type(a), tostring(a)) end
    if math.type(a) == "float" then
      if fbits(a) ~= fbits(b) then
        fail(path, "float bits %s, expected %s", ("%q"):format(fbits(b)), ("%q"):format(fbits(a)))
      end
    elseif a ~= b then fail(path, "%d, expected %d", b, a) end
    return
  end
  if ta == "string" then
    if a ~= b then
      local i = 1
      while a:byte(i) == b:byte(i) do i = i + 1 end
      fail(path, "string of %d bytes, expected %d (first difference at byte %d)", #b, #a, i)
    end
    return
  end
  if ta == "nil" or ta == "boolean" then
    if a ~= b then fail(path, "%s, expected %s", tostring(b), tostring(a)) end
    return
  end
  -- objects: a global or a module is itself
  if a == _G or a == math or a == string or a == mp or (ta == "function" and debug.getinfo(a, "S").what == "C") then
    if a ~= b then fail(path, "%s, expected the receiver's own %s", tostring(b), tostring(a)) end
    return
  end
  if m.ab[a] ~= nil or m.ba[b] ~= nil then
    if m.ab[a] ~= b or m.ba[b] ~= a then fail(path, "sharing differs (a shared object split, or two merged)") end
    return
  end
  m.ab[a], m.ba[b] = b, a
  if ta == "table" then
    if rawget(a, "_pair") then -- shared upvalue between two closures
      local before = b.get()
      a.inc()
      b.inc()
      if b.get() ~= before + 1 then fail(path, "an upvalue shared by two closures is no longer shared") end
    end
    return same_table(a, b, path, m)
  end
  if ta == "function" then
    local ra, rb = table.pack(pcall(a, "probe")), table.pack(pcall(b, "probe"))
    if ra.n ~= rb.n then fail(path, "function returns %d values, expected %d", rb.n, ra.n) end
    for i = 1, ra.n do same(ra[i], rb[i], path .. "()#" .. i, m) end
    return
  end
  if ta == "userdata" then
    if getmetatable(a) == getmetatable(mp.complex(0, 0)) then
      if getmetatable(b) ~= getmetatable(a) then fail(path, "not a complex value") end
      if fbits(a.re) ~= fbits(b.re) or fbits(a.im) ~= fbits(b.im) then
        fail(path, "complex %s, expected %s", tostring(b), tostring(a))
      end
      m.ab[a], m.ba[b] = nil, nil -- complex values are values, not references
      return
    end
    return same_array(a, b, path)
  end
  fail(path, "unexpected %s", ta)
end

-- Compare an expected list {n=..} with a received one.
function G.check(exp, got, what)
  if got.n ~= exp.n then fail(what, "%d values, expected %d", got.n, exp.n) end
  local m = {ab = {}, ba = {}}
  for i = 1, exp.n do same(exp[i], got[i], what .. " value #" .. i, m) end
end

-- One value.
function G.check1(exp, got, what) same(exp, got, what, {ab = {}, ba = {}}) end

return G
