-- ranks: 1 2 3 4 8 20  quick: 1 2
-- SPDX-License-Identifier: MIT
-- The transport harness, reductions: reduce (every root), allreduce and
-- scan with every named op and with Lua functions, and handin, on numbers,
-- booleans, complex values, tables with keyed fields and typed arrays of every
-- dtype (complex ones with sum and prod), at
-- sizes on both sides of the fast paths' thresholds (recursive doubling,
-- Rabenseifner from 64 KiB). Values are chosen so that the result is exact
-- in any order; each rank computes the reference from every rank's value
-- (integer dtypes wrap as C does). A non-commutative Lua op checks the
-- documented order: a binomial fold for reduce, left to right for scan.
package.path = "lib/?.lua;" .. package.path
local X = mp.require("xfer")
local seed0 = tonumber(os.getenv("MPLUA_XFER_SEED")) or 20261123
local n = mp.size
local maxbytes = n <= 5 and 262144 or n <= 8 and 65544 or 4104

local function plan(seed)
  local r = X.rng(seed)
  local cases = {}
  local ops = {"sum", "prod", "min", "max", "land", "lor", "band", "bor"}
  local kinds = {"int", "float", "bool", "table", "complex"}
  for _, d in ipairs(X.DTYPES) do kinds[#kinds + 1] = "array:" .. d end
  for _, op in ipairs(ops) do
    for _, kind in ipairs(kinds) do
      local float = kind == "float" or kind == "array:f64" or kind == "array:f32"
      local cplx = kind == "complex" or kind == "array:c64" or kind == "array:c128"
      local ok = not ((op == "band" or op == "bor") and (float or kind == "bool" or kind == "table"))
             and not (kind == "bool" and op ~= "land" and op ~= "lor")
             and not (cplx and op ~= "sum" and op ~= "prod")
      if ok then
        for _, bytes in ipairs(kind:find("^array") and {8, 4096, 4104, 65536, 65544, maxbytes} or {0}) do
          if bytes <= maxbytes then
            cases[#cases + 1] = {fn = ({"reduce", "allreduce", "scan"})[r(3) + 1], op = op,
                                 kind = kind, bytes = bytes, root = r(n), seed = r()}
          end
        end
      end
    end
  end
  for _, fn in ipairs({"reduce", "allreduce", "scan"}) do
    cases[#cases + 1] = {fn = fn, op = "concat", kind = "str", bytes = 0, root = n - 1, seed = r()}
  end
  for _, kind in ipairs(kinds) do
    if kind ~= "bool" then
      cases[#cases + 1] = {fn = "handin", op = "sum", kind = kind, bytes = 4096, root = 0, seed = r()}
    end
  end
  return cases
end

local function run(batch)
  local X = require("xfer")
  local me, n = mp.rank, mp.size
  local WRAP = {u8 = function(v) return v & 0xff end,
                i32 = function(v) v = v & 0xffffffff; return v >= 1 << 31 and v - (1 << 32) or v end}
  local function scalar_op(op, d)
    local w = WRAP[d] or function(v) return v end
    return ({sum = function(a, b) return w(a + b) end, prod = function(a, b) return w(a * b) end,
             min = math.min, max = math.max,
             land = function(a, b) return (a ~= 0 and b ~= 0) and 1 or 0 end,
             lor = function(a, b) return (a ~= 0 or b ~= 0) and 1 or 0 end,
             band = function(a, b) return a & b end, bor = function(a, b) return a | b end})[op]
  end
  -- rank r's value: exact under the op in any order. elem(c, d, g): a function
  -- drawing one number of dtype d (nil: a Lua number) from g.
  local function elem(c, d, g)
    local float = d and d:find("f")
    if c.op == "land" or c.op == "lor" then return function() return g(3) == 0 and 0 or 1 end end
    if c.op == "prod" then
      if float then return function() return 1 + g(2) end end
      if d == "u8" then return function() return g(7) end end
      return function() return g(7) - 3 end
    end
    if c.op == "sum" and (d == nil or float) and c.kind ~= "int" then
      return function() return g(201) - 100 end
    end
    if d == "u8" then return function() return g(256) end end
    if d == "i32" then return function() return g(1 << 32) - (1 << 31) end end
    if float then return function() return (g(2001) - 1000) / 4 end end
    return function() return g() end
  end
  local function value(c, r)
    local g = X.rng(X.seed(c.seed, r))
    if c.kind == "str" then return string.char(65 + r % 26) .. r end
    if c.kind == "bool" then return g(2) == 0 end
    if c.kind == "int" then return elem(c, "i64", g)() end
    if c.kind == "float" then return elem(c, nil, g)() + 0.0 end
    local function cnum() -- exact under sum and prod in any order: small parts, or 1 and 1+i
      if c.op == "prod" then return g(2) == 0 and mp.complex(1, 0) or mp.complex(1, 1) end
      return mp.complex(g(201) - 100, g(201) - 100)
    end
    if c.kind == "complex" then return cnum() end
    if c.kind == "table" then
      local num = elem(c, nil, g)
      return {num(), x = num(), y = {z = num(), [2] = num()}}
    end
    local d = c.kind:sub(7)
    local m = c.bytes // X.ESIZE[d]
    local a = mp.array(d, m)
    local num = not d:find("^c") and elem(c, d, g)
    for i = 1, m do a[i] = num and num() or cnum() end
    return a
  end
  local function combine(c, a, b)
    if c.op == "concat" then return a .. b end
    if c.op == "land" or c.op == "lor" then
      if type(a) == "table" or type(a) == "userdata" then goto structured end
      local function truth(v) if type(v) == "number" then return v ~= 0 end return v end
      if c.op == "land" then return truth(a) and truth(b) else return truth(a) or truth(b) end
    end
    ::structured::
    if type(a) == "table" then
      return {combine(c, a[1], b[1]), x = combine(c, a.x, b.x),
              y = {z = combine(c, a.y.z, b.y.z), [2] = combine(c, a.y[2], b.y[2])}}
    end
    if type(a) == "userdata" and a.dtype then
      local f, o = scalar_op(c.op, a.dtype), a:copy()
      for i = 1, #a do o[i] = f(a[i], b[i]) end
      return o
    end
    return scalar_op(c.op, c.kind == "int" and "i64" or nil)(a, b)
  end
  -- the folds take this rank's value as made for the call (combine makes new values)
  local function fold_binomial(c, k, mine)
    local acc = {}
    for r = 0, k - 1 do acc[r] = r == me and mine or value(c, r) end
    local mask = 1
    while mask < k do
      for r = 0, k - 1, 2 * mask do
        if r + mask < k then acc[r] = combine(c, acc[r], acc[r + mask]) end
      end
      mask = mask * 2
    end
    return acc[0]
  end
  local function fold_left(c, upto, mine)
    local acc = me == 0 and mine or value(c, 0)
    for r = 1, upto do acc = combine(c, acc, r == me and mine or value(c, r)) end
    return acc
  end
  -- complex results: +0 for -0 (the sign of a zero part depends on the order of the products)
  local function zeros(v)
    local function z(x) return mp.complex(x.re + 0.0, x.im + 0.0) end
    if type(v) ~= "userdata" then return v end
    if v.dtype == nil then return z(v) end
    if not v.dtype:find("^c") then return v end
    local o = v:copy()
    for i = 1, #o do o[i] = z(o[i]) end
    return o
  end
  local check = X.check
  X = setmetatable({check = function(a, b, what) check(zeros(a), zeros(b), what) end}, {__index = X})
  for _, c in ipairs(batch) do
    local what = ("%s '%s' of %s, %d bytes, root %d, case seed %d"):format(c.fn, c.op, c.kind,
                                                                           c.bytes, c.root, c.seed)
    local mine = value(c, me)
    local op = c.op == "concat" and function(a, b) return a .. b end or c.op
    if c.kind == "bool" then -- land/lor of booleans give booleans
      op = c.op
    end
    if c.fn == "reduce" then
      local got = mp.reduce(mine, op, c.root)
      if me == c.root then X.check(fold_binomial(c, n, mine), got, what)
      else assert(got == nil, what .. ": a result off the root") end
    elseif c.fn == "allreduce" then
      X.check(fold_binomial(c, n, mine), mp.allreduce(mine, op), what)
    elseif c.fn == "scan" then
      X.check(fold_left(c, me, mine), mp.scan(mine, op), what)
    else -- handin: the sum at rank 0
      local got = mp.handin(mine)
      if me == 0 then X.check(fold_left(c, n - 1, mine), got, what) end
    end
  end
  return mp.handin(#batch)
end

X.rounds("xfer_reduce", seed0, 1, plan, run, 10)
