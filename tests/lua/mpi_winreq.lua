-- ranks: 1 2 3 4  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi windows beyond Put/Get/Fence/Lock: Fence's asserts (used and
-- checked), fence and lock epochs on one window, Sync, Rput/Rget/Raccumulate
-- as requests mixing with the Wait/Test family, Win_allocate (its array dies
-- with the window), bad input, and a fault at each new blocking step (the
-- next task runs clean).
package.path = "lib/?.lua;" .. package.path
local fails = require("mpi_checks").fails
local n = mp.size

-- Fence separates epochs: a ring of puts, then gets of what was put, then
-- accumulates on top, each read after the next fence, for sizes on both
-- sides of 1 MiB; asserts on the fences where they hold.
for _, len in ipairs{1, 5, 140000} do
  mp.exec(function(len)
    local mpi, me, size = mp.mpi, mp.rank, mp.size
    local right, left = (me + 1) % size, (me - 1) % size
    local a = mp.array("i64", len)
    local w = mpi.Win_create(a)
    for round = 1, 3 do
      local src = mp.array("i64", len):fill(me * 1000 + round)
      w:Fence(round == 1 and mpi.MODE_NOPRECEDE or 0)
      w:Put(src, right, 0)
      w:Fence(mpi.MODE_NOSTORE | mpi.MODE_NOPUT) -- gets only in the next epoch
      assert(a[1] == left * 1000 + round and a[len] == left * 1000 + round, "put " .. a[len])
      local g = w:Get(left, 0, len)
      w:Fence()
      assert(g[len] == ((left - 1) % size) * 1000 + round, "get")
      w:Accumulate(mp.array("i64", len):fill(1), right, 0, mpi.SUM)
      w:Fence(mpi.MODE_NOSUCCEED)
      assert(a[len] == left * 1000 + round + 1, "accumulate")
    end
    -- a lock epoch after the fence epoch ended (once every rank has read its
    -- window), then a fence epoch again
    mpi.Barrier()
    w:Lock(right, mpi.LOCK_EXCLUSIVE)
    w:Put(mp.array("i64", {-me}), right, 0)
    w:Unlock(right)
    mpi.Barrier()
    assert(a[1] == -left, "put under the lock")
    w:Fence(mpi.MODE_NOPRECEDE)
    w:Get(right, 0, 1)
    w:Fence(mpi.MODE_NOSUCCEED)
    -- NOCHECK: no grant asked (every rank its own element: no conflict)
    w:Lock(right, "shared", mpi.MODE_NOCHECK)
    w:Put(mp.array("i64", {7}), right, len - 1 > 0 and len - 1 or 0)
    w:Unlock(right)
    mpi.Barrier()
    w:Sync()
    assert(a[len] == 7)
  end, len)
end

-- the fence's target side: stores of this rank into its own window before
-- the fence are what the others get after it
mp.exec(function()
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  local a = mp.array("f64", 3)
  local w = mpi.Win_create(a)
  w:Fence()
  a[2] = me + 0.5
  w:Fence()
  local g = w:Get((me + 1) % size, 1, 1)
  w:Fence()
  assert(g[1] == (me + 1) % size + 0.5)
end)

-- Rput, Rget, Raccumulate: requests in every Wait/Test call, mixed with p2p
-- and collective ones; completion under Lock_all; dropped requests.
for _, len in ipairs{1, 140000} do
  mp.exec(function(len)
    local mpi, me, size = mp.mpi, mp.rank, mp.size
    local right, left = (me + 1) % size, (me - 1) % size
    local a = mp.array("f64", len)
    local w = mpi.Win_create(a)
    w:Lock(right, "exclusive")
    local p = w:Rput(mp.array("f64", len):fill(me), right, 0)
    assert(tostring(p):find("one%-sided"))
    mpi.Wait(p)
    w:Flush(right)
    local q = w:Rget(right, 0, len)
    local vals = mpi.Waitall({mpi.Irecv(left, 3), q, mpi.Isend(me, right, 3), mpi.Ibarrier()})
    assert(vals[1] == left and vals[2][len] == me and #vals[2] == len)
    local r = w:Raccumulate(mp.array("f64", len):fill(2), right, 0, mpi.SUM)
    local flag = mpi.Test(r)
    while not flag do flag = mpi.Test(r) end
    w:Flush(right)                               -- the accumulate is at the target now
    local out = mp.array("f64", len)
    local i, got = mpi.Waitany({w:Rget(right, 0, out)})
    assert(i == 1 and got == out)
    w:Rput(mp.array("f64", 1):fill(1), right, 0) -- never waited: Unlock completes it
    w:Unlock(right)
    assert(out[len] == me + 2, "rget after raccumulate " .. out[len])
    mpi.Barrier()
    assert(a[1] == 1 and a[len] == (len > 1 and left + 2 or 1))
    mpi.Barrier()                                -- read before the next updates come
    w:Lock_all()
    local reqs = {}
    for t = 0, size - 1 do reqs[#reqs + 1] = w:Raccumulate(mp.array("f64", {1}), t, 0, mpi.SUM) end
    local idx = mpi.Waitsome(reqs)
    assert(#idx >= 1)
    mpi.Waitall(reqs)
    w:Unlock_all()
    mpi.Barrier()
    assert(a[1] == 1 + size)
    local late = (function() w:Lock(right) local x = w:Rget(right, 0, 1) w:Unlock(right) return x end)()
    w:Free()                                     -- a pending request of a freed window completes
    assert(mpi.Wait(late)[1] == 1 + size)
  end, len)
end

-- Win_allocate: MPI's memory, an array that dies with its window
mp.exec(function()
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  local w, a = mpi.Win_allocate(3 + me, "i32")
  assert(#a == 3 + me and a.dtype == "i32" and a[1] == 0)
  w:Fence()
  w:Put(mp.array("i32", {me + 1}), (me + 1) % size, 2 + (me + 1) % size)
  w:Fence()
  assert(a[3 + me] == (me - 1) % size + 1)
  local v = a:view({1, 2})
  local kept = a:copy()
  w:Free()
  assert(#a == 0 and tostring(a):find("freed window"))
  local ok, err = pcall(function() return a:sum() end)
  assert(not ok and err:find("mp.mpi.Win_allocate: %[rank " .. me .. "/" .. size .. "%] the array is the memory of a freed window"), err)
  ok, err = pcall(function() return a[1] end)
  assert(not ok and err:find("out of range"), err)
  assert(#v == 2 and v[1] == 0 and kept[3 + me] == (me - 1) % size + 1)
end)
do -- the array outlives its task's end too, as an empty one
  local a = mp.exec(function()
    local _, a = mp.mpi.Win_allocate(2, "f64")
    return mp.rank == 0 and a:copy() or nil
  end)
  assert(#a == 2)
end

-- bad input
mp.exec(function()
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  local R = "%[rank " .. me .. "/" .. size .. "%]"
  local w = mpi.Win_create(mp.array("f64", 2))
  fails("bad argument #2 to 'mp.mpi.Win_fence' %(" .. R .. " assert 1024 has bits other than MODE_NOSTORE",
        w.Fence, w, mpi.MODE_NOCHECK)
  fails("bad argument #2 to 'mp.mpi.Win_fence' %(" .. R .. " assert expected", w.Fence, w, "x")
  fails("bad argument #4 to 'mp.mpi.Win_lock' %(" .. R .. " assert 2048 has bits other than MODE_NOCHECK",
        w.Lock, w, 0, "shared", mpi.MODE_NOSTORE)
  fails("bad argument #2 to 'mp.mpi.Win_lock_all' %(" .. R .. " assert 8192",
        w.Lock_all, w, mpi.MODE_NOPRECEDE)
  fails("bad argument #3 to 'mp.mpi.Win_lock' %(" .. R .. " \"exclusive\", \"shared\", mpi.LOCK_EXCLUSIVE or mpi.LOCK_SHARED expected, got 3",
        w.Lock, w, 0, 3)
  fails("bad argument #2 to 'mp.mpi.Win_sync' %(" .. R .. " no argument expected", w.Sync, w, 1)
  fails("mp.mpi.Rput: " .. R .. " no lock on rank 0: request%-based operations need a passive%-target epoch",
        w.Rput, w, mp.array("f64", 1), 0, 0)
  w:Fence()
  fails("mp.mpi.Rget: " .. R .. " no lock on rank 0", w.Rget, w, 0, 0, 1) -- a fence epoch is not enough
  fails("bad argument #4 to 'mp.mpi.Raccumulate' %(" .. R .. " elements 2%.%.2 are outside",
        w.Raccumulate, w, mp.array("f64", 1), 0, 2, mpi.SUM)
  w:Put(mp.array("f64", 1), 0, 0)
  fails("mp.mpi.Win_fence: " .. R .. " MODE_NOPRECEDE, but this rank issued 1 operation since the last Fence",
        w.Fence, w, mpi.MODE_NOPRECEDE)
  fails("mp.mpi.Win_lock: " .. R .. " the window is in a fence epoch %(1 operation since the last Fence%): end it with Fence%(mpi.MODE_NOSUCCEED%)",
        w.Lock, w, 0)
  w:Fence(mpi.MODE_NOSUCCEED)
  fails("mp.mpi.Put: " .. R .. " no access epoch on rank 0", w.Put, w, mp.array("f64", 1), 0, 0)
  w:Lock(0, "shared", mpi.MODE_NOCHECK)
  fails("mp.mpi.Win_fence: " .. R .. " this rank holds a lock on rank 0 %(shared, a passive%-target epoch%): Unlock first",
        w.Fence, w)
  w:Unlock(0)
  fails("bad argument #1 to 'mp.mpi.Win_allocate' %(" .. R .. " count 0..2^31%-1 expected, got %-1", mpi.Win_allocate, -1, "f64")
  fails("bad argument #2 to 'mp.mpi.Win_allocate' %(" .. R .. " dtype expected %(f64, f32, i64, i32, u8, c64, c128%), got f16",
        mpi.Win_allocate, 1, "f16")
  fails("bad argument #3 to 'mp.mpi.Win_allocate'", mpi.Win_allocate, 1, "f64", 5)
  if size > 1 then -- asserts that must be every member's or none: the ranks next to rank 0 say so
    local ok, err = pcall(w.Fence, w, me == 0 and mpi.MODE_NOSUCCEED or 0)
    assert(ok or err:find("mp.mpi.Win_fence: " .. R .. " rank %d+ of the window's communicator calls Fence with other asserts"), err)
    assert(not ok or (me ~= 0 and me ~= 1), "rank " .. me .. " saw no difference")
  end
end)
do
  local ok, err = pcall(mp.mpi.Win_allocate, 1, "f64")
  assert(not ok and tostring(err):find("not inside a parallel task"), tostring(err))
end

-- faults: in Win_allocate, in Fence's barrier, in the wait for a request;
-- the next task runs clean
local rounds = require "fault_rounds"
rounds(function(bad, mode)
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  if me == bad and mode == "allocate" then error("fault") end
  local w, a = mpi.Win_allocate(2, "f64")
  w:Fence()
  w:Put(mp.array("f64", {1}), (me + 1) % size, 0)
  if me == bad and mode == "fence" then error("fault") end
  w:Fence()
  assert(a[1] == 1)
  local t = (me + 1) % size
  w:Lock(t, "shared")
  local q = w:Rget(t, 0, 2)
  if me == bad and mode == "request" then error("fault") end
  assert(mpi.Wait(q)[1] == 1)
  w:Unlock(t)
  if mode == "request" then mpi.Barrier() end
  return true
end, 1, n > 1 and {"allocate", "fence", "request"} or {"allocate"})

print("mpi_winreq ok")
