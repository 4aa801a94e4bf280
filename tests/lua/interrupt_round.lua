-- ranks: 2 3  quick: 2
-- SPDX-License-Identifier: MIT
-- The one wait reads the interrupt flag once a round, before its condition,
-- and its abort check acts on what it read: a SIGINT that lands after the
-- read is the next round's, never raised out of a round that decided
-- without it. The test knob mp._agree_fault("noted") makes rank 0, as it
-- waits for the votes of an agreement, note a fault (as an MPI failure is)
-- and then raise SIGINT at itself, in that instant: the report is the
-- fault's, and the interrupt, which came as the task ended, does not reach
-- the next task.
local function body()
  if mp.rank == 0 then
    mp._agree_fault("noted")
  else
    mp.recv(0) -- rank 0 never sends: it waits for these ranks' votes
  end
  mp.mpi.Win_create(mp.array("f64", 1))
  return true
end

for i = 1, 3 do
  local ok, err = pcall(mp.exec, body)
  assert(not ok, "the fault was not reported")
  err = tostring(err)
  assert(err:find("rank 0/" .. mp.size .. " faulted", 1, true), err)
  assert(err:find("a fault injected in mp.mpi.Win_create", 1, true), err)
  assert(not err:find("interrupted!", 1, true), err)
  -- the next task runs to its end, and so does a loop of plain Lua here
  local t = mp.exec(function() local s = 0 for k = 1, 1e6 do s = s + k end return s end)
  assert(t == 500000500000, tostring(t))
end
print("ok")
