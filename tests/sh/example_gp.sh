# ranks: 2
# SPDX-License-Identifier: MIT
# The GP example (scripts/examples/gp_pois.lua), small: it runs, prints a
# stansummary table with every parameter, and the table (timings aside) is
# the same with the serial backend and at N ranks.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
ex="$MPLUA_TEST_DIR/../scripts/examples/gp_pois.lua"
table() { grep -vE 'took|^4 chains on' ; }

"$MPLUA" --nompi "$ex" 40 3 >serial.out 2>err || { echo "FAIL: --nompi" >&2; cat err >&2; exit 1; }
"$MPIEXEC" -n "$N" "$MPLUA" "$ex" 40 3 >par.out 2>err || { echo "FAIL: $N ranks" >&2; cat err >&2; exit 1; }
for name in lp__ divergent__ rho alpha 'f_tilde\[11\]' R_hat; do
  grep -q "^$name\|$name" serial.out || { echo "FAIL: no $name in the summary" >&2; cat serial.out >&2; exit 1; }
done
table <serial.out >want
table <par.out >got
if ! cmp -s want got; then
  echo "FAIL: $N ranks summarize differently from the serial backend" >&2
  diff want got >&2 || true
  exit 1
fi
echo "example_gp ok"
