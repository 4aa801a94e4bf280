-- SPDX-License-Identifier: MIT
-- The classic wildcard race (run at 3 ranks): rank 0 receives from
-- ANY_SOURCE and assumes rank 1's message comes before rank 2's. It usually
-- does on an idle machine; scripts/explore.lua finds the seeds where it
-- does not: mplua --explore 20 -n 3 scripts/examples/mpi_race.lua
print(mp.exec(function()
  local mpi = mp.mpi
  local me = mpi.Comm_rank()
  if me == 0 then
    local first = mpi.Recv(mpi.ANY_SOURCE, 0)
    local second = mpi.Recv(mpi.ANY_SOURCE, 0)
    return first .. " then " .. second
  elseif me <= 2 then
    mpi.Send("rank " .. me, 0, 0)
  end
end))
