# ranks: 2
# SPDX-License-Identifier: MIT
# The front end (mplua -n N) without a terminal: it starts the job through
# MPLUA_LAUNCHER and relays it, so a piped session reads like a transcript
# (prompts, results and errors in order, on stdout); exit statuses, scripts
# and their arguments pass through; it ends when the job dies and the job
# ends when it dies. No sleeps: each step waits for what it expects, with a
# generous bound as a guard only.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
export MPLUA_LAUNCHER="$MPIEXEC -n"
front() { "$MPLUA" -n "$N" "$@"; }
fail() { echo "FAIL ($N): $*" >&2; exit 1; }

# wait_until DESC CMD...: poll CMD (a tenth of a second apart; 120 s at
# most, a guard only)
wait_until() {
  local desc=$1 end=$((SECONDS + 120))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || fail "timed out waiting for $desc"
    sleep 0.1
  done
}

# a session: the same transcript as the prompt's own under mpiexec
printf '%s\n' '1 + 1' 'error("boom")' 'for i = 1, 2 do' '  print(i)' 'end' \
  'mp.exec(function() return mp.rank end)' 'line = io.read()' 'typed for io.read' 'line' >in
status=0
front <in >out 2>err || status=$?
[ "$status" = 0 ] || { cat out err; fail "session: exit status $status"; }
grep -v -e '^stack traceback:' -e "$(printf '^\t')" out >got || true
printf '%s\n' '> 2' '> stdin:1: boom' '> >> >> 1' '2' '> 0' '> > typed for io.read' '> ' >want
cmp -s want got || { diff want got >&2 || true; fail "session transcript"; }
[ ! -s err ] || { cat err >&2; fail "session: unexpected stderr"; }

# exit statuses and scripts with arguments
printf 'os.exit(3)\n' >in
front <in >out 2>&1 && status=0 || status=$?
[ "$status" = 3 ] || fail "os.exit(3) at the prompt gave $status"
printf 'print(mp.size, ...)\n' >args.lua
front args.lua a 'b c' </dev/null >out 2>&1 || fail "script: exit status $?"
[ "$(cat out)" = "$(printf '%s\t%s\t%s' "$N" a 'b c')" ] || { cat out >&2; fail "script arguments"; }
front -b -e 'mp.exec(function() if mp.rank == 1 then error("batch fault") end end)' \
  </dev/null >out 2>&1 && status=0 || status=$?
[ "$status" = 1 ] || fail "-b fault gave $status"
grep -q "batch fault" out || { cat out >&2; fail "-b fault not reported"; }

# a launcher that cannot run: its status, and why
MPLUA_LAUNCHER=/nonexistent/launcher front -e 'print(1)' </dev/null >out 2>&1 && status=0 || status=$?
[ "$status" = 127 ] || fail "missing launcher gave $status"
grep -q "cannot run '/nonexistent/launcher'" out || { cat out >&2; fail "missing launcher not reported"; }

# The front end killed: the job ends too (nothing left running).
tag="front_kill_$$"
mkfifo fifo
"$MPLUA" -n "$N" -e "TAG = '$tag'" -i <fifo >out 2>&1 &
fpid=$!
exec 3>fifo
printf '%s\n' 'mp.exec(function() if mp.rank == 1 then print("spin" .. "ning") end while true do end end)' >&3
wait_until "the task to spin" grep -q spinning out
kill -9 "$fpid"
wait "$fpid" 2>/dev/null || true
exec 3>&-
gone() { ! pgrep -f -- "$tag" >/dev/null; }
wait_until "the job to end after its front end" gone

# The job killed: the front end ends with a failure status, never hangs.
"$MPLUA" -n "$N" -e "TAG = '$tag'" -i <fifo >out 2>&1 &
fpid=$!
exec 3>fifo
printf '%s\n' 'mp.exec(function() if mp.rank == 1 then print("pid " .. io.open("/proc/self/stat"):read("a"):match("^(%d+)") .. " .") end end)' >&3
wait_until "rank 1 to say its pid" grep -q ' \.$' out
kill -9 "$(sed -n 's/.*pid \([0-9]*\) \.$/\1/p' out)"
ended() { ! kill -0 "$fpid" 2>/dev/null; }
wait_until "the front end to end after its job" ended
status=0
wait "$fpid" || status=$?
exec 3>&-
[ "$status" != 0 ] || fail "the job was killed, yet the front end's status is 0"
wait_until "the job's processes to go" gone

# a reader that goes (| head -1) ends the job, as SIGPIPE ends lua: status
# 128 + 13, whether the job would have ended (a task that prints a lot) or
# not (one that prints forever)
status=$( (front -e 'mp.exec(function() for i = 1, 100000 do print(i) end end)'
           echo $? >st) | head -1 >/dev/null; cat st)
[ "$status" = 141 ] || fail "output to a closed pipe: status $status, not 141 (lua's)"
status=$( (timeout 120 "$MPLUA" -n "$N" -e 'mp.exec(function() while true do print(1) end end)'
           echo $? >st) | head -1 >/dev/null; cat st)
[ "$status" = 141 ] || fail "endless output to a closed pipe: status $status, not 141"
echo "ok"
