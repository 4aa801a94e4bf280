# ranks: 2 4
# SPDX-License-Identifier: MIT
# The README's example (scripts/examples/hlogreg.lua), small: the mapper and
# the inline model agree (the script asserts it), L-BFGS converges, NUTS
# runs, and the fit and the draws are the same, to the last printed digit,
# with the serial backend and at N ranks.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
ex="$MPLUA_TEST_DIR/../scripts/examples/hlogreg.lua"
args="6 150 60 3"
# the lines that do not hold timings
fit() { grep -E '^(L-BFGS: converged|  (truth|mode|post\. mean|posterior sd))' | sed 's/, [0-9.]* s;/;/'; }

"$MPLUA" --nompi "$ex" $args >serial.out 2>err || { echo "FAIL: --nompi" >&2; cat err >&2; exit 1; }
"$MPIEXEC" -n "$N" "$MPLUA" "$ex" $args >par.out 2>err || { echo "FAIL: $N ranks" >&2; cat err >&2; exit 1; }
fit <serial.out >want
fit <par.out >got
[ "$(wc -l <want)" = 5 ] || { echo "FAIL: unexpected output:" >&2; cat serial.out >&2; exit 1; }
grep -q '^NUTS: 60 draws' par.out || { echo "FAIL: no NUTS line" >&2; cat par.out >&2; exit 1; }
if ! cmp -s want got; then
  echo "FAIL: $N ranks fit differently from the serial backend" >&2
  diff want got >&2 || true
  exit 1
fi
echo "example_hlogreg ok"
