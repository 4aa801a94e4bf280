# ranks: 1 2
# SPDX-License-Identifier: MIT
# A C host that opts out of every process-wide change (tests/embed/optout.c
# checks signal dispositions, timers, malloc's settings, the allocator, the
# environment, before and after mplua_open/mplua_close, and that the same
# checks see the defaults' changes).
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
prog=$(dirname "$MPLUA")/tests/embed_optout
"$MPIEXEC" -n "$N" "$prog" >out 2>err || { cat out err >&2; echo "FAIL ($N): embed_optout" >&2; exit 1; }
malloc="malloc settings unchanged"
readelf -d "$prog" | grep -q libasan && malloc="malloc settings not checked (ASan)"
want="ok allocator unchanged
ok signal dispositions unchanged after open
ok $malloc
ok LUA_PATH not read
ok tasks run without a timer"
[ "$N" -gt 1 ] && want="$want
ok a busy loop is interrupted by a fault elsewhere (count hook)"
want="$want
ok os.exit raises
ok nothing changed after close; MPI still usable
ok the defaults are seen by the same checks"
[ "$(cat out)" = "$want" ] || { diff <(echo "$want") out >&2; cat err >&2; echo "FAIL ($N): output" >&2; exit 1; }
echo "ok ($N)"
