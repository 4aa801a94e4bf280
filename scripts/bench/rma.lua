-- SPDX-License-Identifier: MIT
-- mp.mpi's one-sided Put + Fence of 1 MiB against raw MPI_Put +
-- MPI_Win_fence in the same job, interleaved: every rank puts into its right
-- neighbour's window; and Lock + Put + Unlock (exclusive, on the right
-- neighbour: mplua grants the lock, MPI_Win_lock in the raw kernel) of 8 B
-- and 1 MiB. Run: mpiexec -n 2 build/mpbench scripts/bench/rma.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 9
local N, MiB = 200, 1 << 20

local function putfence(n, bytes)
  local mpi = mp.mpi
  local a, src = mp.array("f64", bytes // 8), mp.array("f64", bytes // 8)
  local win = mpi.Win_create(a)
  local right = (mp.rank + 1) % mp.size
  win:Fence()
  mpi.Barrier()
  local t = mp.wtime()
  for _ = 1, n do
    win:Put(src, right, 0)
    win:Fence()
  end
  return (mp.wtime() - t) / n
end

local function lockput(n, bytes)
  local mpi = mp.mpi
  local a, src = mp.array("f64", bytes // 8), mp.array("f64", bytes // 8)
  local win = mpi.Win_create(a)
  local right = (mp.rank + 1) % mp.size
  mpi.Barrier()
  local t = mp.wtime()
  for _ = 1, n do
    win:Lock(right, "exclusive")
    win:Put(src, right, 0)
    win:Unlock(right)
  end
  t = (mp.wtime() - t) / n
  mpi.Barrier()
  return t
end

local med = C.interleave(rounds, {
  {"raw", function() return mp.exec(bench.putfence, N, MiB) end},
  {"mpi", function() return mp.exec(putfence, N, MiB) end},
  {"lraw", function() return mp.exec(bench.lockput, N, 8) end},
  {"lmpi", function() return mp.exec(lockput, N, 8) end},
  {"Lraw", function() return mp.exec(bench.lockput, N, MiB) end},
  {"Lmpi", function() return mp.exec(lockput, N, MiB) end},
})
print(string.format("ranks %d, %d rounds (medians)", mp.size, rounds))
print(string.format("Put + Fence, 1 MiB: mpi %s  raw %s  raw/mpi %.2f (goal >= 0.8)",
  C.us(med.mpi), C.us(med.raw), med.raw / med.mpi))
print(string.format("Lock + Put + Unlock, 8 B: mpi %s  raw %s  raw/mpi %.2f",
  C.us(med.lmpi), C.us(med.lraw), med.lraw / med.lmpi))
print(string.format("Lock + Put + Unlock, 1 MiB: mpi %s  raw %s  raw/mpi %.2f",
  C.us(med.Lmpi), C.us(med.Lraw), med.Lraw / med.Lmpi))
