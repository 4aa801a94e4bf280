-- ranks: 1 2 3 4 5  quick: 1 3
-- SPDX-License-Identifier: MIT
-- Receives from any source take messages in arrival order, whatever the mailbox's
-- structure: rank 0 makes the arrival order known (it lets one sender at a time send, and
-- waits for that sender's notice on another channel, which a sender's messages cannot
-- overtake), then checks what mp.recv(), mp.irecv(), mp.recv(from) from the middle,
-- mp.probe, two communicators' recv() (interleaved, and with more of one queued ahead of
-- the other than it has members), and mp.mpi's Recv, Probe and Iprobe with ANY_SOURCE and
-- ANY_TAG (other tags queued ahead) return. Messages of a communicator that ended with its
-- task are dropped, counted, and never received by the next task.
local n = mp.size

mp.exec(function()
  local mpi, me = mp.mpi, mp.rank
  local A = mp.world:split(0)           -- comm rank = world rank
  local B = mp.world:split(0, -me)      -- comm ranks reversed: world rank 0 is the last
  local Branks = B:ranks()
  local seed = 12345
  local function rand(k) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % k end

  -- A plan every rank computes alike: steps {from, kind, v, tag} in arrival order.
  local function plan(len, kinds, lead)
    local steps = {}
    for i = 1, len do
      local kind = i <= #lead and lead[i] or kinds[rand(#kinds) + 1]
      steps[i] = {from = rand(n), kind = kind, v = i * 10 + rand(10), tag = 1 + rand(3)}
      if kind == "mpi1" then steps[i].kind, steps[i].tag = "mpi", 1 end
    end
    return steps
  end
  local function send_as(s)
    if s.kind == "world" then mp.send(0, s.v)
    elseif s.kind == "A" then A:send(0, s.v)
    elseif s.kind == "B" then B:send(n - 1, s.v)
    else mpi.Send(s.v, 0, s.tag) end
  end
  -- the steps happen one after the other: each sender sends, then its notice (tag 99)
  local function run(steps)
    if me == 0 then
      for _, s in ipairs(steps) do
        if s.from == 0 then send_as(s); mpi.Send(true, 0, 99) else mp.send(s.from, "go") end
        assert(mpi.Recv(s.from, 99) == true)
      end
    else
      for _, s in ipairs(steps) do
        if s.from == me then assert(mp.recv(0) == "go"); send_as(s); mpi.Send(true, 0, 99) end
      end
    end
  end
  local function only(steps, pred)
    local t = {}
    for _, s in ipairs(steps) do if pred(s) then t[#t + 1] = s end end
    return t
  end
  local function take(list, i) return table.remove(list, i or 1) end
  local function senders(list) -- what mp.probe lists: distinct, ascending
    local seen, t = {}, {}
    for _, s in ipairs(list) do if not seen[s.from] then seen[s.from] = true; t[#t + 1] = s.from end end
    table.sort(t)
    return table.concat(t, ",")
  end

  -- world: from the middle, irecv, probe before every recv (more queued than ranks, then fewer)
  local steps = plan(4 * n + 6, {"world"}, {})
  run(steps)
  if me == 0 then
    local q = only(steps, function() return true end)
    local mid = q[#q // 2].from
    for i, s in ipairs(q) do
      if s.from == mid then
        assert(mp.recv(mid) == s.v, "recv(from) takes that sender's oldest")
        take(q, i)
        break
      end
    end
    local f, v = mp.irecv():wait()
    local s = take(q)
    assert(f == s.from and v == s.v, ("irecv(): %s from %s, want %s from %s"):format(v, f, s.v, s.from))
    while #q > 0 do
      local p = table.concat(mp.probe(), ",")
      assert(p == senders(q), ("probe: {%s}, want {%s}"):format(p, senders(q)))
      f, v = mp.recv()
      s = take(q)
      assert(f == s.from and v == s.v, ("recv(): %s from %s, want %s from %s"):format(v, f, s.v, s.from))
    end
    assert(#mp.probe() == 0, "drained")
  end
  mp.barrier()

  -- two communicators and the world interleaved; more of A's ahead than B has members
  steps = plan(3 * n + 14, {"A", "B", "world"}, {"A", "A", "A", "A", "A", "A", "A"})
  run(steps)
  if me == 0 then
    for _, c in ipairs({{B, "B"}, {A, "A"}}) do
      local comm, q = c[1], only(steps, function(s) return s.kind == c[2] end)
      for _, s in ipairs(q) do
        local f, v = comm:recv()
        local w = comm == B and Branks[f + 1] or f
        assert(w == s.from and v == s.v, ("%s:recv(): %s from world rank %s, want %s from %s")
          :format(c[2], v, w, s.v, s.from))
      end
    end
    for _, s in ipairs(only(steps, function(s) return s.kind == "world" end)) do
      local f, v = mp.recv()
      assert(f == s.from and v == s.v, "the world's messages, apart from the communicators'")
    end
    assert(#mp.probe() == 0)
  end
  mp.barrier()

  -- mp.mpi: tags 1-3, tag 1 ahead of the others
  steps = plan(3 * n + 14, {"mpi"}, {"mpi1", "mpi1", "mpi1", "mpi1", "mpi1", "mpi1", "mpi1"})
  run(steps)
  if me == 0 then
    local q = only(steps, function() return true end)
    local function first(tag)
      for i, s in ipairs(q) do if tag == mpi.ANY_TAG or s.tag == tag then return take(q, i) end end
    end
    local function check(s, v, st, what)
      assert(s and v == s.v and st.source == s.from and st.tag == s.tag, ("%s: %s from %s tag %s,"
        .. " want %s from %s tag %s"):format(what, v, st.source, st.tag, s and s.v, s and s.from,
        s and s.tag))
    end
    for tag = 3, 2, -1 do -- each tag's oldest, past the others ahead of it
      local want = first(tag)
      if want then
        local flag, st = mpi.Iprobe(mpi.ANY_SOURCE, tag)
        assert(flag and st.source == want.from and st.tag == tag, "Iprobe(ANY_SOURCE, tag)")
        local v, st2 = mpi.Recv(st.source, tag)
        check(want, v, st2, "Recv after Iprobe")
      end
    end
    local want = first(2)
    if want then
      local v, st = mpi.Recv(mpi.ANY_SOURCE, 2)
      check(want, v, st, "Recv(ANY_SOURCE, 2)")
    end
    while #q > 0 do -- the rest in arrival order; Probe says which comes next
      local st = mpi.Probe(mpi.ANY_SOURCE, mpi.ANY_TAG)
      want = first(mpi.ANY_TAG)
      assert(st.source == want.from and st.tag == want.tag, "Probe(ANY_SOURCE, ANY_TAG)")
      local v, st2 = mpi.Recv(mpi.ANY_SOURCE, mpi.ANY_TAG)
      check(want, v, st2, "Recv(ANY_SOURCE, ANY_TAG)")
    end
    assert(not mpi.Iprobe(mpi.ANY_SOURCE, mpi.ANY_TAG), "drained")
  end
  mp.barrier()
end)

-- a communicator's messages nobody took are dropped with its task, and counted
local before = mp.stats().dropped
mp.exec(function()
  local C = mp.world:split(0)
  C:send(0, "stale", mp.rank)
  mp.send(0, "stale", mp.rank)
end)
assert(mp.stats().dropped - before == 2 * n, ("dropped %d, want %d"):format(
  mp.stats().dropped - before, 2 * n))
mp.exec(function()
  local C = mp.world:split(0) -- likely the same id as the last task's
  if mp.rank > 0 or n == 1 then C:send(0, "fresh", mp.rank); mp.send(0, "fresh", mp.rank) end
  if mp.rank == 0 then
    for _ = 1, math.max(n - 1, 1) do
      local f, what, r = C:recv()
      assert(what == "fresh" and r == f, ("C:recv() took %s from %s"):format(what, f))
      f, what, r = mp.recv()
      assert(what == "fresh" and r == f, ("recv() took %s from %s"):format(what, f))
    end
    assert(#mp.probe() == 0)
  end
end)
print("p2p_anysrc_order ok")
