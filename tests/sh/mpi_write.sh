# ranks: 1 3 4 8  quick: 4
# SPDX-License-Identifier: MIT
# The MPI-IO example: scripts/examples/mpi_write.lua writes a distributed
# field at N ranks; the plain C reader (mpi_read.c, built beside mplua)
# checks every value and prints the same line (its sum to 3 decimals).
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
ex=$MPLUA_TEST_DIR/../scripts/examples
for size in "40 30" "7 5" "3 1"; do
  "$MPIEXEC" -n "$N" "$MPLUA" -b "$ex/mpi_write.lua" "$tmp/field.bin" $size >lua.out
  "$(dirname "$MPLUA")/mpi_read" "$tmp/field.bin" >c.out
  diff lua.out c.out || { echo "FAIL: $size: the C reader disagrees"; exit 1; }
  cat c.out
done
echo "mpi_write ok"
