-- ranks: 1 2 3 4 5 20  quick: 1 2
-- SPDX-License-Identifier: MIT
-- The transport harness, point to point: send/recv, recv from anyone,
-- isend/irecv, a send to a list of ranks, and send/recv on a
-- sub-communicator, for every value kind and the sizes on both sides of
-- every threshold of the transport (tests/lua/lib/xfer.lua), each rank
-- checking bit for bit what it received against what it computes the sender
-- sent. MPLUA_XFER_SEED replays a failure (the seed is printed);
-- MPLUA_XFER_ROUNDS runs more rounds with fresh seeds.
package.path = "lib/?.lua;" .. package.path
local X = mp.require("xfer")
local seed0 = tonumber(os.getenv("MPLUA_XFER_SEED")) or 20261123
local rounds = tonumber(os.getenv("MPLUA_XFER_ROUNDS")) or 1
local n = mp.size
local limit = n <= 3 and X.BIG or n <= 8 and (1 << 20) or 300001

-- rank 0 plans; every rank runs the plan
local function plan(seed)
  local r = X.rng(seed)
  local kinds = X.kind_names()
  local cases = {}
  for _, op in ipairs({"send", "any", "isend", "list", "comm"}) do
    for _, kind in ipairs(kinds) do
      for _, size in ipairs(X.sizes(kind, op == "send" and limit or math.min(limit, 1 << 20))) do
        -- every case of the plain send; a third of the others, drawn by seed
        if op == "send" or r(3) == 0 then
          cases[#cases + 1] = {op = op, kind = kind, size = size, seed = r(),
                               shift = n > 1 and 1 + r(n - 1) or 0}
        end
      end
    end
  end
  return cases
end

local function run(batch)
  local X = require("xfer")
  local me, n = mp.rank, mp.size
  for _, c in ipairs(batch) do
    local what = ("%s of %s, %d bytes, case seed %d"):format(c.op, c.kind, c.size, c.seed)
    local function vals(from, to)
      return table.pack(X.gen(c.kind, c.size, X.seed(c.seed, from, to)), from, c.kind)
    end
    local dst, src = (me + c.shift) % n, (me - c.shift) % n
    if c.op == "send" or c.op == "any" then
      local v = vals(me, dst)
      mp.send(dst, table.unpack(v, 1, v.n))
      if c.op == "send" then
        X.check_all(vals(src, me), table.pack(mp.recv(src)), what .. " from rank " .. src)
      else
        local got = table.pack(mp.recv())
        assert(got[1] == src, what .. ": mp.recv() named rank " .. tostring(got[1]))
        X.check_all(vals(src, me), table.pack(table.unpack(got, 2, got.n)), what)
        mp.barrier() -- nobody's next message may be taken for this one
      end
    elseif c.op == "isend" then
      local v = vals(me, dst)
      local q = mp.isend(dst, table.unpack(v, 1, v.n))
      local p = mp.irecv(src)
      X.check_all(vals(src, me), table.pack(p:wait()), what .. " from rank " .. src)
      q:wait()
    elseif c.op == "list" then -- one encoding, sent to two ranks
      local d2 = (me + 2 * c.shift) % n
      local v = vals(me, -1)
      mp.send({dst, d2}, table.unpack(v, 1, v.n))
      local s2 = (me - 2 * c.shift) % n
      X.check_all(vals(src, -1), table.pack(mp.recv(src)), what .. " from rank " .. src)
      X.check_all(vals(s2, -1), table.pack(mp.recv(s2)), what .. " from rank " .. s2)
    else -- a ring on the evens and one on the odds
      local sub = mp.world:split(me % 2)
      local m, k = sub.rank, sub.size
      local to, from = (m + 1) % k, (m - 1) % k
      local v = vals(me, sub.id)
      sub:send(to, table.unpack(v, 1, v.n))
      X.check_all(vals(sub:ranks()[from + 1], sub.id), table.pack(sub:recv(from)),
                  what .. " on a sub-communicator")
    end
  end
  mp.barrier()
  assert(#mp.probe() == 0, "a message is left over after the batch")
  return mp.handin(#batch)
end

X.rounds("xfer_p2p", seed0, rounds, plan, run, 12)
