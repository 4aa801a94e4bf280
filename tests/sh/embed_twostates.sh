# ranks: 1  quick: 1
# SPDX-License-Identifier: MIT
# Two states of the embedding API in one process (tests/embed/twostates.c):
# one is closed, the other goes on, and nothing the closed one's runtime
# left behind is taken for the live one's.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
prog=$(dirname "$MPLUA")/tests/embed_twostates
"$prog" >out 2>err || { cat out err >&2; echo "FAIL: embed_twostates" >&2; exit 1; }
want="ok second state closed
ok first state goes on"
[ "$(cat out)" = "$want" ] || { cat out err >&2; echo "FAIL: embed_twostates: unexpected output" >&2; exit 1; }
echo "embed_twostates: ok"
