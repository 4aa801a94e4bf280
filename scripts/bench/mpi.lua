-- SPDX-License-Identifier: MIT
-- mp.mpi's point to point against mp.send/mp.recv and raw MPI_Send/MPI_Recv
-- in the same job, interleaved: round trips of one number, and of a 1 MiB
-- array. Run: mpiexec -n 2 build/mpbench scripts/bench/mpi.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
assert(mp.size >= 2, "run with at least 2 ranks")
local rounds = tonumber(arg and arg[1]) or 9
local N = 20000

-- n round trips of v with mpi.Send/mpi.Recv (tag 0), as C.pingpong does with mp's
local function mpi_pingpong(n, v)
  local mpi = mp.mpi
  mpi.Barrier()
  local t = mp.wtime()
  if mp.rank == 0 then
    for _ = 1, n do mpi.Send(v, 1, 0); mpi.Recv(1, 0) end
  elseif mp.rank == 1 then
    for _ = 1, n do mpi.Send((mpi.Recv(0, 0)), 0, 0) end
  end
  return (mp.wtime() - t) / n
end

local MiB = 1 << 20
local arr = mp.array("f64", MiB // 8)
local med = C.interleave(rounds, {
  {"raw_rt", function() return mp.exec(bench.pingpong, N, 8) end},
  {"mp_rt", function() return mp.exec(C.pingpong, N, 1.5) end},
  {"mpi_rt", function() return mp.exec(mpi_pingpong, N, 1.5) end},
  {"mp_big", function() return mp.exec(C.pingpong, 100, arr) end},
  {"mpi_big", function() return mp.exec(mpi_pingpong, 100, arr) end},
})
print(string.format("ranks %d, %d rounds (medians)", mp.size, rounds))
print(string.format("round trip, one number: mpi %s  mp %s  raw %s  mpi/mp %.2fx",
  C.us(med.mpi_rt), C.us(med.mp_rt), C.us(med.raw_rt), med.mpi_rt / med.mp_rt))
print(string.format("round trip, 1 MiB array: mpi %s  mp %s  mpi/mp %.2fx",
  C.us(med.mpi_big), C.us(med.mp_big), med.mpi_big / med.mp_big))
