-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- Tasks are isolated: a message nobody received in its task is never delivered
-- in a later one, and is counted once. Each round, every rank sends its right
-- neighbour small messages and a large one (likely still in flight when the
-- task ends), receives nothing, then in the next task sends a fresh message
-- after them. A stale message either reached the receiver before the next task
-- began (the task's start clears it) or arrives during it (the arrival drops
-- it); since a sender's messages are delivered in order, by the time the fresh
-- one is taken every stale one has been dealt with, so recv must return the
-- fresh one, probe must find nothing more, and the receiver's count of drops
-- must have grown by exactly what was sent to it (rank 0 counts job-wide: the
-- messages unreceived at each task's end, each once).
local n = mp.size
local ROUNDS = 8
local BIG = 4 << 20 -- bytes: sent in parts, not in one eager message
local PER_RANK = 4  -- stale messages each rank sends per round
local late = 0      -- large stale messages that arrived during the next task
for round = 1, ROUNDS do
  local before = mp.stats().dropped
  mp.exec(function()
    local right = (mp.rank + 1) % mp.size
    rawset(_G, "dropped_before", mp.stats().dropped) -- for the next task, on this rank
    mp.send(right, "stale", round, 1)
    mp.send(right, "stale", round, 2)
    mp.send(right, "stale", round, string.rep("s", 70000))
    mp.isend(right, "stale", round, mp.array("f64", BIG // 8):fill(round)) -- unwaited
  end)
  assert(mp.stats().dropped - before == PER_RANK * n,
         ("round %d: rank 0 counted %d drops after the task, want %d"):format(
           round, mp.stats().dropped - before, PER_RANK * n))
  late = late + mp.exec(function(round)
    local left = (mp.rank - 1) % mp.size
    local bytes0 = mp.stats().bytes_received
    mp.send((mp.rank + 1) % mp.size, "fresh", round)
    local what, k = mp.recv(left)
    assert(what == "fresh" and k == round, ("round %d: rank %d received a stale message: %s %s")
      :format(round, mp.rank, tostring(what), tostring(k)))
    local queued = mp.probe()
    assert(#queued == 0, ("round %d: rank %d still has messages queued from rank %d")
      :format(round, mp.rank, queued[1] or -1))
    local arrived_late = mp.stats().bytes_received - bytes0 >= BIG and 1 or 0
    if mp.rank > 0 then
      local got = mp.stats().dropped - dropped_before
      assert(got == PER_RANK, ("round %d: rank %d dropped %d stale messages, want %d")
        :format(round, mp.rank, got, PER_RANK))
    end
    return mp.handin(arrived_late)
  end, round)
  assert(mp.stats().dropped - before == PER_RANK * n,
         ("round %d: rank 0 counted %d drops after the next task, want %d (counted twice?)")
         :format(round, mp.stats().dropped - before, PER_RANK * n))
end
print(("task_isolation ok: %d rounds, %d stale messages each; %d large ones arrived during the"
       .. " next task"):format(ROUNDS, PER_RANK * n, late))
