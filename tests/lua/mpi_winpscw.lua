-- ranks: 1 2 3 4  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's generalized active target (Post, Start, Complete, Wait, Test):
-- a ring of puts and gets for sizes on both sides of 1 MiB, Wait and a Test
-- loop, Start before or after the matching Post, every rank exposing to
-- one (every root) and accumulating into it, empty groups, bad input, the
-- deadlock detector naming a rank in Start and in Wait with MPI's words,
-- and a fault at each step (the next task runs clean).
package.path = "lib/?.lua;" .. package.path
local fails = require("mpi_checks").fails
local n = mp.size

-- a ring: each rank exposes its window to its left neighbour and accesses
-- its right one; rounds alternate Wait and a Test loop
for _, len in ipairs(n < 20 and {1, 140000} or {1}) do -- 140000 f64 > 1 MiB
  mp.exec(function(len)
    local mpi, me, size = mp.mpi, mp.rank, mp.size
    local right, left = (me + 1) % size, (me - 1) % size
    local world = mpi.Comm_group()
    local a = mp.array("f64", len + 1)
    local w = mpi.Win_create(a)
    for round = 1, 3 do
      a[len + 1] = -(me * 10 + round) -- a store before Post: what the origin gets
      w:Post(mpi.Group_incl(world, {left}))
      w:Start(mpi.Group_incl(world, {right}))
      w:Put(mp.array("f64", len):fill(me * 10 + round), right, 0)
      local g = w:Get(right, len, 1)
      w:Complete()
      if round == 2 then
        while not w:Test() do end
      else
        w:Wait()
      end
      assert(a[1] == left * 10 + round and a[len] == left * 10 + round, "put " .. a[len])
      assert(g[1] == -(right * 10 + round), "get " .. g[1])
    end
    mpi.Barrier() -- nobody puts before everybody read
    -- then the same window in a fence epoch
    w:Fence()
    w:Put(mp.array("f64", {-me}), right, 0)
    w:Fence(mpi.MODE_NOSUCCEED)
    assert(a[1] == -left)
  end, len)
end

-- every rank in turn exposes to all others, which accumulate into it and
-- get from it; Start comes before Post on the origins of odd roots
for root = 0, n - 1 do -- every root
  mp.exec(function(root)
    local mpi, me, size = mp.mpi, mp.rank, mp.size
    local world = mpi.Comm_group()
    local others = mpi.Group_excl(world, {root})
    local a = mp.array("i64", 2):fill(5)
    local w = mpi.Win_create(a)
    if me == root then
      if root % 2 == 1 then mpi.Barrier() end
      w:Post(others, mpi.MODE_NOSTORE)
      w:Wait()
      assert(a[1] == 5 + (size - 1) * size // 2 - root, "sum " .. a[1])
    else
      if root % 2 == 1 then mpi.Barrier() end
      local g = mpi.Group_incl(world, {root})
      w:Start(g)
      w:Accumulate(mp.array("i64", {me}), root, 0, mpi.SUM)
      local v = w:Get(root, 1, 1)
      w:Complete()
      assert(v[1] == 5)
    end
    if root % 2 == 1 and size == 1 then return end
  end, root)
end

-- empty groups; a rank in both roles towards itself
mp.exec(function()
  local mpi, me = mp.mpi, mp.rank
  local a = mp.array("f64", 1)
  local w = mpi.Win_create(a)
  w:Post(mpi.GROUP_EMPTY)
  assert(w:Test() == true)
  w:Start(mpi.GROUP_EMPTY)
  w:Complete()
  local self = mpi.Group_incl(mpi.Comm_group(), {me})
  w:Post(self)
  w:Start(self)
  w:Put(mp.array("f64", {me + 1}), me, 0)
  w:Complete()
  w:Wait()
  assert(a[1] == me + 1)
end)

-- bad input
mp.exec(function()
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  local R = "%[rank " .. me .. "/" .. size .. "%]"
  local world = mpi.Comm_group()
  local a = mp.array("f64", 2)
  local w = mpi.Win_create(a)
  fails("bad argument #2 to 'mp.mpi.Win_post' %(" .. R .. " group expected", w.Post, w, {0})
  fails("bad argument #3 to 'mp.mpi.Win_post' %(" .. R .. " assert 1024 has bits other than MODE_NOSTORE, MODE_NOPUT",
        w.Post, w, world, mpi.MODE_NOCHECK)
  fails("bad argument #3 to 'mp.mpi.Win_start' %(" .. R .. " assert 1024 has bits other than none",
        w.Start, w, world, mpi.MODE_NOCHECK)
  fails("mp.mpi.Win_complete: " .. R .. " no access epoch is open: Start first", w.Complete, w)
  fails("mp.mpi.Win_wait: " .. R .. " no exposure epoch is open: Post first", w.Wait, w)
  fails("mp.mpi.Win_test: " .. R .. " no exposure epoch is open", w.Test, w)
  local self = mpi.Group_incl(world, {me})
  w:Post(self)
  fails("mp.mpi.Win_post: " .. R .. " an exposure epoch is open %(Post%): Wait or Test first",
        w.Post, w, self)
  fails("mp.mpi.Win_fence: " .. R .. " this rank is in an exposure epoch of Post/Start", w.Fence, w)
  fails("mp.mpi.Win_free: " .. R .. " an exposure epoch is open %(Post%): Wait first", w.Free, w)
  w:Start(self)
  fails("mp.mpi.Win_start: " .. R .. " an access epoch is open %(Start%): Complete first",
        w.Start, w, self)
  fails("mp.mpi.Win_lock: " .. R .. " an access epoch is open %(Start%): Complete first",
        w.Lock, w, me)
  fails("mp.mpi.Win_fence: " .. R .. " this rank is in an access epoch of Post/Start", w.Fence, w)
  if size > 1 then
    fails("mp.mpi.Put: " .. R .. " no access epoch on rank " .. (me + 1) % size,
          w.Put, w, mp.array("f64", 1), (me + 1) % size, 0)
  end
  w:Complete()
  w:Wait()
  w:Lock(me)
  fails("mp.mpi.Win_start: " .. R .. " this rank holds a lock on the window", w.Start, w, self)
  w:Unlock(me)
  -- a group member outside the window's communicator
  local sub = mpi.Win_create(mp.array("f64", 1), mp.world:split(me))
  if size > 1 then
    fails("bad argument #2 to 'mp.mpi.Win_post' %(" .. R .. " rank " .. (me + 1) % size ..
          " of the group is not a member of the window's communicator%)",
          sub.Post, sub, mpi.Group_incl(world, {(me + 1) % size}))
  end
  w:Fence()
  w:Put(mp.array("f64", 1), me, 0)
  fails("mp.mpi.Win_start: " .. R .. " the window is in a fence epoch %(1 operation since the last Fence%)",
        w.Start, w, self)
  w:Fence(mpi.MODE_NOSUCCEED)
end)

-- the deadlock detector names a rank waiting in Start and in Wait
if n > 1 then
  local ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    local w = mpi.Win_create(mp.array("f64", 1))
    if mp.rank == 0 then w:Start(mpi.Group_incl(mpi.Comm_group(), {1})) end
  end)
  assert(not ok and err:find("deadlock") and err:find("rank 0 waits in mpi%.Win_start%(rank 1%)"), err)
  ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    local w = mpi.Win_create(mp.array("f64", 1))
    if mp.rank == 1 then
      w:Post(mpi.Group_incl(mpi.Comm_group(), {0}))
      w:Wait()
    end
  end)
  assert(not ok and err:find("deadlock") and err:find("rank 1 waits in mpi%.Win_wait%(rank 0%)"), err)
end

-- faults before each step, while the others wait in Start, Wait or
-- Complete; the next task runs clean
local rounds = require "fault_rounds"
rounds(function(bad, mode)
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  local world = mpi.Comm_group()
  local right, left = (me + 1) % size, (me - 1) % size
  local a = mp.array("f64", 1)
  local w = mpi.Win_create(a)
  if me == bad and mode == "post" then error("fault") end
  w:Post(mpi.Group_incl(world, {left}))
  if me == bad and mode == "start" then error("fault") end
  w:Start(mpi.Group_incl(world, {right}))
  w:Put(mp.array("f64", {me}), right, 0)
  if me == bad and mode == "complete" then error("fault") end
  w:Complete()
  if me == bad and mode == "wait" then error("fault") end
  w:Wait()
  assert(a[1] == left)
  return true
end, 1, n == 1 and {"post"} or {"post", "start", "complete", "wait"})

print("mpi_winpscw ok")
