# ranks: 1 3 4
# SPDX-License-Identifier: MIT
# The spectral example (scripts/examples/taylor_green.lua), small: every rank's block is
# what the serial run gives (the script asserts it to 1e-12), the energy is conserved
# without viscosity and decays with it, and the printed energies and enstrophies are the
# same at N ranks as at one (to 12 digits).
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
ex="$MPLUA_TEST_DIR/../scripts/examples/taylor_green.lua"
steps() { awk '/^step / { printf "%s %.12f %.10f\n", $2, $7, $NF }'; } # to round-off
for nu in 0 0.05; do
  "$MPIEXEC" -n 1 "$MPLUA" "$ex" 16 4 0.02 "$nu" >one.out 2>err || { cat err >&2; echo "FAIL: 1 rank" >&2; exit 1; }
  "$MPIEXEC" -n "$N" "$MPLUA" "$ex" 16 4 0.02 "$nu" >par.out 2>err || { cat err >&2; echo "FAIL ($N): nu $nu" >&2; exit 1; }
  grep -q '^max |parallel - serial| / max |u| = ' par.out || { echo "FAIL ($N): no check line" >&2; exit 1; }
  [ "$(grep -c '^step ' par.out)" = 5 ] || { echo "FAIL ($N): not 5 step lines" >&2; cat par.out >&2; exit 1; }
  steps <one.out >want
  steps <par.out >got
  cmp -s want got || { echo "FAIL ($N): nu $nu: energies differ from 1 rank's" >&2; diff want got >&2 || true; exit 1; }
  e0=$(awk '/^step   0/ {print $7}' par.out)
  e4=$(awk '/^step   4/ {print $7}' par.out)
  if [ "$nu" = 0 ]; then
    awk -v a="$e0" -v b="$e4" 'BEGIN { d = (b - a) / a; exit !(d < 1e-12 && d > -1e-12) }' ||
      { echo "FAIL ($N): energy not conserved: $e0 -> $e4" >&2; exit 1; }
  else
    awk -v a="$e0" -v b="$e4" 'BEGIN { exit !(b < a * 0.999) }' ||
      { echo "FAIL ($N): energy did not decay: $e0 -> $e4" >&2; exit 1; }
  fi
done
echo "example_taylor_green ok"
