# ranks: 3
# SPDX-License-Identifier: MIT
# mp.connect: rank 0's prompt runs chunks on another rank (prints and results
# come back, errors there are reported and abort nothing), after a fault that
# left that rank's globals to inspect; mp.disconnect returns to rank 0.
set -eu
N=${1:?usage: $0 RANKS}
: "${MPLUA:?}" "${MPIEXEC:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
cat >in <<'LUA'
mp.exec(function() clue = "state of " .. mp.rank if mp.rank == 2 then error("fault here") end end)
mp.connect(2)
clue
print("rank", mp.rank) return 7
error("oops")
mp.disconnect()
mp.rank
mp.exec(function() return mp.handin(1) end)
LUA
status=0
"$MPIEXEC" -n "$N" "$MPLUA" <in >out 2>&1 || status=$?
# prompts, results and reports in the order they happened
grep -v -e '^stack traceback:' -e "$(printf '^\t')" -e '^(' -e '^where the others were:' -e '^  ' out >got || true
cat >want <<'OUT'
> mp.exec: rank 2/3 faulted: stdin:1: fault here
> [2]> state of 2
[2]> rank	2
7
[2]> [rank 2] stdin:1: oops
[2]> > 0
> 3
> 
OUT
if [ "$status" != 0 ] || ! cmp -s want got; then
  echo "FAIL: exit $status"; diff want got || true; cat out; exit 1
fi
echo "repl_connect ok"
