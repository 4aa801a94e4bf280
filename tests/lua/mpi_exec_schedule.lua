-- ranks: 3 4  quick: 3
-- SPDX-License-Identifier: MIT
-- mp.exec's option schedule: mp.exec{race, schedule = seed} finds the
-- classic ANY_SOURCE race (scripts/examples/mpi_race.lua's) within 20
-- seeds, each outcome's seed replays it 5 times out of 5, arguments and
-- chunks pass through, the scheduler is put back as it was after the task
-- (off here, or a seed set by mpi.Schedule), and bad options are errors.
local function race()
  local mpi = mp.mpi
  local three = mpi.Comm_split(mpi.COMM_WORLD, mp.rank < 3 and 0 or mpi.UNDEFINED)
  if not three then return end
  if mpi.Comm_rank(three) == 0 then -- assumes rank 1's message comes first
    return mpi.Recv(mpi.ANY_SOURCE, 0, three) .. " " .. mpi.Recv(mpi.ANY_SOURCE, 0, three)
  end
  mpi.Send(tostring(mpi.Comm_rank(three)), 0, 0, three)
end

local seen = {}
for seed = 1, 20 do
  seen[mp.exec{race, schedule = seed}] = seen[mp.exec{race, schedule = seed}] or seed
  if seen["1 2"] and seen["2 1"] then break end
end
assert(seen["1 2"] and seen["2 1"], "the race was not found in 20 seeds")
for outcome, seed in pairs(seen) do
  for _ = 1, 5 do
    assert(mp.exec{race, schedule = seed} == outcome, "seed " .. seed .. " did not replay")
  end
end

-- arguments and chunks; no option at all is a plain task
assert(mp.exec{function(a, b) return a + b, mp.mpi.Schedule() end, 1, 2, schedule = 7} == 3)
assert(select(2, mp.exec{function(a, b) return a + b, (mp.mpi.Schedule()) end, 1, 2,
                         schedule = 7}) == 7, "the seed is on inside the task")
assert(mp.exec{"return ... * 2", 21, schedule = 1} == 42)
assert(mp.exec{function(...) return select("#", ...) end, 1, nil, 3, n = 4} == 3)
-- put back after the task: off here...
assert(mp.exec(function() return (mp.mpi.Schedule()) end) == nil, "left on after the task")
-- ... or the seed an earlier task set, counting tasks from where it did
mp.exec(function() mp.mpi.Schedule(99) end)
mp.exec{race, schedule = 5}
assert(mp.exec(function() local s, from = mp.mpi.Schedule(); return s, from end) == 99)
-- and after a task that failed
local ok = pcall(mp.exec, {function() error("boom") end, schedule = 3})
assert(not ok and mp.exec(function() return (mp.mpi.Schedule()) end) == nil)

local function fails(pattern, ...)
  local ok2, err = pcall(mp.exec, ...)
  assert(not ok2 and tostring(err):find(pattern), tostring(err))
end
fails("bad argument #1 to 'mp.exec' %(%[rank 0/%d+%] unknown option 'seed' %(options: " ..
      "schedule%)%)", {race, seed = 3})
fails("bad argument #1 to 'mp.exec' %(%[rank 0/%d+%] schedule: an integer seed expected, got " ..
      "string%)", {race, schedule = "3"})
fails("bad argument #1 to 'mp.exec' %(%[rank 0/%d+%] a function or chunk expected at %[1%], " ..
      "got nil%)", {schedule = 3})
