-- SPDX-License-Identifier: MIT
-- mp.mpi's nonblocking collectives against raw MPI_Ibarrier/MPI_Iallreduce
-- (+ MPI_Wait) and against mp.mpi's blocking Barrier/Allreduce, in the same
-- job, interleaved: a barrier, an allreduce of one number, and of 1e5 f64.
-- Run: mpiexec -n N build/mpbench scripts/bench/mpi_icoll.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 9
local BIG = 100000

-- iters of start + Wait (nonblocking), or of the blocking call; n == 0: a barrier
local function mpi_loop(iters, n, nonblocking)
  local mpi = mp.mpi
  local v = n == 1 and 1.5 or n > 1 and mp.array("f64", n):fill(1) or nil
  mpi.Barrier()
  local t = mp.wtime()
  for _ = 1, iters do
    if n == 0 then
      if nonblocking then mpi.Wait(mpi.Ibarrier()) else mpi.Barrier() end
    elseif nonblocking then
      mpi.Wait(mpi.Iallreduce(v, mpi.SUM))
    else
      mpi.Allreduce(v, mpi.SUM)
    end
  end
  return (mp.wtime() - t) / iters
end

local small, big = 2000, 50
local med = C.interleave(rounds, {
  {"raw_bar", function() return mp.exec(bench.iallreduce, small, 0) end},
  {"ib", function() return mp.exec(mpi_loop, small, 0, true) end},
  {"b", function() return mp.exec(mpi_loop, small, 0, false) end},
  {"raw_1", function() return mp.exec(bench.iallreduce, small, 1) end},
  {"ia1", function() return mp.exec(mpi_loop, small, 1, true) end},
  {"a1", function() return mp.exec(mpi_loop, small, 1, false) end},
  {"raw_big", function() return mp.exec(bench.iallreduce, big, BIG) end},
  {"iabig", function() return mp.exec(mpi_loop, big, BIG, true) end},
  {"abig", function() return mp.exec(mpi_loop, big, BIG, false) end},
})
print(string.format("ranks %d, %d rounds (medians)", mp.size, rounds))
local function row(what, i, b, raw)
  print(string.format("%-22s I %s  blocking %s  raw MPI_I* %s  I/raw %.2fx  I/blocking %.2fx",
    what, C.us(i), C.us(b), C.us(raw), i / raw, i / b))
end
row("barrier", med.ib, med.b, med.raw_bar)
row("allreduce, 1 number", med.ia1, med.a1, med.raw_1)
row("allreduce, 1e5 f64", med.iabig, med.abig, med.raw_big)
