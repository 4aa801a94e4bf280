-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- One-to-one exchange of every kind of value, in both directions, between
-- rank 0 and every other rank (and to self at one rank).
local function deep_eq(a, b, seen)
  seen = seen or {}
  if type(a) ~= type(b) then return false end
  if type(a) == "number" then
    if a ~= a then return b ~= b end
    return math.type(a) == math.type(b) and a == b and (a ~= 0 or 1/a == 1/b)
  end
  if type(a) ~= "table" then return a == b end
  if seen[a] then return seen[a] == b end
  seen[a] = b
  for k, v in pairs(a) do if not deep_eq(v, b[k], seen) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local function samples()
  local shared = {1, 2, 3}
  local cyc = {name = "cycle"}
  cyc.self = cyc
  local function fact(n) if n <= 1 then return 1 end return n * fact(n - 1) end
  local k = 10
  return {
    nil_value = nil, t = true, f = false,
    ints = {0, 1, -1, math.maxinteger, math.mininteger, 2^53 // 1},
    floats = {0.5, -0.0, 1e308, 5e-324, math.huge, -math.huge, 0/0},
    str = "binary\0string\255\1",
    long = string.rep("x", 100000),
    nested = {a = {b = {c = {d = "deep"}}}, [1] = "one", [2.5] = "float key", [true] = "bool key"},
    shared = {shared, shared},
    cyc = cyc,
    fact = fact,
    closure = function(x) return x + k end,
    cfun = math.sin,
  }
end
rawset(_G, "samples", samples)
rawset(_G, "deep_eq", deep_eq)

mp.exec(function()
  local s = samples()
  local function check(got)
    assert(deep_eq(got.ints, s.ints), "ints")
    assert(deep_eq(got.floats, s.floats), "floats")
    assert(got.str == s.str and got.long == s.long, "strings")
    assert(deep_eq(got.nested, s.nested), "nested")
    assert(got.shared[1] == got.shared[2], "shared reference lost")
    assert(got.cyc.self == got.cyc, "cycle lost")
    assert(got.fact(10) == 3628800, "recursive function")
    assert(got.closure(5) == 15, "closure upvalue")
    assert(got.cfun == math.sin, "C function by name")
    assert(got.t == true and got.f == false and got.nil_value == nil)
  end
  if mp.rank == 0 then
    for r = 1, mp.size - 1 do
      mp.send(r, s, nil, 42, "tail")
      local back, n1, n2, tail = mp.recv(r)
      check(back)
      assert(n1 == nil and n2 == 42 and tail == "tail", "several values with a nil")
    end
    mp.send(0, s)           -- to self: queued, no deadlock
    check(mp.recv(0))
  else
    local got, a, b, c = mp.recv(0)
    check(got)
    mp.send(0, got, a, b, c) -- echo what we received
  end
end)

-- zero values, and a message that is only nil
mp.exec(function()
  if mp.size < 2 then return end
  if mp.rank == 0 then
    mp.send(1)
    mp.send(1, nil)
  elseif mp.rank == 1 then
    assert(select("#", mp.recv(0)) == 0, "empty message")
    local n = select("#", mp.recv(0))
    assert(n == 1, "nil message has one value, got " .. n)
  end
end)
print("p2p_values ok")

-- large values travel in parts (in place, no copy): several segments in one
-- message, arrays of every dtype, and an array modified right after sending
mp.exec(function()
  if mp.size < 2 then return end
  local function big_array(dt, n, k)
    local a = mp.array(dt, n)
    for i = 1, n, 97 do a[i] = (i + k) % 100 end
    return a
  end
  local dts = {"f64", "f32", "i64", "i32", "u8"}
  if mp.rank == 0 then
    for _, dt in ipairs(dts) do
      local a = big_array(dt, 50000, 1)
      mp.send(1, {a = a, s = string.rep("x", 70000), t = {string.rep("y", 100000), a}}, a:reshape(250, 200))
      a[1] = 55 -- after send returned: must not affect what was sent
    end
  elseif mp.rank == 1 then
    for _, dt in ipairs(dts) do
      local t, m = mp.recv(0)
      local want = big_array(dt, 50000, 1)
      assert(t.a.dtype == dt and #t.a == 50000, "array dtype/length")
      for i = 1, 50000, 97 do assert(t.a[i] == want[i], dt .. " element " .. i) end
      assert(t.a[1] == want[1], "array changed after send")
      assert(t.t[2] == t.a, "shared array reference")
      assert(#t.s == 70000 and #t.t[1] == 100000 and t.t[1]:sub(-1) == "y")
      local d1, d2 = m:dims()
      assert(d1 == 250 and d2 == 200 and m:get(1, 1) == want[1])
    end
  end
end)
print("p2p_values large ok")
