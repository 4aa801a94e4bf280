-- ranks: 1 2 3 4  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi one-sided windows: Put/Get/Accumulate under Fence and under Lock
-- (shared and exclusive) for every dtype and sizes on both sides of 1 MiB,
-- values visible after the epoch, bad input, faults in Win_create, in
-- Fence and while holding a lock (the next task works), and windows freed
-- at each task's end.
package.path = "lib/?.lua;" .. package.path
local fails = require("mpi_checks").fails
local n = mp.size
local dtypes = {"f64", "f32", "i64", "i32", "u8", "c64", "c128"}

-- Fence: every rank puts into its right neighbour, gets from its left, and
-- accumulates into rank 0; checked after the closing fence. One window per
-- dtype serves the three lengths in turn (MPI's Win_create is the costly
-- part on ranks that share cores): each round overwrites the elements it
-- checks, so a round sees nothing of the one before.
local lens = {1, 7, 140000} -- 140000 f64 > 1 MiB
for _, dt in ipairs(dtypes) do
  mp.exec(function(dt, lens)
    local mpi, me, size = mp.mpi, mp.rank, mp.size
    local a = mp.array(dt, lens[#lens])
    local w = mpi.Win_create(a)
    for _, len in ipairs(lens) do
      local right, left = (me + 1) % size, (me - 1) % size
      local function fill(r) -- rank r's values, as dt holds them
        local x = mp.array(dt, len)
        for i = 1, len do x[i] = (r * 7 + i) % 100 end
        return x
      end
      local function same(x, y, i) return tostring(x[i]) == tostring(y[i]) end
      local src = fill(me)
      w:Fence()
      w:Put(src, right, 0)
      w:Fence()
      local fl = fill(left)
      for i = 1, len, 997 do assert(same(a, fl, i), dt .. " put " .. i) end
      local g = w:Get(left, 0, len)
      w:Fence()
      local fll = fill((left - 1) % size)
      for i = 1, len, 997 do assert(same(g, fll, i), dt .. " get") end
      local one = mp.array(dt, 1)
      one[1] = 1
      w:Accumulate(one, 0, len - 1, mpi.SUM)
      w:Fence()
      if me == 0 then
        local x = fill(size - 1)
        x[len] = (((size - 1) * 7 + len) % 100) + size
        assert(same(a, x, len), dt .. " accumulate " .. tostring(a[len]))
      end
    end
  end, dt, lens)
end

-- Lock (exclusive and shared): every rank adds 1 to each member's counter;
-- Flush, then Get under a shared lock after the barrier.
for _, kind in ipairs{"exclusive", "shared"} do
  for _, dt in ipairs{"i64", "i32", "f64", "u8"} do
    mp.exec(function(kind, dt)
      local mpi, me, size = mp.mpi, mp.rank, mp.size
      local a = mp.array(dt, 3)
      local w = mpi.Win_create(a)
      local one = mp.array(dt, 1)
      one[1] = 1
      for r = 0, size - 1 do
        w:Lock(r, kind)
        w:Accumulate(one, r, 2, mpi.SUM)
        w:Flush(r)
        w:Unlock(r)
      end
      mp.barrier()
      assert(a[3] == size % (dt == "u8" and 256 or math.huge), kind .. " " .. dt)
      w:Lock((me + 1) % size, "shared")
      local g = w:Get((me + 1) % size, 2, 1)
      w:Unlock((me + 1) % size)
      assert(g[1] == a[3])
      mp.barrier()
      w:Free()
    end, kind, dt)
  end
end

-- REPLACE, MAX, BOR; a window on a sub-communicator; an out array for Get.
mp.exec(function()
  local mpi, me = mp.mpi, mp.rank
  local c = mp.world:split(me % 2)
  local a = mp.array("i32", 2)
  local w = mpi.Win_create(a, c)
  local v = mp.array("i32", 2)
  v[1], v[2] = me + 1, 1 << (c.rank % 30)
  w:Fence()
  w:Accumulate(v:copy(), 0, 0, mpi.MAX)
  w:Fence()
  w:Accumulate(mp.array("i32", 1), 0, 1, mpi.REPLACE)
  w:Fence()
  w:Accumulate(mp.array("i32", {v[2]}), 0, 1, mpi.BOR)
  local out = mp.array("i32", 2)
  w:Fence()
  w:Get(0, 0, out)
  w:Fence()
  local want = 0
  for r = 0, c.size - 1 do want = want | (1 << (r % 30)) end
  assert(out[2] == want, "bor " .. out[2])
end)

-- bad input
mp.exec(function()
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  local R = "%[rank " .. me .. "/" .. size .. "%]"
  local a = mp.array("f64", 4)
  local w = mpi.Win_create(a)
  fails("bad argument #1 to 'mp.mpi.Win_create'", mpi.Win_create, {})
  fails("mp.mpi.Put: " .. R .. " no access epoch on rank 0", w.Put, w, mp.array("f64", 1), 0, 0)
  w:Fence()
  fails("bad argument #3 to 'mp.mpi.Put' %(" .. R .. " target rank " .. size .. " out of range",
        w.Put, w, mp.array("f64", 1), size, 0)
  fails("bad argument #4 to 'mp.mpi.Put' %(" .. R .. " elements 3%.%.4 are outside rank 0's window of 4",
        w.Put, w, mp.array("f64", 2), 0, 3)
  fails("elements %-1%.%.%-1 are outside", w.Put, w, mp.array("f64", 1), 0, -1)
  -- arrays of another dtype than the window's: bounds in bytes, alignment
  fails("bad argument #4 to 'mp.mpi.Put' %(" .. R .. " 3 i32 elements at displacement 3 %(in f64 elements, from 0%) reach outside rank 0's window of 4 f64 elements",
        w.Put, w, mp.array("i32", 3), 0, 3)
  fails("bad argument #5 to 'mp.mpi.Accumulate' %(" .. R .. " op 'max' does not apply to c64",
        w.Accumulate, w, mp.array("c64", 1), 0, 0, mpi.MAX)
  fails("bad argument #3 to 'mp.mpi.Get' %(" .. R .. " elements 0%.%.4 are outside", w.Get, w, 0, 0, 5)
  fails("bad argument #5 to 'mp.mpi.Accumulate' %(" .. R .. " op 'band' does not apply to f64",
        w.Accumulate, w, mp.array("f64", 1), 0, 0, mpi.BAND)
  fails("op expected", w.Accumulate, w, mp.array("f64", 1), 0, 0, "xor")
  w:Get(0, 0, 1)
  fails("mp.mpi.Win_lock: " .. R .. " the window is in a fence epoch %(1 operation since the last Fence%)",
        w.Lock, w, 0)
  fails("holds no lock on rank 0", w.Unlock, w, 0)
  fails("bad argument #1 to 'mp.mpi.Win_fence' %(" .. R .. " window expected", w.Fence, 1)
  w:Fence()
  w:Free()
  fails("mp.mpi.Put: " .. R .. " the window is freed", w.Put, w, mp.array("f64", 1), 0, 0)
  -- dtypes that differ between ranks: an error on every rank
  if size > 1 then
    fails("mp.mpi.Win_create: " .. R .. " rank %d+ of the communicator calls it with a",
          mpi.Win_create, mp.array(me == 0 and "f32" or "f64", 1))
  end
end)
local ok, err = pcall(mp.mpi.Win_create, mp.array("f64", 1))
assert(not ok and tostring(err):find("not inside a parallel task"), tostring(err))

-- faults: in Win_create, in Fence, while holding a lock; the next task works
local rounds = require "fault_rounds"
rounds(function(bad, mode)
  local mpi, me = mp.mpi, mp.rank
  local a = mp.array("f64", 2)
  if me == bad and mode == "create" then error("fault") end
  local w = mpi.Win_create(a)
  if me == bad and mode == "fence" then error("fault") end
  w:Fence()
  w:Put(mp.array("f64", {1}), (me + 1) % mp.size, 0)
  if me == bad and mode == "lock" then
    local w2 = mpi.Win_create(mp.array("f64", 1), mp.world:split(me))
    w2:Lock(0, "exclusive")
    error("fault")
  end
  if mode == "lock" then
    local w2 = mpi.Win_create(mp.array("f64", 1), mp.world:split(me))
    w2:Lock(0, "exclusive")
    w2:Unlock(0)
  end
  w:Fence()
  assert(a[1] == 1)
  return true
end, 1, n > 1 and {"create", "fence", "lock"} or {"create"})

-- a target busy in a Lua loop: the Put under its lock lands and the origin's
-- Unlock completes, through the target's count hook polling MPI
mp.exec(function()
  if mp.size < 2 then return end
  local a = mp.array("f64", 1)
  local w = mp.mpi.Win_create(a)
  if mp.rank == 1 then
    w:Lock(0, "exclusive")
    w:Put(mp.array("f64", {42}), 0, 0)
    w:Unlock(0)
  elseif mp.rank == 0 then
    local spins = 0
    while a[1] ~= 42 do spins = spins + 1 end
  end
end)

-- the deadlock detector names a rank waiting in Fence with MPI's words
if n > 1 then
  local ok, err = pcall(mp.exec, function()
    local w = mp.mpi.Win_create(mp.array("f64", 1))
    if mp.rank == 0 then mp.recv(mp.size - 1) else w:Fence() end
  end)
  assert(not ok and tostring(err):find("deadlock") and tostring(err):find("waits? in mpi%.Win_fence"),
         tostring(err))
end

-- windows belong to their task: 1000 tasks each making one (a window that
-- outlived its task would use up MPICH's communicator ids); above 2 ranks,
-- where every Win_create waits for ranks that share the cores, 10 check
-- that the same freeing works with more members
for _ = 1, n <= 2 and 1000 or 10 do
  mp.exec(function() local w = mp.mpi.Win_create(mp.array("u8", 64)) w:Fence() end)
end


-- the example scripts/examples/mpi_histogram.lua prints its expected output
do
  local out, p = {}, print
  print = function(...) out[#out + 1] = table.concat({...}, "\t") end
  dofile("../../scripts/examples/mpi_histogram.lua")
  print = p
  assert(#out == 11 and out[1] == "[0.0, 0.1) 1000" and out[10] == "[0.9, 1.0) 1000"
         and out[11] == "total\t10000", table.concat(out, "\n"))
end
print("mpi_rma ok")
