-- ranks: 1 2 3  quick: 2
-- SPDX-License-Identifier: MIT
-- A function that captures mp.mpi's functions as upvalues travels (to a task,
-- in a message) as one that captures mp does: mp.mpi's own functions go by
-- name and arrive as the receiving rank's, whatever state they hold (the
-- world communicator, the call table). A function a user puts into mp.mpi is
-- still copied: the other ranks need not have it.
local n = mp.size
local Allreduce, Bcast, MAXLOC = mp.mpi.Allreduce, mp.mpi.Bcast, mp.mpi.MAXLOC
local Comm_rank, SUM = mp.mpi.Comm_rank, mp.mpi.SUM

local function total(x) return Allreduce(x, SUM) end
assert(mp.exec(function() return total(Comm_rank() + 1) end) == n * (n + 1) // 2)

-- an op captured alone, and a collective called through the captured upvalue
local best = mp.exec(function()
  local r = Comm_rank()
  return Allreduce({10 * (r % 2), r}, MAXLOC)
end)
assert(best[1] == (n > 1 and 10 or 0) and best[2] == (n > 1 and 1 or 0), best[1] .. " " .. best[2])

-- in a message: rank 0 sends a closure over Bcast to every rank, which calls it
local got = mp.exec(function()
  local f
  if mp.rank == 0 then
    f = function(v) return Bcast(v, 0) end
    for r = 1, mp.size - 1 do mp.send(r, f) end
  else
    f = mp.recv(0)
  end
  return mp.allgather(f(mp.rank == 0 and "from 0" or nil))
end)
for r = 0, n - 1 do assert(got[r + 1] == "from 0", tostring(got[r + 1])) end

-- a user's function in mp.mpi (rank 0's only) is copied, not named
mp.mpi.user_twice = function(x) return 2 * x end
local twice = mp.mpi.user_twice
assert(mp.exec(function() return twice(21) end) == 42)
mp.mpi.user_twice = nil
print("ok")
