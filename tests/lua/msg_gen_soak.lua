-- ranks: 2  soak: 2
-- SPDX-License-Identifier: MIT
-- The soak variant of msg_gen.lua: many rounds with fresh seeds (printed;
-- MPLUA_MSGGEN_SEED replays one round's seed), values up to 1 MiB, then
-- the sizes of large messages: more than 64 MiB in flight from one rank (a
-- sender past that waits for its sends, chan/send.c) and messages past
-- 64 MiB (the receiver's kept spare buffer, chan/msg.c), sent twice.
MSGGEN_ROUNDS = tonumber(os.getenv("MPLUA_MSGGEN_ROUNDS")) or 20
MSGGEN_BUDGET = (1 << 20) + 64
if not os.getenv("MPLUA_MSGGEN_SEED") then
  local seed = os.time()
  print("msg_gen_soak: seed " .. seed)
  MSGGEN_SEED = seed
end
dofile("msg_gen.lua")

mp.exec(function()
  local G = require("msggen")
  local me, n = mp.rank, mp.size
  local dst, src = (me + 1) % n, (me - 1) % n
  -- 5 isends of 20 MiB each (arrays and strings), none waited for first
  local function item(k, s)
    local r = G.rng(G.seed(k, s))
    if k % 2 == 0 then return G.rstring(r, 20 * (1 << 20) + k) end
    return G.array(r, G.DTYPES[k % #G.DTYPES + 1], 20 * (1 << 20) // 16, 1)
  end
  local reqs = {}
  for k = 1, 5 do reqs[k] = mp.isend(dst, item(k, me), k) end
  for k = 1, 5 do G.check(table.pack(item(k, src), k), table.pack(mp.recv(src)), "in flight #" .. k) end
  mp.waitall(reqs)
  -- past 64 MiB, twice (the second lands in the first one's kept buffer)
  for k = 1, 2 do
    local big = G.array(G.rng(G.seed(9, me, k)), "f64", (64 << 20) // 8 + 1, 1)
    mp.send(dst, big)
    G.check1(G.array(G.rng(G.seed(9, src, k)), "f64", (64 << 20) // 8 + 1, 1), mp.recv(src), "past 64 MiB")
    big = nil
    collectgarbage()
  end
end)
print("msg_gen_soak ok")
