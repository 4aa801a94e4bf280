-- ranks: 1 2 3 4 8  quick: 2 3
-- SPDX-License-Identifier: MIT
-- mp.mpi passive-target locks, granted by mplua (mpi_winlock.c): exclusive
-- locks exclude (a read-modify-write counter stays exact), shared locks
-- coexist (every rank holds one through a barrier), a writer's pair is never
-- seen half written by a reader, Lock on oneself, a window on a
-- sub-communicator; mp.abort and faults at every step (holding a lock,
-- waiting for one, in Unlock, in Flush), each followed by a clean task with a
-- new window; a lock never released is a deadlock named in MPI's words.
package.path = "lib/?.lua;" .. package.path
local fails = require("mpi_checks").fails
local n = mp.size

-- exclusive: every rank adds 1 to a counter at a target, rounds times, by
-- Get, +1, Put under an exclusive lock (a lost update shows if two overlap)
local rounds = n <= 4 and 50 or 20
for _, target in ipairs{0, n - 1} do
  mp.exec(function(target, rounds)
    local mpi = mp.mpi
    local a = mp.array("i64", 2)
    local w = mpi.Win_create(a)
    for _ = 1, rounds do
      w:Lock(target, "exclusive")
      local g = w:Get(target, 1, 1)
      w:Flush(target)
      g[1] = g[1] + 1
      w:Put(g, target, 1)
      w:Unlock(target)
    end
    mp.barrier()
    if mp.rank == target then assert(a[2] == rounds * mp.size, "count " .. a[2]) end
    -- after the barrier every Unlock has made its data visible: read it back
    w:Lock(target, "shared")
    local g = w:Get(target, 1, 1)
    w:Unlock(target)
    assert(g[1] == rounds * mp.size, "read back " .. g[1])
  end, target, rounds)
end

-- shared locks coexist: every rank holds one on rank 0 through a barrier
-- (were they exclusive, the barrier could never complete)
mp.exec(function()
  local w = mp.mpi.Win_create(mp.array("f64", 1))
  w:Lock(0, "shared")
  mp.barrier()
  w:Unlock(0)
  w:Lock(0) -- the default is exclusive, and comes after the shared ones
  w:Unlock(0)
end)

-- readers never see a writer's pair half written: writers put the two
-- elements with a flush between, under an exclusive lock; readers Get both
-- under a shared one
mp.exec(function(rounds)
  local mpi, me = mp.mpi, mp.rank
  local a = mp.array("i64", 2)
  local w = mpi.Win_create(a)
  for k = 1, rounds do
    if me % 2 == 0 then
      w:Lock(0, "exclusive")
      w:Put(mp.array("i64", {me * 1000 + k}), 0, 0)
      w:Flush(0)
      w:Put(mp.array("i64", {me * 1000 + k}), 0, 1)
      w:Unlock(0)
    else
      w:Lock(0, "shared")
      local g = w:Get(0, 0, 2)
      w:Unlock(0)
      assert(g[1] == g[2], "half written: " .. g[1] .. " " .. g[2])
    end
  end
end, rounds)

-- a window on a sub-communicator: each half counts at its member 0
mp.exec(function()
  local mpi = mp.mpi
  local c = mp.world:split(mp.rank % 2)
  local a = mp.array("i32", 1)
  local w = mpi.Win_create(a, c)
  for _ = 1, 10 do
    w:Lock(0)
    local g = w:Get(0, 0, 1)
    w:Flush(0)
    w:Put(mp.array("i32", {g[1] + 1}), 0, 0)
    w:Unlock(0)
  end
  mp.barrier()
  if c.rank == 0 then assert(a[1] == 10 * c.size, "sub count " .. a[1]) end
end)

-- bad input
mp.exec(function()
  local me, size = mp.rank, mp.size
  local R = "%[rank " .. me .. "/" .. size .. "%]"
  local w = mp.mpi.Win_create(mp.array("f64", 1))
  fails("bad argument #3 to 'mp.mpi.Win_lock' %(" .. R .. " \"exclusive\", \"shared\", mpi.LOCK_EXCLUSIVE or mpi.LOCK_SHARED expected, got both%)",
        w.Lock, w, 0, "both")
  fails("bad argument #2 to 'mp.mpi.Win_lock' %(" .. R .. " target rank " .. size .. " out of range",
        w.Lock, w, size)
  w:Lock(0, "shared")
  fails("mp.mpi.Win_lock: " .. R .. " this rank already holds a lock on rank 0", w.Lock, w, 0)
  fails("mp.mpi.Win_fence: " .. R .. " this rank holds a lock", w.Fence, w)
  fails("mp.mpi.Win_free: " .. R .. " this rank holds a lock", w.Free, w)
  w:Unlock(0)
  fails("mp.mpi.Win_flush: " .. R .. " this rank holds no lock on rank 0", w.Flush, w, 0)
  fails("mp.mpi.Win_flush_all: " .. R .. " this rank holds no lock", w.Flush_all, w)
  fails("mp.mpi.Win_unlock_all: " .. R .. " this rank holds no Lock_all", w.Unlock_all, w)
  w:Lock_all()
  fails("mp.mpi.Win_lock: " .. R .. " this rank holds the locks of Lock_all", w.Lock, w, 0)
  fails("mp.mpi.Win_unlock: " .. R .. " the locks are Lock_all's", w.Unlock, w, 0)
  fails("bad argument #2 to 'mp.mpi.Fetch_and_op' %(" .. R .. " one element expected, got 2",
        w.Fetch_and_op, w, mp.array("f64", 2), 0, 0, mp.mpi.SUM)
  fails("bad argument #5 to 'mp.mpi.Fetch_and_op' %(" .. R .. " op expected",
        w.Fetch_and_op, w, mp.array("f64", 1), 0, 0, "xor")
  fails("bad argument #5 to 'mp.mpi.Accumulate' %(" .. R .. " op expected %(.-REPLACE%), got no_op",
        w.Accumulate, w, mp.array("f64", 1), 0, 0, mp.mpi.NO_OP)
  fails("bad argument #2 to 'mp.mpi.Compare_and_swap' %(" .. R .. " f64 array: compare%-and%-swap needs an integer",
        w.Compare_and_swap, w, mp.array("f64", 1), mp.array("f64", 1), 0, 0)
  fails("bad argument #6 to 'mp.mpi.Get_accumulate' %(" .. R .. " 1 elements expected, got 2",
        w.Get_accumulate, w, mp.array("f64", 1), 0, 0, mp.mpi.SUM, mp.array("f64", 2))
  w:Unlock_all()
end)

-- Lock_all, Fetch_and_op (a shared counter: every old value once),
-- Compare_and_swap (one winner), Get_accumulate, Flush_all; the atomics
-- under a fence too
mp.exec(function(rounds)
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  local a = mp.array("i64", 4)
  local w = mpi.Win_create(a)
  local one, sum = mp.array("i64", {1}), 0
  for _ = 1, rounds do
    w:Lock(0, "shared")                  -- Fetch_and_op is atomic: shared is enough
    local old = w:Fetch_and_op(one, 0, 0, mpi.SUM)
    w:Unlock(0)
    sum = sum + old[1]
  end
  local total = rounds * size            -- the olds are 0 .. total - 1, each once
  assert(mpi.Allreduce(sum, mpi.SUM) == total * (total - 1) // 2, "fetch-and-add olds")
  w:Lock_all()
  local old = w:Compare_and_swap(mp.array("i64", {me + 1}), mp.array("i64", {0}), 0, 1)
  local g = w:Get_accumulate(mp.array("i64", {10, 100}), size - 1, 2, mpi.SUM)
  local peek = w:Fetch_and_op(one, 0, 0, mpi.NO_OP)
  w:Flush_all()
  assert(peek[1] == total, "no_op " .. peek[1])
  w:Unlock_all()
  assert(mpi.Allreduce(old[1] == 0 and 1 or 0, mpi.SUM) == 1, "one compare-and-swap wins")
  assert(g[1] % 10 == 0 and g[1] < 10 * size and g[2] == 10 * g[1], "get_accumulate old")
  mp.barrier()
  if me == 0 then assert(a[2] >= 1 and a[2] <= size, "the winner " .. a[2]) end
  if me == size - 1 then assert(a[3] == 10 * size and a[4] == 100 * size, "sums " .. a[4]) end
  w:Lock_all()
  local final = w:Get_accumulate(mp.array("i64", 4), 0, 0, mpi.NO_OP)
  w:Unlock_all()
  assert(final[1] == total, "read by get_accumulate " .. final[1])
  mp.barrier()
  -- a fence epoch on another window
  local b = mp.array("f64", 1)
  local v = mpi.Win_create(b)
  v:Fence()
  local f = v:Fetch_and_op(mp.array("f64", {1}), 0, 0, mpi.SUM)
  v:Fence()
  assert(f[1] >= 0 and f[1] < size)
  if me == 0 then assert(b[1] == size) end
end, rounds)

-- a lock still held at the task's end is given back there: the next task
-- locks at once
mp.exec(function() mp.mpi.Win_create(mp.array("f64", 1)):Lock(0) end)

if n == 1 then print("mpi_winlock ok") return end

-- mp.abort from a holder while others wait for its lock
local ok, err = pcall(mp.exec, function()
  local w = mp.mpi.Win_create(mp.array("f64", 1))
  if mp.rank == 1 then
    w:Lock(0)
    mp.send(0, "held")
    mp.recv(0) -- rank 0 aborts instead
  elseif mp.rank == 0 then
    mp.recv(1)
    mp.abort("stop while they wait")
  else
    w:Lock(0)
  end
end)
assert(not ok and tostring(err):find("stop while they wait", 1, true), tostring(err))

-- faults at every step, then a clean task with a new window: the holder
-- faults holding the lock, after a Flush or after its Unlock, or another
-- rank faults while the holder waits for it; the others wait for the lock
-- (and take it, flush and unlock) meanwhile
local fault_rounds = require "fault_rounds"
fault_rounds(function(bad, mode)
  local mpi, me = mp.mpi, mp.rank
  local a = mp.array("f64", 2)
  local w = mpi.Win_create(a)
  if mode == "none" then -- locks work again, on every target
    for r = 0, mp.size - 1 do
      w:Lock(r)
      w:Accumulate(mp.array("f64", {1}), r, 0, mpi.SUM)
      w:Unlock(r)
    end
    mp.barrier()
    assert(a[1] == mp.size, "after the fault: " .. a[1])
    return true
  end
  local holder = (bad + 1) % mp.size
  if me == holder then
    w:Lock(0, "exclusive")
    w:Put(mp.array("f64", {7}), 0, 1)
    if mode == "holding" then error("fault") end
    if mode == "flush" then w:Flush(0) error("fault") end
    if mode == "unlock" then w:Unlock(0) error("fault") end
    mp.send(bad, "held")
    mp.recv(bad) -- never comes: bad faults
  elseif me == bad and mode == "waiting" then
    mp.recv(holder)
    error("fault")
  else
    w:Lock(0, "exclusive")
    w:Get(0, 0, 2)
    w:Flush(0)
    w:Unlock(0)
  end
end, 1, {"holding", "waiting", "flush", "unlock"})

-- a lock never released: the deadlock detector names the waiter in MPI's
-- words, and the holder's wait
ok, err = pcall(mp.exec, function()
  local w = mp.mpi.Win_create(mp.array("f64", 1))
  if mp.rank == 1 then
    w:Lock(0, "exclusive")
    mp.send(0, "held")
    mp.mpi.Recv(0, 5) -- never sent
  elseif mp.rank == 0 then
    mp.recv(1)
    w:Lock(0, "shared")
  end
end)
err = tostring(err)
assert(not ok and err:find("deadlock", 1, true), err)
assert(err:find("rank 0 waits in mpi.Win_lock(rank 0, shared)", 1, true), err)
assert(err:find("rank 1 waits in mpi.Recv(tag 5) from rank 0", 1, true), err)
assert(mp.exec(function() return true end))
print("mpi_winlock ok")
