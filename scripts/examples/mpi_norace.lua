-- SPDX-License-Identifier: MIT
-- The race of mpi_race.lua fixed (run at 3 ranks): each receive names its
-- source, so every schedule gives the same result, and scripts/explore.lua
-- reports one outcome. Wildcards stay, but only where order cannot matter
-- (a sum).
print(mp.exec(function()
  local mpi = mp.mpi
  local me = mpi.Comm_rank()
  if me == 0 then
    local first = mpi.Recv(1, 0)
    local second = mpi.Recv(2, 0)
    local total = 0
    for _ = 1, 2 do total = total + mpi.Recv(mpi.ANY_SOURCE, 1) end
    return first .. " then " .. second .. ", total " .. total
  elseif me <= 2 then
    mpi.Send("rank " .. me, 0, 0)
    mpi.Send(me * 10, 0, 1)
  end
end))
