# ranks: 4
# The README's first command runs the demo (scripts/demo.sh, here without its
# set-up and build): it must end with status 0 after showing a fault, the
# report rank 0 gets, and the next task working.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
status=0
"$MPLUA_TEST_DIR/../scripts/demo.sh" "$MPLUA" >out 2>err || status=$?
[ "$status" = 0 ] || { echo "FAIL: scripts/demo.sh exit status $status" >&2; cat out err >&2; exit 1; }
in_order "the demo's story" out "mplua demo: 4 ranks" "mp.exec ->" "ring: " "sum of i^2" \
  "a fault, caught:	false" "  mp.exec: rank 3/4 faulted: " "and the next task works:	4	ranks answered"
grep -q "something went wrong here" out || { echo "FAIL: the report lacks the fault" >&2; cat out >&2; exit 1; }
echo "ok"
