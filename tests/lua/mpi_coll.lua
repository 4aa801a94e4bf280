-- ranks: 1 2 3 4 5 8  quick: 1 3
-- SPDX-License-Identifier: MIT
-- mp.mpi's collectives under MPI's names against a serial computation, on
-- mp.world and on a split communicator: every op, a Lua function,
-- MAXLOC/MINLOC, Exscan (nil on rank 0), Reduce_scatter_block.
local function check(comm)
  local mpi = mp.mpi
  local me, n = mpi.Comm_rank(comm), mpi.Comm_size(comm)
  local function v(r) return r + 1 end
  local sum, prod = 0, 1
  for r = 0, n - 1 do sum = sum + v(r); prod = prod * v(r) end
  mpi.Barrier(comm)
  assert(mpi.Bcast(me == 0 and {x = 1} or nil, 0, comm).x == 1)
  assert(mpi.Bcast(me == n - 1 and "last" or nil, n - 1, comm) == "last")
  assert(mpi.Allreduce(v(me), mpi.SUM, comm) == sum)
  assert(mpi.Allreduce(v(me), mpi.PROD, comm) == prod)
  assert(mpi.Allreduce(v(me), mpi.MAX, comm) == n and mpi.Allreduce(v(me), mpi.MIN, comm) == 1)
  assert(mpi.Allreduce(me == 0, mpi.LOR, comm) == true)
  assert(mpi.Allreduce(me == 0, mpi.LAND, comm) == (n == 1))
  assert(mpi.Allreduce(1 << me % 60, mpi.BOR, comm) & 1 == 1)
  assert(mpi.Allreduce(7, mpi.BAND, comm) == 7)
  local r = mpi.Reduce(v(me), mpi.SUM, 0, comm)
  assert((me == 0) == (r ~= nil) and (r == nil or r == sum))
  local cat = mpi.Allreduce(tostring(me), function(a, b) return a .. b end, comm)
  local want = ""
  for q = 0, n - 1 do want = want .. q end
  assert(cat == want)
  local loc = mpi.Allreduce({(me * 7) % n, me}, mpi.MAXLOC, comm)
  local best, at = -1, -1
  for q = 0, n - 1 do if (q * 7) % n > best then best, at = (q * 7) % n, q end end
  assert(loc[1] == best and loc[2] == at, "maxloc")
  local mloc = mpi.Allreduce({5, me}, mpi.MINLOC, comm)
  assert(mloc[1] == 5 and mloc[2] == 0, "minloc: lowest index among equals")
  local pre = 0
  for q = 0, me do pre = pre + v(q) end
  assert(mpi.Scan(v(me), mpi.SUM, comm) == pre)
  local ex = mpi.Exscan(v(me), mpi.SUM, comm)
  assert(ex == (me > 0 and pre - v(me) or nil), "exscan")
  local exa = mpi.Exscan(mp.array("f64", {me, 1}), mpi.MAX, comm)
  assert(me == 0 and exa == nil or (exa[1] == me - 1 and exa[2] == 1), "exscan of arrays")
  local exf = mpi.Exscan(tostring(me), function(a, b) return a .. b end, comm)
  assert(me == 0 or exf == want:sub(1, me), "exscan with a function")
  local g = mpi.Gather(me * 10, 0, comm)
  if me == 0 then for q = 1, n do assert(g[q] == (q - 1) * 10) end else assert(g == nil) end
  local ag = mpi.Allgather(me, comm)
  for q = 1, n do assert(ag[q] == q - 1) end
  local t
  if me == 0 then t = {}; for q = 1, n do t[q] = q * q end end
  assert(mpi.Scatter(t, 0, comm) == v(me) * v(me))
  local out = {}
  for q = 1, n do out[q] = me * 100 + q - 1 end
  local back = mpi.Alltoall(out, comm)
  for q = 1, n do assert(back[q] == (q - 1) * 100 + me) end
  -- Reduce_scatter_block: 2 elements per rank, tables and arrays
  local blocks, arr = {}, mp.array("i64", 2 * n)
  for i = 1, 2 * n do blocks[i] = i; arr[i] = i end
  local b = mpi.Reduce_scatter_block(blocks, mpi.SUM, comm)
  assert(#b == 2 and b[1] == (2 * me + 1) * n and b[2] == (2 * me + 2) * n, "rsb")
  local ba = mpi.Reduce_scatter_block(arr, mpi.SUM, comm)
  assert(#ba == 2 and ba[1] == (2 * me + 1) * n and ba.dtype == "i64", "rsb arrays")
  return true
end

assert(mp.exec(function()
  check(nil)
  check(mp.mpi.COMM_WORLD)
  local half = mp.mpi.Comm_split(mp.world, mp.rank % 2, -mp.rank) -- reversed order
  assert(half:ranks()[1] >= half:ranks()[half.size])
  check(half)
  assert(mp.mpi.Comm_split(mp.world, mp.mpi.UNDEFINED) == nil)
  check(mp.mpi.Comm_dup())
  return true
end))
print("mpi_coll ok", mp.size)
