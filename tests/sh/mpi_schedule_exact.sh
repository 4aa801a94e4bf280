# ranks: 3 4 5 8  quick: 3
# SPDX-License-Identifier: MIT
# The schedule explorer decides without a patience: with MPLUA_SCHEDULE_WAIT
# at a day, a wildcard receive whose other candidates can never come still
# goes on (every other rank is blocked, paused or finished: rank 0 lets the
# pause go), so the classic race, a race between two receivers that pause
# at once and feed each other, and a deadlock behind a pause all end, and
# each seed replays its outcome. A rank that polls (Iprobe) is waited for
# only the patience, here short. `timeout` turns a hang into a failure.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
cat >job.lua <<'LUA'
local n = mp.size
local function race() -- rank 0 assumes rank 1's message comes first
  local mpi = mp.mpi
  local me = mpi.Comm_rank()
  if me == 0 then
    local s = ""
    for _ = 1, n - 1 do s = s .. mpi.Recv(mpi.ANY_SOURCE, 0) end
    return s
  end
  for _ = 1, me * 20000 do end -- later ranks come later, unless the seed says otherwise
  mpi.Send(tostring(me), 0, 0)
end
local function two() -- ranks 0 and 1 both pause; rank 1 passes what it takes first to 0
  local mpi = mp.mpi
  local me = mpi.Comm_rank()
  if me >= 2 then
    mpi.Send(me, 0, 1)
    mpi.Send(me, 1, 1)
    return
  end
  local got = {}
  for k = 1, n - 2 + (1 - me) do
    local v = mpi.Recv(mpi.ANY_SOURCE, 1)
    got[#got + 1] = v
    if me == 1 and k == 1 then mpi.Send(100 + v, 0, 1) end
  end
  return table.concat(got, ",")
end
local function outcomes(f, name)
  local seen, first, count = {}, {}, 0 -- seen[outcome]: its first seed
  for seed = 1, 20 do
    local a, b = mp.exec{f, schedule = seed}
    local o = tostring(a) .. "|" .. tostring(b)
    if not seen[o] then seen[o], first[#first + 1], count = seed, o, count + 1 end
  end
  for _, o in ipairs(first) do
    for _ = 1, 5 do
      local a, b = mp.exec{f, schedule = seen[o]}
      assert(tostring(a) .. "|" .. tostring(b) == o, name .. ": seed " .. seen[o] .. " did not replay")
    end
  end
  return count
end
local count = outcomes(race, "race")
assert(count >= 2, "race: want several outcomes")
print("race", count >= 2)
count = outcomes(two, "two")
assert(count >= 2, "two: want several outcomes")
print("two", count >= 2)
-- a deadlock behind a pause is still found: rank 0 takes rank 1's message,
-- then waits for one that never comes
local ok, err = pcall(mp.exec, {function()
  local mpi = mp.mpi
  if mp.rank == 0 then
    mpi.Recv(mpi.ANY_SOURCE, 0)
    mpi.Recv(mpi.ANY_SOURCE, 0)
  elseif mp.rank == 1 then
    mpi.Send(1, 0, 0)
  else
    mpi.Recv(0, 9)
  end
end, schedule = 1})
assert(not ok and tostring(err):find("deadlock: rank 0 waits in mpi.Recv(ANY_SOURCE, tag 0)", 1, true), tostring(err))
print("deadlock found")
LUA
MPLUA_SCHEDULE_WAIT=86400 timeout 240 "$MPIEXEC" -n "$N" "$MPLUA" job.lua >out 2>&1 ||
  { cat out; echo "FAIL: the explorer waited out its patience (or failed)"; exit 1; }
cat out
printf 'race\ttrue\ntwo\ttrue\ndeadlock found\n' >want
cmp -s want out || { echo "FAIL: unexpected output"; exit 1; }

# a rank that polls runs: the patience ends the wait on it
cat >poll.lua <<'LUA'
print(mp.exec{function()
  local mpi = mp.mpi
  if mp.rank == 0 then
    local v = mpi.Recv(mpi.ANY_SOURCE, 0)
    mpi.Send("ack", 1, 0)
    return v
  elseif mp.rank == 1 then
    mpi.Send("polling", 0, 0)
    while not mpi.Iprobe(0, 0) do end
    mpi.Recv(0, 0)
  end
end, schedule = 3})
LUA
MPLUA_SCHEDULE_WAIT=0.05 timeout 120 "$MPIEXEC" -n "$N" "$MPLUA" poll.lua >out 2>&1 ||
  { cat out; echo "FAIL: the poll"; exit 1; }
[ "$(cat out)" = polling ] || { cat out; echo "FAIL: want 'polling'"; exit 1; }
echo "mpi_schedule_exact ok"
