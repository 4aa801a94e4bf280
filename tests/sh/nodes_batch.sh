# ranks: 2 4 8  quick: none  labels: netns
# SPDX-License-Identifier: MIT
# Across two hosts (see lib/netns.bash), how jobs end: in batch mode (-b) a
# script that ends normally exits with status 0 (five times in a row: a rank
# that leaves without MPI_Finalize must tell the process manager, or Hydra
# takes its exit for a crash and kills the ranks a moment behind it, which
# happened in 8 runs of 10 at 8 ranks), and a fault on the remote
# host ends the job with status 1 and one report, neither hanging at exit
# (MPI_Finalize over UCX/TCP can hang: openucx/ucx#8738); a remote rank
# killed by a signal ends the job with hydra's report and a failing status
# (across hosts usually 255 with "EXIT CODE: 9" in the report; when the
# local proxy sees the end first, as on one host, the signal number, 9). Skipped (SKIPPED printed, status 77)
# where namespaces cannot be made.
set -eu
N=${1:?usage: $0 RANKS}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/netns.bash"
nodes_up

for _ in 1 2 3 4 5; do
  nodes_run -b -e 'print(mp.exec(function() return mp.allreduce(1, "sum") end))' </dev/null >out 2>err &
  nodes_wait_exit $! "$N" out || nodes_fail "-b, a normal end"
  [ "$status" = 0 ] && [ "$(cat out)" = "$N" ] || nodes_fail "-b, a normal end: want status 0 and '$N'"
done
echo "-b, normal end: status 0 (five runs)"

cat >fault.lua <<'LUA'
mp.exec(function()
  if mp.rank == mp.size - 1 then error("remote batch fault") end
  mp.handin(1)
end)
print("not reached")
LUA
nodes_run -b fault.lua </dev/null >out 2>err &
nodes_wait_exit $! "remote batch fault" err || nodes_fail "-b with a remote fault"
[ "$status" = 1 ] || nodes_fail "-b with a remote fault: want status 1"
! grep -q "not reached" out || nodes_fail "-b with a remote fault: the script went on"
[ "$(grep -c "remote batch fault" err)" = 1 ] || nodes_fail "-b with a remote fault: want one report"
grep -q "rank $((N - 1))/$N faulted" err || nodes_fail "-b with a remote fault: the report names the rank"
echo "-b, remote fault: status 1, one report"

cp "$here/lib/kill_last.lua" kill.lua
nodes_run kill.lua </dev/null >out 2>err &
nodes_wait_exit $! "BAD TERMINATION" out || nodes_fail "a remote rank killed"
! grep -q "not reached" out || nodes_fail "a remote rank killed: the script went on"
[ "$status" = 255 ] || [ "$status" = 9 ] ||
  nodes_fail "a remote rank killed: want status 255 or 9 (hydra, remote launcher)"
grep -q "EXIT CODE: 9" out || nodes_fail "a remote rank killed: hydra's report names signal 9"
echo "remote rank killed: status $status, hydra's report: BAD TERMINATION ... EXIT CODE: 9"
echo "nodes_batch ok"
