-- ranks: 1 2 3 4  quick: 1 2
-- SPDX-License-Identifier: MIT
-- Long strings received apart and adopted by Lua (wire/wire_lstr.c): every
-- size on both sides of each threshold (64 KiB, where a string travels as a
-- part of its own and where a message goes in parts; 1 MiB; 8 MiB + 1), alone,
-- in tables and several per message, with empty, 1-byte and zero bytes
-- beside them, around a ring; every byte checked. Between ranks each such
-- string must be adopted (mp.stats().strings_adopted counts them), Lua must
-- count it, and the memory of many received 8 MiB strings must come back.
local KiB, MiB = 1024, 1 << 20
local sizes = {0, 1, 41, 4095, 4096, 64 * KiB - 1, 64 * KiB, 64 * KiB + 1, 300001,
               MiB - 1, MiB, MiB + 1, 8 * MiB + 1}

local function gen(len, seed) -- every byte value, zeros included
  local parts, chunk = {}, {}
  for i = 1, 256 do chunk[i] = string.char((i * 37 + seed) % 256) end
  chunk = table.concat(chunk)
  local n = 0
  while n < len do
    local c = chunk:sub(1, math.min(256, len - n))
    parts[#parts + 1] = c
    n = n + #c
  end
  return table.concat(parts)
end

-- The messages: lists of values; a value is {len, seed} (a string) or a
-- table of such. adopt: how many strings in it travel apart.
local function messages()
  local ms = {}
  for i, len in ipairs(sizes) do ms[#ms + 1] = {{len, i}} end
  local big = {}
  for i = 6, #sizes do big[#big + 1] = sizes[i] end
  for i = 1, #big - 1 do -- two long ones side by side, and in a table with small ones
    ms[#ms + 1] = {{big[i], 100 + i}, {big[i + 1], 200 + i}}
    ms[#ms + 1] = {{tab = true, {big[i], 300 + i}, {0, 1}, {1, 2}, {big[i + 1], 400 + i},
                    x = {big[i], 500 + i}}}
  end
  ms[#ms + 1] = {{64 * KiB, 9}, {1, 3}, {64 * KiB + 1, 8}, {MiB, 7}, {0, 6}, {MiB + 1, 5}}
  return ms
end

local function build(m)
  local out = {}
  for k, v in ipairs(m) do
    if v.tab then
      local t = {}
      for j, e in ipairs(v) do t[j] = gen(e[1], e[2]) end
      t.x = gen(v.x[1], v.x[2])
      out[k] = t
    else
      out[k] = gen(v[1], v[2])
    end
  end
  return out
end

-- strings that travel apart: 64 KiB or longer, in a message whose other
-- bytes fit its header (64 KiB)
local function apart(m)
  local n, small = 0, 0
  local function see(e) if e[1] >= 64 * KiB then n = n + 1 else small = small + e[1] end end
  for _, v in ipairs(m) do
    if v.tab then for _, e in ipairs(v) do see(e) end see(v.x) else see(v) end
  end
  return small < 60000 and n or 0
end

local ok = mp.exec(function()
  local n, me = mp.size, mp.rank
  local to, from = (me + 1) % n, (me - 1) % n
  local adopted0, expect = mp.stats().strings_adopted, 0
  for i, m in ipairs(messages()) do
    local want = table.pack(table.unpack(build(m)))
    mp.send(to, table.unpack(want, 1, want.n))
    local got = table.pack(mp.recv(from))
    assert(got.n == want.n, "message " .. i .. ": " .. got.n .. " values")
    for k = 1, want.n do
      local w, g = want[k], got[k]
      if type(w) == "table" then
        assert(type(g) == "table" and #g == #w and g.x == w.x, "message " .. i .. " table")
        for j = 1, #w do assert(g[j] == w[j], ("message %d: [%d][%d] differs"):format(i, k, j)) end
      else
        assert(g == w, ("message %d: value %d differs (%d bytes, got %s)"):format(i, k, #w,
                                                                             tostring(#g)))
      end
    end
    if n > 1 then expect = expect + apart(m) end
    mp.barrier()
  end
  local adopted = mp.stats().strings_adopted - adopted0
  assert(n == 1 or expect > 0, "no string to adopt: the test lost its point")
  assert(adopted == expect, ("rank %d: %d strings adopted, %d expected"):format(me, adopted,
                                                                                 expect))
  -- many 8 MiB strings: Lua counts each, and their memory comes back
  local s8, kb1 = gen(8 * MiB, 11), nil
  for k = 1, 12 do
    mp.send(to, s8)
    collectgarbage()
    local before = collectgarbage("count")
    local g = mp.recv(from)
    local held = collectgarbage("count") - before
    assert(g == s8, "an 8 MiB string differs")
    if n > 1 then
      assert(held >= 8 * 1024 - 256, ("Lua counts %.0f KiB for an 8 MiB string"):format(held))
    end
    g = nil
    collectgarbage()
    if k == 1 then kb1 = collectgarbage("count") end
  end
  local grown = collectgarbage("count") - kb1
  assert(grown < 1024, ("rank %d: %.0f KiB more held after 11 more 8 MiB strings"):format(me,
                                                                                         grown))
  return adopted
end)
print(("xfer_strings: ok, %d strings adopted on rank 0"):format(ok))
