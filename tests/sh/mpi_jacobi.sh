# ranks: 4  quick: 4
# SPDX-License-Identifier: MIT
# The Jacobi prototype written with mp.mpi (scripts/examples/mpi_jacobi.lua)
# and its C translation (mpi_jacobi.c, built beside mplua) print the same
# residuals, bit for bit (C's %a), at N ranks.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
ex=$MPLUA_TEST_DIR/../scripts/examples
"$MPIEXEC" -n "$N" "$(dirname "$MPLUA")/mpi_jacobi" 64 50 >c.out
"$MPIEXEC" -n "$N" "$MPLUA" -b "$ex/mpi_jacobi.lua" 64 50 >lua.out
[ "$(wc -l <c.out)" = 5 ] || { echo "FAIL: the C printed $(wc -l <c.out) residuals, want 5"; exit 1; }
diff c.out lua.out || { echo "FAIL: the residuals differ"; exit 1; }
cat lua.out
echo "mpi_jacobi ok"
