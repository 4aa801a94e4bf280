-- SPDX-License-Identifier: MIT
-- A one-sided histogram: every rank counts its values into 10 bins and adds
-- its counts into rank 0's window with Accumulate (mp.mpi, MPI_Accumulate).
-- Run: mpiexec -n 4 mplua scripts/examples/mpi_histogram.lua
local counts = mp.exec(function()
  local mpi = mp.mpi
  local bins = mp.array("i64", 10)
  local win = mpi.Win_create(bins)
  local mine = mp.array("i64", 10)
  for i = mp.rank, 9999, mp.size do -- this rank's share of the data
    local x = (i * 7919) % 1000 / 1000 -- in [0, 1)
    local b = math.floor(x * 10) + 1
    mine[b] = mine[b] + 1
  end
  win:Fence()
  win:Accumulate(mine, 0, 0, mpi.SUM)
  win:Fence()
  if mp.rank == 0 then
    local t = {}
    for b = 1, 10 do t[b] = bins[b] end
    return t
  end
end)
local total = 0
for b = 1, 10 do
  print(string.format("[%.1f, %.1f) %d", (b - 1) / 10, b / 10, counts[b]))
  total = total + counts[b]
end
print("total", total)
