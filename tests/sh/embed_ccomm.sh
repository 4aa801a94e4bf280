# ranks: 2 3
# SPDX-License-Identifier: MIT
# An extension's communicator (mplua_comm) after an abort: a receive left
# pending on it before never matches a message sent after (tests/embed/ccomm.c).
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
prog=$(dirname "$MPLUA")/tests/embed_ccomm
timeout 300 "$MPIEXEC" -n "$N" "$prog" >out 2>err || { cat out err >&2; echo "FAIL ($N): embed_ccomm" >&2; exit 1; }
grep -q "^ok a receive left pending before an abort never matches after it" out || { cat out err >&2; echo "FAIL ($N)" >&2; exit 1; }
echo "ok ($N)"
