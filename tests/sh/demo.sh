# ranks: 4
# The README's first command: scripts/demo.lua at 4 ranks prints its four
# parts and exits 0, and under -b (batch: any fault ends the job) it says so
# instead of part 4 and still exits 0; mp.batch tells the two apart.
set -eu
N=${1:?usage: $0 ranks}
demo=$(cd "$(dirname "$0")/../.." && pwd)/scripts/demo.lua
. "$(dirname "$0")/lib/common.bash"
fail() { echo "FAIL ($N): $*" >&2; cat out err >&2; exit 1; }

status=0
run "$demo" >out 2>err || status=$?
[ "$status" = 0 ] || fail "the demo exited $status"
grep -qx "mp.exec ->	rank 0 of $N" out || fail "part 1"
grep -qx "ring: sum of the ranks whose tokens went round =	$((N * (N - 1) / 2))" out || fail "part 2"
grep -q "^sum of i^2 for i = 1..1000000: 333333833333500000 (expected 333333833333500000)$" out ||
  fail "part 3"
grep -qx "a fault, caught:	false" out || fail "part 4: the fault"
grep -q "rank $((N - 1))/$N faulted: .*demo.lua:[0-9]*: something went wrong here" out ||
  fail "part 4: the report"
grep -qx "and the next task works:	$N	ranks answered" out || fail "part 4: the recovery"

status=0
run -b "$demo" >out 2>err || status=$?
[ "$status" = 0 ] || fail "the demo under -b exited $status"
grep -q "^sum of i^2" out || fail "-b: part 3"
grep -q "^batch mode (-b): a fault would end the job" out || fail "-b: the batch line"
! grep -q "a fault, caught" out || fail "-b: part 4 ran"

[ "$(run -e 'print(mp.batch)')" = false ] || fail "mp.batch without -b"
[ "$(run -b -e 'print(mp.batch, mp.exec(function() return mp.batch end))')" = "true	true" ] ||
  fail "mp.batch under -b (rank 0 and the workers)"
echo "demo ok"
