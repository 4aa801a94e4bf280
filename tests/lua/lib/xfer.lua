-- SPDX-License-Identifier: MIT
-- xfer: the engine of the transport harness (tests/lua/xfer_*.lua). Every
-- value is made from a seed by a deterministic generator, so a receiving
-- rank computes for itself what it should have received and compares, bit
-- for bit: floats by their bytes (NaN payloads, -0.0), integers exactly,
-- strings byte by byte, tables structurally (shared and cyclic references
-- included), functions by calling them, typed arrays element by element.
-- Loaded on every rank with mp.require("xfer") (package.path: tests/lua/lib).
local X = {}

-- ------------------------------------------------------------ randomness
local function sm64(x) -- splitmix64 (Lua integers wrap)
  x = x + 0x9e3779b97f4a7c15
  x = (x ~ (x >> 30)) * 0xbf58476d1ce4e5b9
  x = (x ~ (x >> 27)) * 0x94d049bb133111eb
  return x ~ (x >> 31)
end

-- A seed from any integers (order matters).
function X.seed(...)
  local s = 0x2545F4914F6CDD1D
  for _, v in ipairs({...}) do s = sm64(s ~ v) end
  return s
end

-- r(): a 64-bit integer; r(n): 0..n-1. (sm64 inline: the harness draws
-- millions of elements.)
function X.rng(seed)
  local s = seed
  return function(n)
    local x = s + 0x9e3779b97f4a7c15
    x = (x ~ (x >> 30)) * 0xbf58476d1ce4e5b9
    x = (x ~ (x >> 27)) * 0x94d049bb133111eb
    x = x ~ (x >> 31)
    s = x
    if n then return (x >> 1) % n end
    return x
  end
end

-- ------------------------------------------------------------- the kinds
X.DTYPES = {"f64", "f32", "i64", "i32", "u8", "c64", "c128"}
X.ESIZE = {f64 = 8, f32 = 4, i64 = 8, i32 = 4, u8 = 1, c64 = 8, c128 = 16}
local ESIZE = X.ESIZE

-- Thresholds of the transport, each with its neighbours: inline short
-- strings (31), decoded in place (4096 bytes), arrays in place (4096),
-- strings in place and buffers taken (64 KiB), received at once (4096),
-- a collection before the buffer is chosen (messages of 1 MiB).
X.STR_SIZES = {0, 1, 31, 32, 4071, 4095, 4096, 4097, 65535, 65536, 65537, 300001,
               1048000, 1048600}
X.ARR_BYTES = {0, 8, 4088, 4096, 4104, 65536, 65544, 1048000, 1048576, 2097160}
X.TAB_SIZES = {0, 1, 7, 300, 9000}
X.BIG = (64 << 20) + 8 -- past the 64 MiB in-flight cap

local floats = {0.0, -0.0, 1 / 0, -1 / 0, 0 / 0, 2 ^ -1074, 2 ^ 1023, math.pi, -1.5}

local function rstring(r, n)
  local blk = {}
  for i = 1, 256 do blk[i] = string.char(r(256)) end
  local b = table.concat(blk)
  local s = b:rep(n // 256) .. b:sub(1, n % 256)
  if n >= 8 then s = string.pack("<i8", r()) .. s:sub(9) end
  return s
end

local function rfloat(r)
  if r(3) == 0 then return floats[r(#floats) + 1] end
  return (string.unpack("<d", string.pack("<i8", r()))) -- any bits: NaN payloads too
end

-- A complex value: any bits in both parts (c64: values an f32 holds).
local function rcomplex(r, single)
  if single then return mp.complex((r(1 << 24) - (1 << 23)) / 1024, (r(1 << 24) - (1 << 23)) / 8) end
  return mp.complex(rfloat(r), rfloat(r))
end

local function rint(r)
  local special = {0, -1, 1, 127, 128, math.maxinteger, math.mininteger}
  if r(2) == 0 then return special[r(#special) + 1] end
  return r()
end

local function scalar(r)
  local k = r(5)
  if k == 0 then return rint(r) elseif k == 1 then return rfloat(r)
  elseif k == 2 then return rstring(r, r(40)) elseif k == 3 then return r(2) == 0
  else return rint(r) % 1000 end
end

-- An array of `bytes` bytes of dtype: a fill value and a distinct value
-- every 1021 elements (so a misplaced or missing chunk shows).
function X.array(dtype, bytes, seed)
  local n = bytes // ESIZE[dtype]
  local a = mp.array(dtype, n)
  local r = X.rng(seed)
  local cplx = dtype == "c64" or dtype == "c128"
  local int = dtype ~= "f64" and dtype ~= "f32" and not cplx
  local lim = dtype == "u8" and 256 or dtype == "i32" and 1 << 31 or nil
  local function val()
    if cplx then return rcomplex(r, dtype == "c64") end
    if int then
      local v = r()
      if lim then v = v % lim - (dtype == "i32" and lim // 2 or 0) end
      return v
    end
    if dtype == "f32" then return (r(1 << 24) - (1 << 23)) / 1024 end
    return rfloat(r)
  end
  if n > 0 then a:fill(val()) end
  for i = 1, n, 1021 do a[i] = val() end
  if n > 0 then a[n] = val() end
  return a
end

-- A table of about `size` entries: array part, hash part with keys of
-- every kind, nested tables, a shared reference and a cycle.
function X.table(size, seed)
  local r = X.rng(seed)
  local t, shared = {}, {"shared", r()}
  for i = 1, size do
    local k = r(6)
    if k == 0 then t[#t + 1] = scalar(r)
    elseif k == 1 then t["k" .. i] = scalar(r)
    elseif k == 2 then t[rint(r)] = scalar(r)
    elseif k == 3 then t[i + 0.5] = scalar(r)
    elseif k == 4 then t[#t + 1] = {scalar(r), {scalar(r)}, shared}
    else t[r(2) == 0] = scalar(r) end
  end
  t.self, t.shared = t, shared
  return t
end

local function make_func(seed)
  local up = {seed, "up"}
  local function helper(x) return x * 2 + #up end
  return function(x) return helper(x) + seed % 1000, up[2] end
end

-- The kinds a harness case can carry, each a generator (size, seed).
X.KINDS = {
  ["nil"] = function() return nil end,
  bool = function(_, seed) return X.rng(seed)(2) == 0 end,
  int = function(_, seed) return rint(X.rng(seed)) end,
  float = function(_, seed) return rfloat(X.rng(seed)) end,
  complex = function(_, seed) return rcomplex(X.rng(seed)) end,
  str = function(size, seed) return rstring(X.rng(seed), size) end,
  table = function(size, seed) return X.table(size, seed) end,
  func = function(_, seed) return make_func(seed) end,
  mixed = function(size, seed) -- parts and inline bytes interleaved
    local r = X.rng(seed)
    return {X.table(r(20), seed + 1), rstring(r, size), X.array("f64", size, seed + 2),
            scalar(r), X.array("u8", size // 3, seed + 3), rstring(r, size // 2 + 70000),
            X.array("c128", size // 2, seed + 4), rcomplex(r)}
  end,
}
for _, d in ipairs(X.DTYPES) do
  X.KINDS["array:" .. d] = function(size, seed) return X.array(d, size, seed) end
end

-- The kinds' names, sorted (so every rank plans the same cases).
function X.kind_names()
  local kinds = {}
  for k in pairs(X.KINDS) do kinds[#kinds + 1] = k end
  table.sort(kinds)
  return kinds
end

function X.gen(kind, size, seed) return X.KINDS[kind](size, seed) end

-- Sizes worth trying for a kind (limit: the largest size allowed).
function X.sizes(kind, limit)
  local list = (kind == "str" or kind == "mixed") and X.STR_SIZES or kind:find("^array")
               and X.ARR_BYTES or kind == "table" and X.TAB_SIZES or {0}
  local out = {}
  for _, s in ipairs(list) do if s <= limit then out[#out + 1] = s end end
  return out
end

-- ------------------------------------------------------------ comparing
local function fbits(x) return string.pack("<d", x) end

local function same(a, b, path, seen)
  local ta, tb = type(a), type(b)
  if ta ~= tb then error(path .. ": a " .. tb .. " where a " .. ta .. " was sent", 0) end
  if ta == "number" then
    if math.type(a) ~= math.type(b) then error(path .. ": " .. math.type(b) .. " for " .. math.type(a), 0) end
    if math.type(a) == "float" and fbits(a) ~= fbits(b) or math.type(a) == "integer" and a ~= b then
      error(("%s: %s received, %s sent"):format(path, tostring(b), tostring(a)), 0)
    end
    return
  end
  if ta == "string" then
    if a ~= b then
      local i = 1
      while i <= #a and a:byte(i) == b:byte(i) do i = i + 1 end
      error(("%s: string of %d bytes received for %d, first difference at byte %d"):format(
        path, #b, #a, i), 0)
    end
    return
  end
  if ta == "function" then
    local x1, y1 = a(7)
    local x2, y2 = b(7)
    if x1 ~= x2 or y1 ~= y2 then error(path .. ": the function computes something else", 0) end
    return
  end
  local function cbits(z) return z and fbits(z.re) .. fbits(z.im) end
  if ta == "userdata" and a.dtype == nil then -- an mp.Complex
    if b.dtype ~= nil or cbits(a) ~= cbits(b) then
      error(("%s: %s received, %s sent"):format(path, tostring(b), tostring(a)), 0)
    end
    return
  end
  if ta == "userdata" then
    if a.dtype ~= b.dtype or #a ~= #b then
      error(("%s: %s array of %d received, %s of %d sent"):format(path, tostring(b.dtype), #b,
        tostring(a.dtype), #a), 0)
    end
    local da, db = table.pack(a:dims()), table.pack(b:dims())
    for i = 1, math.max(da.n, db.n) do if da[i] ~= db[i] then error(path .. ": array shape differs", 0) end end
    local float = a.dtype == "f64" or a.dtype == "f32"
    local cplx = a.dtype == "c64" or a.dtype == "c128"
    for i = 1, #a do
      local x, y = a[i], b[i]
      if cplx then x, y = cbits(x), cbits(y) end
      if x ~= y and not (float and x ~= x and y ~= y) or float and x == 0 and fbits(x) ~= fbits(y) then
        error(("%s: element %d is %s, %s was sent"):format(path, i, tostring(y), tostring(x)), 0)
      end
    end
    return
  end
  if ta == "table" then
    if seen[a] then
      if seen[a] ~= b then error(path .. ": a shared or cyclic reference was not kept", 0) end
      return
    end
    seen[a] = b
    local n = 0
    for k, v in pairs(a) do
      n = n + 1
      local kb = k
      if type(k) == "table" then error(path .. ": table keys are not generated", 0) end
      same(v, rawget(b, kb), path .. "[" .. tostring(k) .. "]", seen)
    end
    for _ in pairs(b) do n = n - 1 end
    if n ~= 0 then error(path .. ": the table has " .. (-n) .. " extra entries", 0) end
    return
  end
  if a ~= b then error(path .. ": " .. tostring(b) .. " for " .. tostring(a), 0) end
end

-- Raise (naming what, the path and the difference) unless b is a bit-exact
-- copy of a.
function X.check(a, b, what) same(a, b, what, {}) end

-- Check the n values received (a table packed by table.pack) against the
-- ones sent.
function X.check_all(sent, got, what)
  if got.n ~= sent.n then
    error(("%s: %d values received, %d sent"):format(what, got.n, sent.n), 0)
  end
  for i = 1, sent.n do X.check(sent[i], got[i], what .. " value #" .. i) end
end

-- X.rounds(name, seed0, rounds, plan, run, per): `rounds` rounds (the first
-- with seed0, the next with fresh printed seeds), each the cases of
-- plan(seed) run as tasks of `per` cases, each task returning
-- mp.handin(#batch); a failure names the seed that replays it.
function X.rounds(name, seed0, rounds, plan, run, per)
  local n = mp.size
  for round = 1, rounds do
    local seed = round == 1 and seed0 or X.seed(seed0, round, os.time())
    print(("%s: seed %d, %d ranks"):format(name, seed, n))
    local cases, done = plan(seed), 0
    for i = 1, #cases, per do
      local batch = table.move(cases, i, math.min(i + per - 1, #cases), 1, {})
      local ok, err = pcall(mp.exec, run, batch)
      if not ok then error(("%s: seed %d failed: %s"):format(name, seed, tostring(err)), 0) end
      done = done + err // n
    end
    assert(done == #cases)
    print(("%s ok: %d cases"):format(name, #cases))
  end
end

return X
