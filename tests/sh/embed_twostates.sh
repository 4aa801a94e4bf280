# ranks: 1 2  quick: 1 2
# SPDX-License-Identifier: MIT
# Two states of the embedding API in one process (tests/embed/twostates.c):
# one is closed, the other goes on, and nothing the closed one's runtime
# left behind is taken for the live one's; each reports under its own
# program name. With 2 ranks both run on MPI, and a rank spinning in the
# live state is still reached by an abort.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
prog=$(dirname "$MPLUA")/tests/embed_twostates
if [ "$N" = 1 ]; then
  "$prog" >out 2>err || { cat out err >&2; echo "FAIL: embed_twostates" >&2; exit 1; }
  want="ok second state closed
ok first state goes on"
  want_err="alpha: from a
beta: from b
alpha: from a again"
else
  timeout 300 "$MPIEXEC" -n "$N" "$prog" mpi >out 2>err ||
    { cat out err >&2; echo "FAIL ($N): embed_twostates" >&2; exit 1; }
  want="ok second state closed
ok first state's spinning rank reached by an abort
ok first state closed"
  want_err="beta: from b
alpha: from a"
fi
[ "$(cat out)" = "$want" ] || { cat out err >&2; echo "FAIL ($N): embed_twostates: unexpected output" >&2; exit 1; }
[ "$(grep -E ': from ' err || true)" = "$want_err" ] || { cat out err >&2; echo "FAIL ($N): embed_twostates: each state reports under its own name" >&2; exit 1; }
echo "embed_twostates ($N): ok"
