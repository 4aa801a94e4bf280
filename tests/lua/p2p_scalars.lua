-- ranks: 1 2 3 4  quick: 1 2
-- SPDX-License-Identifier: MIT
-- Messages of scalars take the codec's short way (wire/wire_scalar.c) on
-- both sides: every kind and boundary must arrive exactly, to self and
-- around a ring, through mp.send/mp.recv, comm:send/comm:recv and a
-- sub-communicator, beside messages that take the general way.
local function bits(x) return string.pack("<d", x) end
local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "number" then return a == b end
  if math.type(a) ~= math.type(b) then return false end
  return math.type(a) == "integer" and a == b or bits(a) == bits(b)
end

local nan = string.unpack("<d", "\1\2\3\4\5\6\xf8\x7f") -- a NaN with a payload
local vals = {true, false, 0, 1, 1.0, 127, 128, -1, -64, -65, 255, 256,
  math.maxinteger, math.mininteger, math.maxinteger - 1, math.mininteger + 1,
  -0.0, 0.0, 0 / 0, -(0 / 0), nan, 1 / 0, -1 / 0, 5e-324, 1e308, 0.5, 2^53, -2^63}
for e = 0, 62, 7 do vals[#vals + 1] = 1 << e; vals[#vals + 1] = -(1 << e) end
-- string lengths: the short-string tag (31/32), the varint length (127/128),
-- the direct send of a small message (8 KiB with its header), strings sent
-- in place (64 KiB: the general way)
for _, n in ipairs{0, 1, 31, 32, 127, 128, 8100, 8200, 65535, 65536} do
  vals[#vals + 1] = string.rep("\0\255x", n):sub(1, n)
end

-- messages: each value alone, nil alone, none, a few mixed, 127 values (the
-- short way's most) and 128, and scalars beside a table (the general way)
local msgs = {}
for i = 1, #vals do msgs[#msgs + 1] = table.pack(vals[i]) end
msgs[#msgs + 1] = table.pack(nil)
msgs[#msgs + 1] = table.pack()
msgs[#msgs + 1] = table.pack(nil, 1, 1.0, nil, "", -0.0, nil)
msgs[#msgs + 1] = table.pack(table.unpack(vals, 1, 127))
msgs[#msgs + 1] = table.pack(table.unpack(vals, 1, 128))
msgs[#msgs + 1] = table.pack(1, {2}, 3.0)
rawset(_G, "msgs", msgs)
rawset(_G, "same", same)

local function check(got, want, what)
  assert(got.n == want.n, what .. ": " .. got.n .. " values, want " .. want.n)
  for i = 1, want.n do
    local g, w = got[i], want[i]
    if type(w) == "table" then
      assert(type(g) == "table" and g[1] == w[1], what .. ": value " .. i)
    else
      assert(same(g, w), string.format("%s: value %d: got %s (%s), want %s (%s)", what, i,
        tostring(g), math.type(g) or type(g), tostring(w), math.type(w) or type(w)))
    end
  end
end
rawset(_G, "check", check)

mp.exec(function()
  local me, n = mp.rank, mp.size
  local right, left = (me + 1) % n, (me - 1) % n
  -- to self: queued at once, read back by the short decoder
  for i, m in ipairs(msgs) do
    mp.send(me, table.unpack(m, 1, m.n))
    check(table.pack(mp.recv(me)), m, "self #" .. i)
  end
  if n == 1 then return end
  -- around the ring, each message in turn (sends complete at once or not)
  for i, m in ipairs(msgs) do
    mp.send(right, table.unpack(m, 1, m.n))
    check(table.pack(mp.recv(left)), m, "ring #" .. i)
  end
  -- all at once, then all received: many in flight, in order
  for _, m in ipairs(msgs) do mp.send(right, table.unpack(m, 1, m.n)) end
  for i, m in ipairs(msgs) do check(table.pack(mp.recv(left)), m, "burst #" .. i) end
  -- from anyone: the sender's rank first
  mp.send(right, -0.0, "any")
  local from, z, s = mp.recv()
  assert(from == left and same(z, -0.0) and s == "any", "recv from anyone")
  -- methods, and a sub-communicator (its own channel and id)
  local w = mp.world
  for i, m in ipairs(msgs) do
    w:send(right, table.unpack(m, 1, m.n))
    check(table.pack(w:recv(left)), m, "method #" .. i)
  end
  local sub = mp.world:split(me % 2, me)
  local sr, sn = sub.rank, sub.size
  for i, m in ipairs(msgs) do
    sub:send((sr + 1) % sn, table.unpack(m, 1, m.n))
    check(table.pack(sub:recv((sr - 1) % sn)), m, "sub #" .. i)
  end
  -- a list of destinations: the same encoded message to each
  if me == 0 then
    local all = {}
    for r = 1, n - 1 do all[#all + 1] = r end
    mp.send(all, math.mininteger, 1.0, "list")
  else
    check(table.pack(mp.recv(0)), table.pack(math.mininteger, 1.0, "list"), "list")
  end
end)
print("p2p_scalars: ok")
