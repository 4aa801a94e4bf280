# ranks: 2 4 8
# SPDX-License-Identifier: MIT
# Ordinary mistakes never hang silently: each ends its task with a report
# saying who waits for what and where, found exactly (every rank blocked or
# finished, nothing in flight), with no timeout set. In batch mode the job
# then ends with status 1 and the report (two kinds, and the watchdog); at the
# prompt the report is an mp.TaskError and the job goes on (every kind, in
# one job). The `timeout` around each run is a guard that turns a hang into
# a failure.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
last=$((N - 1))

# case DESC SCRIPT TEXT...: `mplua -b` of SCRIPT exits 1 and stderr holds
# every TEXT
case_() {
  local desc=$1 script=$2
  shift 2
  printf '%s\n' "$script" >job.lua
  status=0
  timeout 300 "$MPIEXEC" -n "$N" "$MPLUA" -b job.lua >out 2>err || status=$?
  if [ "$status" != 1 ]; then
    echo "FAIL ($N): $desc: exit status $status (want 1)" >&2
    cat out err >&2
    exit 1
  fi
  for t in "$@"; do err_has "$desc" "$t"; done
  ! grep -q 'not reached' out || { echo "FAIL ($N): $desc: went on" >&2; exit 1; }
}

case_ "a receive from a rank that has finished" \
  'mp.exec(function() if mp.rank == 1 then mp.recv(0) end end) print("not reached")' \
  "mp.recv: [rank 1/$N] would wait forever: rank 0 has finished the task (at job.lua:1)"

case_ "rank 0 waits in handin for a rank that waits on rank 0" \
  'mp.exec(function() if mp.rank == 1 then mp.recv(0) end return mp.handin(1) end)
print("not reached")' \
  "deadlock: rank 0 waits in mp.handin" "rank 1 waits in mp.recv from rank 0 at job.lua:1"

# every other mistake at the prompt, in one job: each ends its task with an
# mp.TaskError holding every TEXT, where `@` stands for the line of the case's
# one-line function, and the next task works
cat >job.lua <<'LUA'
local n, last = mp.size, mp.size - 1
local function case(desc, f, ...)
  local ok, e = pcall(mp.exec, f)
  if ok then error(desc .. ": the task did not fail", 0) end
  local line = "job.lua:" .. debug.getinfo(f, "S").linedefined
  for _, t in ipairs({...}) do
    t = t:gsub("@", line)
    if not tostring(e):find(t, 1, true) then
      error(("%s: no '%s' in: %s"):format(desc, t, tostring(e)), 0)
    end
  end
  assert(mp.exec(function() return mp.handin(1) end) == n, desc .. ": the next task")
  return e
end

case("a receive from anyone when everyone else is done",
  function() if mp.rank == mp.size - 1 then mp.recv() end end,
  ("[rank %d/%d] would wait forever:"):format(last, n), "finished the task (at @)")
case("a collective the root skips",
  function() if mp.rank ~= 0 then mp.bcast(1) end end,
  "mp.bcast", "rank 0 has finished the task", "@")
case("a reduction one rank skips",
  function() if mp.rank ~= mp.size - 1 then mp.allreduce(1, "sum") end end,
  "mp.allreduce", ("rank %d has finished the task"):format(last), "@")
case("a message sent to nobody's receive does not count as progress",
  function() if mp.rank == 1 then mp.send(0, "x") mp.recv(0) end end,
  ("mp.recv: [rank 1/%d] would wait forever: rank 0 has finished the task"):format(n))
-- either side may say it first: rank 1 meets rank 0's bcast, rank 0 (its
-- root check) meets rank 1's allreduce
do
  local ok, e = pcall(mp.exec, function() if mp.rank == 1 then mp.allreduce(1, "sum") else mp.bcast(1) end end)
  e = tostring(e)
  assert(not ok and (e:find(("mp.allreduce: [rank 1/%d] mismatched collectives: rank 0 called mp.bcast"):format(n), 1, true)
                     or e:find(("mp.bcast: [rank 0/%d] mismatched collectives: rank 1 called mp.allreduce"):format(n), 1, true)),
         "mismatched collectives: " .. e)
  assert(mp.exec(function() return mp.handin(1) end) == n, "mismatched collectives: the next task")
end
case("a barrier one rank skips",
  function() if mp.rank ~= mp.size - 1 then mp.barrier() end end,
  "mp.barrier", ("rank %d has finished the task"):format(last), "@")
case("a split one rank enters alone",
  function() if mp.rank == 1 then mp.world:split(0) end end,
  ("mp.Comm.split: [rank 1/%d] would wait forever:"):format(n), "finished the task (at @)")
case("a stray gather on the master's side",
  function() if mp.rank == 0 then mp.gather(1) else mp.send(0, 1) end end,
  ("mp.gather: [rank 0/%d] would wait forever:"):format(n), "finished the task (at @)")
if n >= 3 then
  case("a cycle of receives",
    function() if mp.rank > 0 then mp.recv(mp.rank % (mp.size - 1) + 1) end end,
    "deadlock: rank 0 has finished the task, rank 1 waits in mp.recv from rank 2 at @",
    ("rank %d waits in mp.recv from rank 1 at @"):format(last))
end
-- a receive inside a pool's work: the report names the work's line
local work = function(x) if mp.rank > 0 then mp.recv(0) end return x end
local ok, e = pcall(mp.pool, {sow = function(k) if k < 5 then return k end end, work = work,
                              self = false})
local at = "job.lua:" .. debug.getinfo(work, "S").linedefined
assert(not ok and tostring(e):find("mp.pool: ", 1, true) and tostring(e):find("wait", 1, true)
       and tostring(e):find("in mp.recv from rank 0 at " .. at, 1, true), tostring(e))
assert(mp.exec(function() return mp.handin(1) end) == n, "after the pool")
-- the report is an mp.TaskError with its fields
e = case("rank 0 waits in handin for a rank that waits on rank 0",
  function() if mp.rank == 1 then mp.recv(0) end return mp.handin(1) end,
  "deadlock: rank 0 waits in mp.handin", "rank 1 waits in mp.recv from rank 0 at @")
assert(getmetatable(e) == mp.TaskError and e.deadlock == true and e.rank == -1, "the fields")
assert(e.where[0]:find("^in mp.handin") and e.where[1]:find("^in mp.recv from rank 0 at job.lua:"),
       tostring(e.where[0]) .. " / " .. tostring(e.where[1]))
-- two roots: always an error naming both (the root check), never values kept
-- and messages dropped
ok, e = pcall(mp.exec, function() mp.bcast(1, mp.rank == 1 and 1 or 0) end)
assert(not ok and tostring(e):find("mp.bcast: %[rank %d+/%d+%] mismatched collectives: rank %d+ called it with root [01] %(here [01]%)"),
       "two roots: " .. tostring(e))
assert(mp.exec(function() return mp.handin(1) end) == n, "two roots: the next task")
print("mistakes ok")
LUA
status=0
timeout 300 "$MPIEXEC" -n "$N" "$MPLUA" job.lua >out 2>err || status=$?
if [ "$status" != 0 ] || ! grep -qx "mistakes ok" out; then
  echo "FAIL ($N): the mistakes at the prompt: exit status $status" >&2
  cat out err >&2
  exit 1
fi

# the watchdog: a rank spinning is running, not blocked; MPLUA_WATCHDOG says
# where everyone is, and with MPLUA_WATCHDOG_ABORT=1 ends the task
printf '%s\n' 'mp.exec(function() if mp.rank == 1 then while true do end end end)' \
  'print("not reached")' >job.lua
status=0
MPLUA_WATCHDOG=1 MPLUA_WATCHDOG_ABORT=1 timeout 300 "$MPIEXEC" -n "$N" "$MPLUA" -b job.lua \
  >out 2>err || status=$?
[ "$status" = 1 ] || { echo "FAIL ($N): watchdog abort: status $status" >&2; cat out err >&2; exit 1; }
err_has "the watchdog's report" "watchdog: waited"
err_has "the spinning rank's line" "rank 1: is running at job.lua:1"
