-- ranks: 3 4  quick: 3
-- SPDX-License-Identifier: MIT
-- mpi.Schedule(seed) in a task: the classic ANY_SOURCE race (rank 0 assumes
-- rank 1's message comes first) gives both outcomes over 20 seeds, and every
-- seed gives the same outcome each time it is replayed; a race-free scheme
-- gives one outcome for every seed; Schedule(nil) turns it off.
local function race(seed)
  local mpi = mp.mpi
  mpi.Schedule(seed)
  local me = mpi.Comm_rank()
  if me == 0 then
    local a = mpi.Recv(mpi.ANY_SOURCE, 0)
    local b = mpi.Recv(mpi.ANY_SOURCE, 0)
    return a .. b
  elseif me <= 2 then
    mpi.Send(tostring(me), 0, 0)
  end
end
local function norace(seed)
  local mpi = mp.mpi
  mpi.Schedule(seed)
  local me = mpi.Comm_rank()
  if me == 0 then return mpi.Recv(1, 0) .. mpi.Recv(2, 0) end
  if me <= 2 then mpi.Send(tostring(me), 0, 0) end
end

local outcome, seen = {}, {}
for seed = 1, 20 do
  outcome[seed] = mp.exec(race, seed)
  seen[outcome[seed]] = true
end
assert(seen["12"] and seen["21"], "the race was not found in 20 seeds")
for seed = 1, 20, 7 do
  for _ = 1, 5 do assert(mp.exec(race, seed) == outcome[seed], "seed " .. seed .. " replayed") end
end
for seed = 1, 20 do assert(mp.exec(norace, seed) == "12") end
local ok, err = pcall(mp.exec, function() mp.mpi.Schedule("x") end)
assert(not ok and err:find("bad argument #1 to 'mp.mpi.Schedule'"), err)
assert(mp.exec(race, nil) ~= nil) -- off again: timing decides
print("mpi_schedule ok", mp.size)
