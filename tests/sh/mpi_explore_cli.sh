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
. "$(dirname "$0")/lib/explore.bash"
ex=$MPLUA_TEST_DIR/../scripts/examples
export MPIEXEC

status=0
"$MPLUA" --explore 20 -n "$N" "$ex/mpi_race.lua" >race.out 2>&1 || status=$?
race_found "$status" race.out
grep -q "at $N ranks, 20 seeds" race.out || { echo "FAIL: not at $N ranks, 20 seeds"; exit 1; }

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
