# ranks: 3
# SPDX-License-Identifier: MIT
# Ctrl-C at rank 0 stops the task everywhere, even when rank 0's part of it
# spins inside its own pcall (lua's "interrupted!" would be caught there):
# the task fails as interrupted, the pcall around mp.exec sees it, and the
# next task runs on every rank.
set -eu
N=${1:?usage: $0 ranks}
. "$(dirname "$0")/lib/common.bash"
fail() { echo "FAIL ($N): $*" >&2; cat out err >&2; exit 1; }

cat >job.lua <<LUA
local ok, e = pcall(mp.exec, function()
  if mp.rank == 0 then
    io.open("$tmp/ready", "w"):close()
    print("inner", pcall(function() while true do end end))
  end
  return mp.handin(1)
end)
print("caught", ok, tostring(e):match("interrupted!") ~= nil)
print("sum", mp.exec(function() return mp.handin(1) end))
LUA
"$MPIEXEC" -n "$N" "$MPLUA" job.lua >out 2>err &
job=$!
# rank 0 is spinning once the file exists (a bounded poll, not a sleep for
# synchronization: the file says it)
for _ in $(seq 1200); do [ -e "$tmp/ready" ] && break; sleep 0.1; done
[ -e "$tmp/ready" ] || fail "the task never started"
lead=""
for p in $(pgrep -f "$MPLUA job.lua" || true); do
  if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx 'PMI_RANK=0'; then lead=$p; fi
done
[ -n "$lead" ] || fail "no rank 0 process"
kill -INT "$lead"
status=0
wait "$job" || status=$?
[ "$status" = 0 ] || fail "exit status $status"
! grep -q '^inner' out || fail "the inner pcall swallowed the interrupt"
grep -qx 'caught	false	true' out || fail "the task did not fail as interrupted"
grep -qx "sum	$N" out || fail "the next task did not run on every rank"
echo ok
