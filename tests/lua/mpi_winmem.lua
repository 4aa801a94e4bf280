-- ranks: 1 2 3 4  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi windows over other memory and other dtypes: Win_allocate_shared
-- (loads and stores into the other ranks' segments through Shared_query,
-- RMA on it, segments of 0 elements, a communicator of one rank, arrays
-- emptied by Free while views of them keep the pages), dynamic windows
-- (Attach, Detach, Get_address, addresses checked against what the target
-- attached), accesses with arrays of another dtype than the window's
-- (bounds in bytes, alignment, ops per dtype), Rget_accumulate as a
-- request; bad input, and a fault in each new collective (the next task
-- runs clean).
package.path = "lib/?.lua;" .. package.path
local fails = require("mpi_checks").fails
local n = mp.size

-- shared memory: every rank stores into its own segment and into its right
-- neighbour's, reads every segment, and puts through MPI at odd offsets
for _, dt in ipairs{"f64", "u8", "i32"} do
  mp.exec(function(dt)
    local mpi, me, size = mp.mpi, mp.rank, mp.size
    local node = mpi.Comm_split_type(mpi.COMM_WORLD, mpi.COMM_TYPE_SHARED)
    local count = me == 1 and 0 or 3 + me -- rank 1's segment is empty
    local w, a = mpi.Win_allocate_shared(count, dt, node)
    assert(#a == count and a.dtype == dt)
    for i = 1, count do a[i] = me end
    w:Fence()
    local right = (me + 1) % size
    local b, bytes, unit = w:Shared_query(right)
    local esize = ({f64 = 8, u8 = 1, i32 = 4})[dt]
    assert(#b == (right == 1 and 0 or 3 + right) and bytes == #b * esize and unit == esize)
    if #b > 0 then assert(b[#b] == right) b[1] = 100 + me end -- a store into another's memory
    w:Fence()
    if count > 0 then assert(a[1] == 100 + (me - 1) % size, tostring(a[1])) end
    for r = 0, size - 1 do
      local s = w:Shared_query(r)
      if #s > 1 then assert(s[2] == r) end
    end
    local first = w:Shared_query(mpi.PROC_NULL)   -- the first segment with memory
    assert(#first == 3)
    if #b > 0 then w:Put(mp.array(dt, {7}), right, #b - 1) end -- through MPI: the last element
    w:Fence()
    if #b > 0 then assert(b[#b] == 7) end
    local keep = a:view({1, count > 0 and 1 or 0})
    w:Free()
    assert(#a == 0 and #b == 0 and tostring(b):find("freed window"))
    local ok, err = pcall(function() return b:sum() end)
    assert(not ok and err:find("mp.mpi.Win_allocate_shared: %[rank " .. me .. "/" .. size ..
                                "%] the array is the memory of a freed window"), err)
    if count > 0 then assert(keep[1] == 7 or keep[1] == 100 + (me - 1) % size) end
  end, dt)
end

-- a communicator of one rank: Win_allocate's memory, Shared_query of itself
mp.exec(function()
  local mpi, me = mp.mpi, mp.rank
  local w, a = mpi.Win_allocate_shared(4, "i64", mp.world:split(me))
  a[2] = me
  local b = w:Shared_query(0)
  assert(#b == 4 and b[2] == me)
  w:Lock(0)
  local g = w:Get(0, 1, 1)
  w:Unlock(0)
  assert(g[1] == me)
end)

-- dynamic windows: two arrays of different dtypes attached per rank, their
-- addresses exchanged; accesses in fence and lock epochs
mp.exec(function()
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  local right, left = (me + 1) % size, (me - 1) % size
  local w = mpi.Win_create_dynamic()
  assert(tostring(w):find("dynamic"))
  local x, y = mp.array("f64", 4), mp.array("i32", 5)
  w:Attach(x)
  w:Attach(y)
  local addrs = mpi.Allgather({mpi.Get_address(x), mpi.Get_address(y)})
  local rx, ry = addrs[right + 1][1], addrs[right + 1][2]
  w:Fence()
  w:Put(mp.array("f64", {me, me + 0.5}), right, rx + 8)       -- elements 2 and 3
  w:Accumulate(mp.array("i32", {1, 2}), right, ry + 4 * 3, mpi.SUM)
  w:Fence()
  assert(x[2] == left and x[3] == left + 0.5 and y[4] == 1 and y[5] == 2)
  local g = w:Get(right, ry + 12, 2)                         -- the target array's dtype
  w:Fence(mpi.MODE_NOSUCCEED)
  assert(g.dtype == "i32" and g[1] == 1 and g[2] == 2)
  mpi.Barrier()
  w:Lock(right, "exclusive")
  local old = w:Fetch_and_op(mp.array("i32", {10}), right, ry, mpi.SUM)
  w:Unlock(right)
  assert(old[1] == 0)
  mpi.Barrier()
  assert(y[1] == 10)
  -- bad addresses: every one an error naming the call, the argument, the rank
  local R = "%[rank " .. me .. "/" .. size .. "%]"
  w:Lock(right, "shared")
  fails("mp.mpi.Put: " .. R .. " address %d+ is in no array attached at rank " .. right,
        w.Put, w, mp.array("f64", 1), right, rx + 4 * 8 + 4096)
  fails("bad argument #4 to 'mp.mpi.Put' %(" .. R .. " 2 f64 elements at address %d+ reach past the end of the f64 array attached at rank " .. right,
        w.Put, w, mp.array("f64", 2), right, rx + 24)
  fails("bad argument #4 to 'mp.mpi.Accumulate' %(" .. R .. " address %d+ is not aligned for f64 elements %(8 bytes%)",
        w.Accumulate, w, mp.array("f64", 1), right, rx + 4, mpi.SUM)
  w:Unlock(right)
  fails("bad argument #2 to 'mp.mpi.Win_attach' %(" .. R .. " the array overlaps one attached already",
        w.Attach, w, x:view({2, 3}))
  w:Detach(x)
  fails("bad argument #2 to 'mp.mpi.Win_detach' %(" .. R .. " the array is not attached", w.Detach, w, x)
  local z = mp.array("f64", 2)
  w:Attach(z)
  local rz = mpi.Allgather(mpi.Get_address(z))[right + 1]
  w:Lock_all()
  w:Put(mp.array("f64", {me}), right, rz + 8)
  w:Unlock_all()
  mpi.Barrier()
  assert(z[2] == left)
  local plain = mpi.Win_create(mp.array("f64", 1))
  fails("mp.mpi.Win_attach: " .. R .. " not a window of Win_create_dynamic", plain.Attach, plain, z)
  fails("mp.mpi.Win_shared_query: " .. R .. " not a window of Win_allocate_shared",
        plain.Shared_query, plain, 0)
  fails("bad argument #1 to 'mp.mpi.Get_address' %(" .. R .. " mp.Array expected, got table",
        mpi.Get_address, {})
end)                                                          -- freed with their arrays attached

-- arrays of another dtype than the window's, in every access; ops per dtype
mp.exec(function()
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  local R = "%[rank " .. me .. "/" .. size .. "%]"
  local right, left = (me + 1) % size, (me - 1) % size
  local a = mp.array("u8", 64)                 -- raw bytes holding records
  local w = mpi.Win_create(a)
  w:Fence()
  w:Put(mp.array("f64", {me + 0.25}), right, 0)
  w:Put(mp.array("i32", {-me}), right, 8)
  w:Put(mp.array("c128", {mp.complex(me, 1)}), right, 16)
  w:Accumulate(mp.array("i64", {1}), 0, 32, mpi.SUM)
  w:Accumulate(mp.array("f32", {me}), 0, 40, mpi.MAX)
  w:Accumulate(mp.array("i32", {1 << (me % 31)}), 0, 44, mpi.BOR)
  w:Fence()
  local f, i, c = w:Get(right, 0, mp.array("f64", 1)), w:Get(right, 8, mp.array("i32", 1)),
                  w:Get(right, 16, mp.array("c128", 1))
  w:Fence()
  assert(f[1] == me + 0.25 and i[1] == -me and c[1] == mp.complex(me, 1))
  if me == 0 then
    local v = a:view({33, 40})
    assert(mp.array("i64", 1):fill(0) ~= nil and #v == 8)
    local s = w:Get(0, 32, mp.array("i64", 1))
    local m = w:Get(0, 40, mp.array("f32", 1))
    local b = w:Get(0, 44, mp.array("i32", 1))
    w:Fence()
    local bits = 0
    for r = 0, size - 1 do bits = bits | (1 << (r % 31)) end
    assert(s[1] == size and m[1] == size - 1 and b[1] == bits, s[1] .. " " .. m[1] .. " " .. b[1])
  else
    w:Fence()
  end
  w:Lock(left, "exclusive")
  local old = w:Compare_and_swap(mp.array("i32", {9}), mp.array("i32", {0}), left, 48)
  local fo = w:Fetch_and_op(mp.array("f64", {2}), left, 56, mpi.SUM)
  w:Unlock(left)
  assert(old[1] == 0 and fo[1] == 0)
  fails("bad argument #5 to 'mp.mpi.Accumulate' %(" .. R .. " op 'band' does not apply to f32",
        w.Accumulate, w, mp.array("f32", 1), 0, 0, mpi.BAND)
  fails("bad argument #5 to 'mp.mpi.Fetch_and_op' %(" .. R .. " op 'min' does not apply to c64",
        w.Fetch_and_op, w, mp.array("c64", 1), 0, 0, mpi.MIN)
  fails("bad argument #4 to 'mp.mpi.Put' %(" .. R .. " displacement 3 of rank 0's window is not aligned for f64 elements %(8 bytes%)",
        w.Put, w, mp.array("f64", 1), 0, 3)
  fails("bad argument #4 to 'mp.mpi.Put' %(" .. R .. " 2 c128 elements at displacement 48 %(in u8 elements, from 0%) reach outside rank 0's window of 64 u8 elements",
        w.Put, w, mp.array("c128", 2), 0, 48)
  fails("bad argument #3 to 'mp.mpi.Compare_and_swap' %(" .. R .. " i32 array expected %(argument #2's dtype%), got i64",
        w.Compare_and_swap, w, mp.array("i32", 1), mp.array("i64", 1), 0, 0)
end)

-- Rget_accumulate: a request mixing with the others; its Wait gives the old values
mp.exec(function()
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  local R = "%[rank " .. me .. "/" .. size .. "%]"
  local a = mp.array("i64", 2)
  local w = mpi.Win_create(a)
  fails("mp.mpi.Rget_accumulate: " .. R .. " no lock on rank 0: request%-based operations need a passive%-target epoch",
        w.Rget_accumulate, w, mp.array("i64", {1}), 0, 0, mpi.SUM)
  w:Lock(0, "exclusive")
  local q = w:Rget_accumulate(mp.array("i64", {1, 1}), 0, 0, mpi.SUM)
  local out = mp.array("i64", 2)
  local vals = mpi.Waitall({q, mpi.Irecv(me, 5), mpi.Isend(me, me, 5),
                            w:Rget_accumulate(mp.array("i64", {0, 0}), 0, 0, mpi.NO_OP, out)})
  w:Unlock(0)
  assert(vals[1][1] == out[1] - 1 and vals[2] == me and vals[4] == out and out[1] <= size)
  mpi.Barrier()
  if me == 0 then assert(a[1] == size and a[2] == size) end
end)

-- bad input of the collectives
mp.exec(function()
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  local R = "%[rank " .. me .. "/" .. size .. "%]"
  fails("bad argument #1 to 'mp.mpi.Win_allocate_shared' %(" .. R .. " count 0..2^31%-1 expected, got %-2",
        mpi.Win_allocate_shared, -2, "f64")
  fails("bad argument #2 to 'mp.mpi.Win_allocate_shared' %(" .. R .. " dtype expected", mpi.Win_allocate_shared, 1, "x")
  fails("bad argument #1 to 'mp.mpi.Win_create_dynamic'", mpi.Win_create_dynamic, 5)
  if size > 1 then -- another kind of window on another rank: an error on every rank
    local make = me == 0 and function() return mpi.Win_create_dynamic() end
                 or function() return mpi.Win_allocate_shared(1, "f64") end
    fails("rank %d+ of the communicator makes another kind of window", make)
  end
end)

-- faults before each collective, the others in its agreement; the next task runs clean
local rounds = require "fault_rounds"
rounds(function(bad, mode)
  local mpi, me, size = mp.mpi, mp.rank, mp.size
  if me == bad and mode == "shared" then error("fault") end
  local w, a = mpi.Win_allocate_shared(2, "f64")
  if me == bad and mode == "dynamic" then error("fault") end
  local d = mpi.Win_create_dynamic()
  d:Attach(a)
  local b = w:Shared_query((me + 1) % size)
  b[1] = me
  w:Fence()
  assert(a[1] == (me - 1) % size)
  return true
end, 1, {"shared", "dynamic"})

print("mpi_winmem ok")
