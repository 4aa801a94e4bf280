# ranks: 3  quick: none
# SPDX-License-Identifier: MIT
# mplua --explore N [-n RANKS] SCRIPT: the explorer on the command line
# (scripts/explore.lua compiled in) finds the classic ANY_SOURCE race of
# scripts/examples/mpi_race.lua within 20 seeds at 3 ranks, each outcome's
# seed replays it 5 times out of 5 (MPLUA_SCHEDULE=SEED), the script's own
# arguments pass through, and a bad command line is refused with a message.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
ex=$MPLUA_TEST_DIR/../scripts/examples
export MPIEXEC

status=0
"$MPLUA" --explore 20 -n "$N" "$ex/mpi_race.lua" >race.out 2>&1 || status=$?
cat race.out
[ "$status" = 1 ] || { echo "FAIL: --explore found no race (status $status)"; exit 1; }
grep -q "at $N ranks, 20 seeds: 2 outcomes" race.out || { echo "FAIL: want 2 outcomes"; exit 1; }
grep -q "first divergence, seed" race.out || { echo "FAIL: no divergence reported"; exit 1; }
for want in "rank 1 then rank 2" "rank 2 then rank 1"; do
  seed=$(grep -B1 "^  $want\$" race.out | sed -n 's/^outcome [0-9]*, seeds \([0-9]*\).*/\1/p')
  [ -n "$seed" ] || { echo "FAIL: no seed gave '$want'"; exit 1; }
  for _ in 1 2 3 4 5; do
    got=$(MPLUA_SCHEDULE=$seed "$MPIEXEC" -n "$N" "$MPLUA" -b "$ex/mpi_race.lua")
    [ "$got" = "$want" ] || { echo "FAIL: seed $seed gave '$got', want '$want'"; exit 1; }
  done
done

# the script's arguments reach it; one seed, one outcome, status 0
printf 'print(mp.exec(function(...) return select("#", ...) end, ...), ...)\n' >args.lua
"$MPLUA" --explore 1 -n 2 args.lua a "b c" >args.out 2>&1 ||
  { cat args.out; echo "FAIL: one seed must agree with itself"; exit 1; }
grep -q "^  2	a	b c\$" args.out || { cat args.out; echo "FAIL: arguments lost"; exit 1; }

for bad in "--explore" "--explore 0 args.lua" "--explore x args.lua" "--explore 3"; do
  status=0
  # shellcheck disable=SC2086 # the words are the command line
  "$MPLUA" $bad >bad.out 2>&1 || status=$?
  [ "$status" = 1 ] && grep -q "'--explore' needs a number of seeds" bad.out ||
    { cat bad.out; echo "FAIL: '$bad' was not refused (status $status)"; exit 1; }
done
echo "mpi_explore_cli ok"
