-- ranks: 1 2 3 4 5 8 20  quick: 1 3
-- SPDX-License-Identifier: MIT
-- A generative cross-check of messages: random values mixing every kind
-- (tests/lua/lib/msggen.lua: nil, booleans, integers and floats of every
-- edge, strings on both sides of every size threshold, nested tables with
-- shared and cyclic references, keys of every kind and metatables, functions
-- with upvalues, _ENV and C functions, typed arrays of every dtype and
-- shape, complex values, modules) go through every path: send/recv,
-- recv from anyone, isend/irecv, sends to a list of ranks and to oneself,
-- probe, sub-communicators, mp.mpi's tagged Send/Recv/Probe and its
-- collectives, bcast/gather/scatter/allgather/alltoall from every root,
-- reduce/allreduce/scan with a Lua op, handout, typed-array v-collectives,
-- task arguments, the pool and the map. Every receiver makes what it should
-- have received from the seed and compares bit for bit.
-- MPLUA_MSGGEN_SEED replays a run (the seed is printed on failure);
-- MPLUA_MSGGEN_ROUNDS runs more rounds (the soak tier: msg_gen_soak.lua).
package.path = "lib/?.lua;" .. package.path
mp.require("msggen")
local G = require("msggen")

local seed0 = tonumber(os.getenv("MPLUA_MSGGEN_SEED")) or MSGGEN_SEED or 20261127
local rounds = MSGGEN_ROUNDS or tonumber(os.getenv("MPLUA_MSGGEN_ROUNDS")) or 1
local n = mp.size
-- bytes of payload per value: small at many ranks (every rank sends to
-- every other in some paths), past 1 MiB at 1 and 2 ranks
local budget = MSGGEN_BUDGET or (n <= 4 and 70000 or n <= 8 and 9000 or 2048)
-- the sizes past 1 MiB go in a step of their own at up to 4 ranks
local big = MSGGEN_BIG or n <= 4

-- ------------------------------------------------------------ one task
local function run(seed, budget)
  local G = require("msggen")
  local me, n = mp.rank, mp.size
  MSGGEN_MARK = "rank " .. me -- what functions sent with _ENV read here
  local function vals(...) return G.values(G.seed(seed, ...), budget) end
  local function send_vals(send, to, v) send(to, table.unpack(v, 1, v.n)) end
  local r = G.rng(G.seed(seed, -1))
  local shift = n > 1 and 1 + r(n - 1) or 0
  local dst, src = (me + shift) % n, (me - shift) % n

  -- send / recv, and recv from anyone
  send_vals(mp.send, dst, vals(1, me))
  G.check(vals(1, src), table.pack(mp.recv(src)), "send/recv from " .. src)
  send_vals(mp.send, dst, vals(2, me))
  local got = table.pack(mp.recv())
  assert(got[1] == src, "mp.recv() named rank " .. tostring(got[1]))
  G.check(vals(2, src), table.pack(table.unpack(got, 2, got.n)), "recv() from anyone")
  mp.barrier()

  -- every rank to rank 0, taken in any order
  send_vals(mp.send, 0, vals(3, me))
  if me == 0 then
    local from = {}
    for _ = 1, n do
      local g = table.pack(mp.recv())
      assert(not from[g[1]], "two messages from one rank")
      from[g[1]] = true
      G.check(vals(3, g[1]), table.pack(table.unpack(g, 2, g.n)), "recv() at rank 0 from " .. g[1])
    end
  end
  mp.barrier() -- no rank's next message may be taken for this one

  -- isend / irecv, waited in both orders, and a test loop
  local p = mp.irecv(src)
  local q = mp.isend(dst, table.unpack(vals(4, me), 1, vals(4, me).n))
  local early = r(2) == 0
  if early then q:wait() end
  G.check(vals(4, src), table.pack(p:wait()), "irecv from " .. src)
  if not early then q:wait() end
  p = mp.irecv()
  q = mp.isend(dst, table.unpack(vals(5, me), 1, vals(5, me).n))
  local res
  repeat res = table.pack(p:test()) until res[1]
  assert(res[2] == src, "irecv() named rank " .. tostring(res[2]))
  G.check(vals(5, src), table.pack(table.unpack(res, 3, res.n)), "irecv() from anyone")
  local all = mp.waitall({q})
  assert(all[1].n == 0)
  mp.barrier()

  -- received values sent on as they are (arrays that are views into a
  -- message's buffer, adopted strings), two hops
  send_vals(mp.send, dst, vals(16, me))
  local relay = table.pack(mp.recv(src))
  send_vals(mp.send, dst, relay)
  relay = nil
  collectgarbage()
  local src2 = (src - shift) % n
  G.check(vals(16, src2), table.pack(mp.recv(src)), "relayed from " .. src2 .. " by " .. src)
  -- a send request dropped without a wait: the send still completes
  mp.isend(dst, table.unpack(vals(17, me), 1, vals(17, me).n))
  collectgarbage()
  G.check(vals(17, src), table.pack(mp.recv(src)), "isend whose request was dropped")
  -- a received table closed as a to-be-closed variable (those that have
  -- a metatable with __close)
  do
    local closed = MSGGEN_CLOSED or 0
    send_vals(mp.send, me, {n = 1, setmetatable({}, {__close = function() MSGGEN_CLOSED = (MSGGEN_CLOSED or 0) + 1 end})})
    do local t <close> = mp.recv(me) end
    assert(MSGGEN_CLOSED == closed + 1, "__close of a received table did not run")
  end
  mp.barrier()

  -- one encoding to a list of ranks (oneself included), taken after a probe
  local list = {me, dst}
  if n > 2 then list[3] = (dst + 1) % n end
  if list[3] == me then list[3] = nil end
  send_vals(mp.send, list, vals(6, me))
  local expect = {}
  for s = 0, n - 1 do
    local sl = {s, (s + shift) % n}
    if n > 2 and (sl[2] + 1) % n ~= s then sl[3] = (sl[2] + 1) % n end
    for _, d in ipairs(sl) do if d == me then expect[#expect + 1] = s end end
  end
  for _, s in ipairs(expect) do
    local seen
    repeat
      for _, x in ipairs(mp.probe(1)) do if x == s then seen = true end end
      if not seen then mp.probe(2) end
    until seen
    G.check(vals(6, s), table.pack(mp.recv(s)), "list send from " .. s)
  end
  mp.barrier()
  assert(#mp.probe() == 0, "a message is left over")

  -- oneself
  send_vals(mp.send, me, vals(7, me))
  send_vals(mp.send, me, vals(8, me))
  G.check(vals(7, me), table.pack(mp.recv(me)), "self-send")
  G.check(vals(8, me), table.pack(mp.irecv(me):wait()), "self-send, irecv")

  -- a sub-communicator: a ring on each half
  local color = r(2) == 0 and me % 2 or (me < n // 2 and 0 or 1)
  local sub = mp.world:split(color, -me)
  local sr, sn, ranks = sub.rank, sub.size, sub:ranks()
  send_vals(function(to, ...) sub:send(to, ...) end, (sr + 1) % sn, vals(9, me))
  local from = ranks[(sr - 1) % sn + 1]
  G.check(vals(9, from), table.pack(sub:recv((sr - 1) % sn)), "comm send from " .. from)
  local sp = sub:irecv()
  local sq = sub:isend((sr + 1) % sn, table.unpack(vals(10, me), 1, vals(10, me).n))
  local sg = table.pack(sp:wait())
  sq:wait()
  assert(sg[1] == (sr - 1) % sn, "comm:irecv() named rank " .. tostring(sg[1]))
  G.check(vals(10, from), table.pack(table.unpack(sg, 2, sg.n)), "comm irecv from " .. from)
  local sroot = r(sn)
  G.check1(vals(11, ranks[sroot + 1]), sub:bcast(sr == sroot and vals(11, me) or nil, sroot),
           "comm bcast")

  -- mp.mpi: tagged messages, any tag, any source, probe, requests, Sendrecv
  local mpi = mp.mpi
  local tag1, tag2 = r(1000), 1000 + r(1000)
  mpi.Send(vals(12, me), dst, tag1)
  mpi.Send(vals(13, me), dst, tag2)
  local st = mpi.Probe(src, tag2)
  assert(st.source == src and st.tag == tag2, "Probe status")
  local v2 = mpi.Recv(src, tag2)
  G.check1(vals(13, src), v2, "mpi.Recv(tag2)")
  local v1, st1 = mpi.Recv(mpi.ANY_SOURCE, mpi.ANY_TAG)
  assert(st1.source == src and st1.tag == tag1, "Recv status")
  G.check1(vals(12, src), v1, "mpi.Recv(ANY_TAG)")
  local rq = mpi.Irecv(src, tag1)
  local sq2 = mpi.Isend(vals(14, me), dst, tag1)
  G.check1(vals(14, src), (mpi.Wait(rq)), "mpi.Irecv")
  mpi.Wait(sq2)
  local sv = mpi.Sendrecv(vals(15, me), dst, 7, src, 7)
  G.check1(vals(15, src), sv, "mpi.Sendrecv")
  mpi.Barrier()

  -- collectives from every root
  for root = 0, n - 1 do
    local function mine(k) return vals(k, root, me) end
    G.check1(vals(20, root), mp.bcast(me == root and vals(20, root) or nil, root), "bcast root " .. root)
    G.check1(vals(21, root), mpi.Bcast(me == root and vals(21, root) or nil, root), "mpi.Bcast root " .. root)
    local g = mp.gather(mine(22), root)
    local mg = mpi.Gather(mine(23), root)
    if me == root then
      for s = 0, n - 1 do
        G.check1(vals(22, root, s), g[s + 1], "gather root " .. root .. " from " .. s)
        G.check1(vals(23, root, s), mg[s + 1], "mpi.Gather root " .. root .. " from " .. s)
      end
    else
      assert(g == nil and mg == nil)
    end
    local t, mt
    if me == root then
      t, mt = {}, {}
      for d = 0, n - 1 do t[d + 1], mt[d + 1] = vals(24, root, d), vals(25, root, d) end
    end
    G.check1(vals(24, root, me), mp.scatter(t, root), "scatter root " .. root)
    G.check1(vals(25, root, me), mpi.Scatter(mt, root), "mpi.Scatter root " .. root)
    -- a Lua op that keeps every value: the list of every rank's in rank order
    local red = mp.reduce({vals(26, root, me)}, function(a, b) return table.move(b, 1, #b, #a + 1, a) end, root)
    if me == root then
      for s = 0, n - 1 do G.check1(vals(26, root, s), red[s + 1], "reduce root " .. root .. " from " .. s) end
      assert(#red == n)
    end
  end
  local ag, mag = mp.allgather(vals(30, me)), mpi.Allgather(vals(31, me))
  for s = 0, n - 1 do
    G.check1(vals(30, s), ag[s + 1], "allgather from " .. s)
    G.check1(vals(31, s), mag[s + 1], "mpi.Allgather from " .. s)
  end
  local at, mat = {}, {}
  for d = 0, n - 1 do at[d + 1], mat[d + 1] = vals(32, me, d), vals(33, me, d) end
  local aa, maa = mp.alltoall(at), mpi.Alltoall(mat)
  for s = 0, n - 1 do
    G.check1(vals(32, s, me), aa[s + 1], "alltoall from " .. s)
    G.check1(vals(33, s, me), maa[s + 1], "mpi.Alltoall from " .. s)
  end
  local cat = function(a, b) return table.move(b, 1, #b, #a + 1, a) end
  local ar, sc = mp.allreduce({vals(34, me)}, cat), mp.scan({vals(35, me)}, cat)
  assert(#ar == n and #sc == me + 1)
  for s = 0, n - 1 do G.check1(vals(34, s), ar[s + 1], "allreduce from " .. s) end
  for s = 0, me do G.check1(vals(35, s), sc[s + 1], "scan from " .. s) end
  G.check(vals(36, 0), table.pack(mp.handout(table.unpack(me == 0 and vals(36, 0) or {}, 1, me == 0 and vals(36, 0).n or 0))), "handout")

  -- typed arrays: named ops, and mp.mpi's v-collectives with counts on
  -- both sides of the thresholds (0 included)
  local dt = G.DTYPES[r(5) + 1] -- the real dtypes: band needs integers
  local cnt = {}
  for s = 0, n - 1 do cnt[s + 1] = (G.ARR_BYTES[G.rng(G.seed(seed, 40, s))(#G.ARR_BYTES) + 1] % (budget + 1)) // G.ESIZE[dt] end
  local function arr(k, s, c) return G.array(G.rng(G.seed(seed, k, s)), dt, c, 1) end
  local displs, off = {}, 0
  for s = 1, n do displs[s] = off; off = off + cnt[s] end
  local gv = mpi.Gatherv(arr(41, me, cnt[me + 1]), cnt, displs, 0)
  local agv = mpi.Allgatherv(arr(41, me, cnt[me + 1]), cnt, displs)
  for _, whole in ipairs(me == 0 and {gv, agv} or {agv}) do
    assert(#whole == off, "Gatherv length")
    for s = 0, n - 1 do
      G.check1(arr(41, s, cnt[s + 1]), whole:slice(displs[s + 1] + 1, displs[s + 1] + cnt[s + 1]):copy(),
               "Gatherv/Allgatherv block of " .. s)
    end
  end
  local full = me == 0 and arr(42, 0, off) or nil
  local piece = mpi.Scatterv(full, cnt, displs, 0)
  local whole = arr(42, 0, off)
  G.check1(whole:slice(displs[me + 1] + 1, displs[me + 1] + cnt[me + 1]):copy(), piece, "Scatterv")
  local ia = G.array(G.rng(G.seed(seed, 43, me)), dt == "f32" and "i32" or (dt == "f64" and "i64" or dt), 300, 1)
  local orv = mp.allreduce(ia, "bor")
  local want = ia:copy():fill(0)
  for s = 0, n - 1 do
    local x = G.array(G.rng(G.seed(seed, 43, s)), ia.dtype, 300, 1)
    for i = 1, 300 do want[i] = want[i] | x[i] end
  end
  G.check1(want, orv, "allreduce bor of " .. ia.dtype)

  mp.barrier()
  assert(#mp.probe() == 0, "a message is left over at the end")
  return mp.handin(1)
end

-- Strings and arrays around 1 MiB (where a receive first lets the collector
-- free the block a dead predecessor left, chan/arrive.c), with small values
-- around them, sent and broadcast from a random root.
local function run_big(seed)
  local G = require("msggen")
  local me, n = mp.rank, mp.size
  local function vals(k, s)
    local r = G.rng(G.seed(seed, k, s))
    local size = (1 << 20) + r(3) - 1
    local dt = G.DTYPES[r(#G.DTYPES) + 1]
    return {n = 4, G.rstring(r, size), G.rint(r),
            G.array(r, dt, (size + r(3) * 8 - 8) // G.ESIZE[dt], r(3) + 1),
            G.values(r(), 300)}
  end
  local dst, src = (me + 1) % n, (me - 1) % n
  local q = mp.isend(dst, table.unpack(vals(1, me), 1, 4))
  G.check(vals(1, src), table.pack(mp.recv(src)), "big values from " .. src)
  q:wait()
  local root = G.rng(seed)(n)
  G.check1(vals(2, root), mp.bcast(me == root and vals(2, root) or nil, root), "big bcast")
  mp.barrier()
  return mp.handin(1)
end

-- ------------------------------------------------------------ rank 0
local function step(what, seed, f, ...)
  local ok, err = pcall(f, ...)
  if not ok then
    error(("msg_gen: %s failed with seed %d at %d ranks (MPLUA_MSGGEN_SEED=%d replays it):\n%s")
          :format(what, seed, n, seed0, tostring(err)), 0)
  end
  return err
end

for round = 1, rounds do
  local seed = round == 1 and seed0 or G.seed(seed0, round)
  for k = 1, MSGGEN_TASKS or (n <= 8 and 3 or 1) do
    local s = G.seed(seed, k)
    assert(step("a task", s, mp.exec, run, s, budget) == n)
  end

  if big then assert(step("big values", seed, mp.exec, run_big, G.seed(seed, 4)) == n) end

  -- task arguments: values shipped with the command
  local args = G.values(G.seed(seed, 50), budget)
  step("task arguments", seed, mp.exec, function(s, b, ...)
    local G = require("msggen")
    MSGGEN_MARK = "rank " .. mp.rank
    G.check(G.values(G.seed(s, 50), b), table.pack(...), "task arguments")
  end, seed, budget, table.unpack(args, 1, args.n))

  -- the pool: generated tasks out, generated results back
  local reaped = 0
  step("the pool", seed, mp.pool, {
    sow = function(i) if i <= 3 * n then return {i, G.values(G.seed(seed, 60, i), budget // 4)} end end,
    work = function(t)
      local G = require("msggen")
      MSGGEN_MARK = "rank " .. mp.rank
      G.check(G.values(G.seed(seed, 60, t[1]), budget // 4), t[2], "pool task " .. t[1])
      return G.values(G.seed(seed, 61, t[1]), budget // 4)
    end,
    reap = function(i, res)
      MSGGEN_MARK = "rank 0"
      G.check(G.values(G.seed(seed, 61, i), budget // 4), res, "pool result " .. i)
      reaped = reaped + 1
    end,
  })
  assert(reaped == 3 * n)

  -- the map: generated data to each job's owner, generated floats back
  local jobs = 2 * n + 1
  local x_r = {}
  for j = 1, jobs do x_r[j] = G.values(G.seed(seed, 70, j), budget // 8) end
  local theta = {}
  for j = 1, jobs do theta[j] = {j} end
  local ys = step("mp.map_rect", seed, mp.map_rect, function(th, x)
    local G = require("msggen")
    local j = math.tointeger(th[1])
    MSGGEN_MARK = "rank " .. mp.rank
    G.check(G.values(G.seed(seed, 70, j), budget // 8), x, "map data of job " .. j)
    local r = G.rng(G.seed(seed, 71, j))
    return {G.rfloat(r), G.rfloat(r), th[1]}
  end, theta, x_r)
  for j = 1, jobs do
    local rr = G.rng(G.seed(seed, 71, j))
    for i = 1, 2 do
      G.check1(G.rfloat(rr), ys[j][i], "map result " .. i .. " of job " .. j)
    end
  end
end
print(("msg_gen ok: seed %d, %d round(s), %d ranks, budget %d"):format(seed0, rounds, n, budget))
