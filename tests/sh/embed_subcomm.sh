# ranks: 2 4
# SPDX-License-Identifier: MIT
# mplua on a sub-communicator of the host (the even ranks) while the odd
# ranks do their own MPI work (tests/embed/subcomm.c).
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
prog=$(dirname "$MPLUA")/tests/embed_subcomm
"$MPIEXEC" -n "$N" "$prog" >out 2>err || { cat out err >&2; echo "FAIL ($N): embed_subcomm" >&2; exit 1; }
grep -q "^ok mplua on the $(( (N + 1) / 2 )) even ranks" out || { cat out err >&2; echo "FAIL ($N): mplua side" >&2; exit 1; }
grep -q "^ok the odd ranks' own MPI work, undisturbed" out || { cat out err >&2; echo "FAIL ($N): odd side" >&2; exit 1; }
echo "ok ($N)"
