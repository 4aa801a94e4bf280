# ranks: 2 4 8
# Ordinary mistakes never hang silently: each is a batch job that ends with
# status 1 and a report saying who waits for what and where, found exactly
# (every rank blocked or finished, nothing in flight), with no timeout set.
# The `timeout` around each run is a guard that turns a hang into a failure.
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

case_ "a receive from anyone when everyone else is done" \
  'mp.exec(function() if mp.rank == mp.size - 1 then mp.recv() end end) print("not reached")' \
  "[rank $last/$N] would wait forever:" "finished the task (at job.lua:1)"

case_ "rank 0 waits in handin for a rank that waits on rank 0" \
  'mp.exec(function() if mp.rank == 1 then mp.recv(0) end return mp.handin(1) end)
print("not reached")' \
  "deadlock: rank 0 waits in mp.handin" "rank 1 waits in mp.recv from rank 0 at job.lua:1"

case_ "a collective the root skips" \
  'mp.exec(function() if mp.rank ~= 0 then mp.bcast(1) end end) print("not reached")' \
  "mp.bcast" "rank 0 has finished the task" "job.lua:1"

case_ "a reduction one rank skips" \
  'mp.exec(function() if mp.rank ~= mp.size - 1 then mp.allreduce(1, "sum") end end)
print("not reached")' \
  "mp.allreduce" "rank $last has finished the task" "job.lua:1"

case_ "a message sent to nobody's receive does not count as progress" \
  'mp.exec(function() if mp.rank == 1 then mp.send(0, "x") mp.recv(0) end end)
print("not reached")' \
  "mp.recv: [rank 1/$N] would wait forever: rank 0 has finished the task"

# either side may say it first: rank 1 meets rank 0's bcast, rank 0 (its
# root check) meets rank 1's allreduce
printf '%s\n' 'mp.exec(function() if mp.rank == 1 then mp.allreduce(1, "sum") else mp.bcast(1) end end)
print("not reached")' >job.lua
status=0
timeout 300 "$MPIEXEC" -n "$N" "$MPLUA" -b job.lua >out 2>err || status=$?
[ "$status" = 1 ] && ! grep -q 'not reached' out &&
  grep -qF -e "mp.allreduce: [rank 1/$N] mismatched collectives: rank 0 called mp.bcast" \
    -e "mp.bcast: [rank 0/$N] mismatched collectives: rank 1 called mp.allreduce" err ||
  { echo "FAIL ($N): mismatched collectives (status $status)" >&2; cat out err >&2; exit 1; }

# two roots: always an error naming both (the root check), never values
# kept and messages dropped
printf '%s\n' 'mp.exec(function() mp.bcast(1, mp.rank == 1 and 1 or 0) end) print("not reached")' >job.lua
status=0
timeout 300 "$MPIEXEC" -n "$N" "$MPLUA" -b job.lua >out 2>err || status=$?
[ "$status" = 1 ] && grep -qE 'mp.bcast: \[rank [0-9]+/[0-9]+\] mismatched collectives: rank [0-9]+ called it with root [01] \(here [01]\)' err ||
  { echo "FAIL ($N): two roots (status $status)" >&2; cat out err >&2; exit 1; }

case_ "a barrier one rank skips" \
  'mp.exec(function() if mp.rank ~= mp.size - 1 then mp.barrier() end end) print("not reached")' \
  "mp.barrier" "rank $last has finished the task" "job.lua:1"

case_ "a split one rank enters alone" \
  'mp.exec(function() if mp.rank == 1 then mp.world:split(0) end end) print("not reached")' \
  "mp.Comm.split: [rank 1/$N] would wait forever:" "finished the task (at job.lua:1)"

case_ "a receive inside a pool's work" \
  'mp.pool{sow = function(n) if n < 5 then return n end end,
         work = function(x) if mp.rank > 0 then mp.recv(0) end return x end, self = false}
print("not reached")' \
  "mp.pool: " "wait" "in mp.recv from rank 0 at job.lua:2"

case_ "a stray gather on the master's side" \
  'mp.exec(function() if mp.rank == 0 then mp.gather(1) else mp.send(0, 1) end end)
print("not reached")' \
  "mp.gather: [rank 0/$N] would wait forever:" "finished the task (at job.lua:1)"

if [ "$N" -ge 3 ]; then
  case_ "a cycle of receives" \
    'mp.exec(function() if mp.rank > 0 then mp.recv(mp.rank % (mp.size - 1) + 1) end end)
print("not reached")' \
    "deadlock: rank 0 has finished the task, rank 1 waits in mp.recv from rank 2 at job.lua:1" \
    "rank $last waits in mp.recv from rank 1 at job.lua:1"
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

# after a deadlock at the prompt the job goes on, and the report is an
# mp.TaskError with its fields
cat >in <<'LUA'
local ok, e = pcall(mp.exec, function() if mp.rank == 1 then mp.recv(0) end return mp.handin(1) end)
print(ok, getmetatable(e) == mp.TaskError, e.deadlock, e.rank, e.where[1])
print(e:match("deadlock") ~= nil)
print(mp.exec(function() return mp.handin(1) end))
LUA
check "recovery after a deadlock" 0 "false	true	true	-1	in mp.recv from rank 0 at stdin:1
true
$N
" -
