# ranks: nompi 1
# SPDX-License-Identifier: MIT
# An uncaught error's traceback has stock Lua's shape: lua5.4 and mplua, run
# on the same script, print the same lines (the program's name aside), a
# stack overflow's too: its first ten levels, "...", the count skipped, and
# the last eleven, the main chunk's among them.
set -eu
N=${1:?usage: $0 nompi|RANKS}
. "$(dirname "$0")/lib/common.bash"
command -v lua5.4 >/dev/null || { echo "lua5.4 is not installed (scripts/setup.sh)"; exit 1; }

same() { # DESC SCRIPT: both fail, and print the same traceback
  local l m
  lua5.4 "$2" >lua.out 2>&1 && { echo "$1: lua5.4 did not fail"; exit 1; }
  run "$2" >mplua.out 2>&1 && { echo "$1: mplua did not fail"; exit 1; }
  # the overflow's depth depends on what is below the script: the counts aside
  l=$(sed -e 's/^lua5\.4: //' -e 's/(skipping [0-9]* levels)/(skipping N levels)/' lua.out)
  m=$(sed -e 's/^[^ :]*mplua: //' -e 's/(skipping [0-9]* levels)/(skipping N levels)/' mplua.out)
  if [ "$l" != "$m" ]; then
    echo "$1: the tracebacks differ"
    diff <(printf '%s\n' "$l") <(printf '%s\n' "$m") || true
    exit 1
  fi
}

printf 'local function f(n) return 1 + f(n + 1) end\nf(1)\n' >overflow.lua
same "a stack overflow" overflow.lua
grep -q $'^\t\\.\\.\\.\t(skipping [0-9]* levels)$' mplua.out || { cat mplua.out; exit 1; }
[ "$(grep -c "in upvalue 'f'" mplua.out)" -ge 18 ] || { echo "the last levels are missing"; cat mplua.out; exit 1; }
grep -q 'overflow.lua:2: in main chunk' mplua.out || { cat mplua.out; exit 1; }
[ "$(wc -l <mplua.out)" -le 30 ] || { echo "unbounded"; cat mplua.out; exit 1; }

printf 'local function g(n) if n == 0 then error("deep") end return (g(n - 1)) end\ng(40)\n' >deep.lua
same "a deep error" deep.lua
echo ok
