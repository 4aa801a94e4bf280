# ranks: 2 4
# SPDX-License-Identifier: MIT
# A worker that dies ends the whole job with a report and a non-zero status,
# never a hang: killed by a signal (MPICH's launcher sees it and ends every
# rank; when it cannot see the death, rank 0 names the dead rank and ends the
# job), or calling os.exit inside a task (mplua ends the job).
set -eu
N=${1:?usage: $0 RANKS}
: "${MPLUA:?}" "${MPIEXEC:?}"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
cp "$here/lib/kill_last.lua" kill.lua
status=0
timeout 120 "$MPIEXEC" -n "$N" "$MPLUA" kill.lua >out 2>err || status=$?
if [ "$status" = 0 ] || [ "$status" = 124 ] || grep -q "not reached" out; then
  echo "FAIL (kill): status $status"; cat out err; exit 1
fi
grep -qi "terminat\|killed" err out || { echo "FAIL (kill): no report"; cat out err; exit 1; }
# the same death where the launcher cannot see it (a shell between it and
# the rank, which lives on): rank 0 finds the dead rank itself (it would wait
# for it forever), names it and ends the job
status=0
timeout 120 "$MPIEXEC" -n "$N" sh -c "\"$MPLUA\" kill.lua; sleep 300" >out 2>err || status=$?
if [ "$status" = 0 ] || [ "$status" = 124 ] || grep -q "not reached" out; then
  echo "FAIL (kill, unseen): status $status"; cat out err; exit 1
fi
grep -q "mplua: rank $((N - 1))/$N (pid [0-9]*) has died: killed by a signal, or it crashed; ending the job" err ||
  { echo "FAIL (kill, unseen): rank 0 does not name the dead rank"; cat out err; exit 1; }

cat >exit.lua <<'LUA'
mp.exec(function()
  if mp.rank == mp.size - 1 then os.exit(3) end
  mp.handin(1)
end)
print("not reached")
LUA
status=0
timeout 120 "$MPIEXEC" -n "$N" "$MPLUA" exit.lua >out 2>err || status=$?
if [ "$status" = 0 ] || [ "$status" = 124 ] || grep -q "not reached" out; then
  echo "FAIL (os.exit): status $status"; cat out err; exit 1
fi
grep -q "rank $((N - 1))/$N called os.exit(3) in a task: ending the job" err ||
  { echo "FAIL (os.exit): no report"; cat err; exit 1; }
echo "abort_death ok"
