# ranks: 1  quick: 1
# SPDX-License-Identifier: MIT
# SIGINT that another thread of the process takes is passed on to the thread
# running rank 0's state (tests/embed/sigthread.c); serial backend.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
prog=$(dirname "$MPLUA")/tests/embed_sigthread
"$prog" >out 2>err || { cat out err >&2; echo "FAIL: embed_sigthread" >&2; exit 1; }
want="ok the other thread left the state alone
ok the state's thread was interrupted"
[ "$(cat out)" = "$want" ] || { cat out err >&2; echo "FAIL: embed_sigthread: unexpected output" >&2; exit 1; }
echo "embed_sigthread ($N): ok"
