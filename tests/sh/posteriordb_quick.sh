# ranks: 2
# SPDX-License-Identifier: MIT
# A quick subset of the posteriordb acceptance run (scripts/posteriordb.sh
# runs all fifteen with 4 x 1000 draws): six posteriors with 4 chains of 300
# draws over the ranks, every parameter's mean and sd within |z| <= 4 of the
# reference draws and R-hat <= 1.05 (scripts/posteriordb/run.lua).
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
RUN="$MPLUA_TEST_DIR/../scripts/posteriordb/run.lua"
run "$RUN" --iter 300 --seed 3 eight_schools-eight_schools_noncentered earnings-logearn_interaction_z sblri-blr \
  arK-arK gp_pois_regr-gp_regr arma-arma11 >out 2>err || { echo "FAIL ($N): posteriordb subset" >&2; cat out err >&2; exit 1; }
cat out
grep -q "^6 of 6 posteriors pass" out || { echo "FAIL ($N): not all pass" >&2; exit 1; }
echo "posteriordb_quick ok"
