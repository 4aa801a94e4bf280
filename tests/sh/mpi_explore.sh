# ranks: 3  quick: none
# SPDX-License-Identifier: MIT
# The schedule explorer: the classic ANY_SOURCE race (scripts/examples/
# mpi_race.lua) is found within 20 seeds at 3 ranks, each outcome's seed
# reproduces it 5 times out of 5, and the race-free scheme gives one outcome
# for every seed.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/explore.bash"
ex=$MPLUA_TEST_DIR/../scripts/examples
explore=$MPLUA_TEST_DIR/../scripts/explore.lua
export MPLUA MPIEXEC

status=0
"$MPLUA" --nompi "$explore" -n "$N" -s 20 -x "$ex/mpi_race.lua" >race.out 2>&1 || status=$?
race_found "$status" race.out

"$MPLUA" --nompi "$explore" -n "$N" -s 20 "$ex/mpi_norace.lua" \
  >norace.out 2>&1 ||
  { cat norace.out; echo "FAIL: the race-free scheme differs between seeds"; exit 1; }
cat norace.out
grep -q "20 seeds: 1 outcome" norace.out || { echo "FAIL: want one outcome"; exit 1; }
grep -q "rank 1 then rank 2, total 30" norace.out || { echo "FAIL: wrong result"; exit 1; }
echo "mpi_explore ok"
