# ranks: 3
# SPDX-License-Identifier: MIT
# Signals at the edges of a run:
# - SIGINT sent to the workers at random moments of their start-up never
#   kills one (they ignore it from the first moment they know their rank,
#   before MPI_Init; hydra forwards Ctrl-C to every rank);
# - a debug hook the user set survives tasks in which the poll timer fired;
# - a --nompi run stuck in a C call dies on the second SIGINT, as lua does.
set -eu
N=${1:?usage: $0 ranks}
. "$(dirname "$0")/lib/common.bash"
fail() { echo "FAIL ($N): $*" >&2; exit 1; }

# the workers of a job started in the background: pids with PMI_RANK != 0
# (one pgrep and one grep per look: under load, a look that forks per
# process took longer than a whole job)
workers() {
  local p f=""
  for p in $(pgrep -f "$MPLUA -e" || true); do f="$f /proc/$p/environ"; done
  [ -n "$f" ] || return 0
  # shellcheck disable=SC2086
  grep -lzE '^PMI_RANK=[1-9]' $f 2>/dev/null | sed 's|^/proc/||; s|/environ$||' || true
}

# Whether every worker in $w ignores SIGINT (bit 2 of SigIgn in
# /proc/PID/status; a worker gone counts as ignoring). A worker that runs
# more than one thread (MPI_Init has started UCX's) and still takes SIGINT
# fails the test: the ignore must come before MPI_Init.
all_ignore() {
  local p k v ign thr
  for p in $w; do
    ign="" thr=""
    while read -r k v; do
      case $k in SigIgn:) ign=$v ;; Threads:) thr=$v ;; esac
    done <"/proc/$p/status" 2>/dev/null || continue
    [ -n "$ign" ] && [ -n "$thr" ] || continue
    [ $((0x$ign & 2)) != 0 ] && continue
    [ "$thr" -le 1 ] || fail "worker $p runs $thr threads and still takes SIGINT"
    return 1
  done
}

# 1. SIGINT during start-up: 20 runs whose workers were signalled, the
# signal sent 0-40 ms after the workers ignore it (a deliberate race with
# the rest of their start-up, not a synchronization). Before that moment a
# worker is the dynamic loader still (a millisecond or two, more under
# load): no program can ignore a signal before its own code runs, so a
# signal there would test the launcher's race, not mplua. A job may start
# and end between two looks for its workers: that run signals nothing and
# does not count (at most 150 runs).
signalled=0
for k in $(seq 150); do
  "$MPIEXEC" -n "$N" "$MPLUA" -e 'print("sum", mp.exec(function() return mp.handin(1) end))' \
    >out 2>err &
  job=$!
  w=""
  for _ in $(seq 2000); do
    w=$(workers)
    [ -n "$w" ] && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.005
  done
  for _ in $(seq 2000); do
    [ -z "$w" ] || all_ignore && break
    sleep 0.001
  done
  sleep "0.0$((RANDOM % 5))"
  for p in $w; do kill -INT "$p" 2>/dev/null || true; done
  status=0
  wait "$job" || status=$?
  if [ "$status" != 0 ] || ! grep -qx "sum	$N" out; then
    echo "run $k: status $status" >&2; cat out err >&2
    fail "a SIGINT during start-up killed a worker"
  fi
  [ -z "$w" ] || signalled=$((signalled + 1))
  [ "$signalled" -lt 20 ] || break
done
[ "$signalled" -ge 20 ] || fail "only $signalled of 150 runs had workers to signal"

# 2. a user's debug hook survives tasks (the poll timer fires every 5 ms)
cat >hook.lua <<'LUA'
local count = 0
local function user(ev) count = count + 1 end
mp.exec(function()
  local n = 0
  local function h() n = n + 1 end
  debug.sethook(h, "l")
  local x = 0
  for i = 1, 3e6 do x = x + i end -- long enough for many timer ticks
  assert(debug.gethook() == h, "rank " .. mp.rank .. ": the task removed the user's hook")
  debug.sethook()
  assert(n > 1000, "the user's hook stopped counting lines")
end)
debug.sethook(user, "l")
mp.exec(function() local x = 0 for i = 1, 3e6 do x = x + i end end)
assert(debug.gethook() == user, "rank 0: the task removed the user's hook")
local before = count
local y = 0
for i = 1, 10 do y = y + i end
debug.sethook()
assert(count > before, "the user's hook no longer runs")
print("hooks ok")
LUA
MPLUA_POLL_MS=5 "$MPIEXEC" -n "$N" "$MPLUA" hook.lua >out 2>err || { cat out err >&2; fail "debug hooks"; }
grep -qx "hooks ok" out || fail "debug hooks: $(cat out err)"

# 3. --nompi stuck in a C call (a read of a pipe nobody writes to): the
# first SIGINT is noted, the second ends the process as lua's does
mkfifo fifo
exec 3<>fifo # keep it open: the read blocks
"$MPLUA" --nompi -e 'print("ready"); io.stdout:flush(); io.read()' <fifo >out 2>err &
pid=$!
for _ in $(seq 2000); do grep -q ready out && break; sleep 0.005; done
grep -q ready out || fail "--nompi did not start"
# SIGINT caught by pid (bit 2 of SigCgt in /proc/PID/status)
catches_int() { [ $((0x$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status") & 2)) != 0 ]; }
catches_int "$pid" || fail "--nompi does not catch SIGINT"
kill -INT "$pid"
# the first SIGINT has been taken once the default action is back (two
# signals sent back to back would merge into one while pending)
for _ in $(seq 2000); do catches_int "$pid" 2>/dev/null || break; sleep 0.005; done
kill -0 "$pid" 2>/dev/null || fail "the first SIGINT ended the process (it should only interrupt)"
catches_int "$pid" && fail "the first SIGINT did not restore the default action"
kill -INT "$pid"
for _ in $(seq 2000); do kill -0 "$pid" 2>/dev/null || break; sleep 0.005; done
kill -0 "$pid" 2>/dev/null && { kill -9 "$pid"; fail "a second SIGINT did not end a run stuck in a C call"; }
status=0
wait "$pid" || status=$?
exec 3>&-
[ "$status" = 130 ] || fail "after two SIGINTs the stuck run exited with $status (want 130: killed by SIGINT)"
echo "signals ok"
