# ranks: 1 4  quick: 1
# SPDX-License-Identifier: MIT
# The heat solver stepped from Lua (scripts/examples/heat_lua.lua, its kernel
# the C module heat_kernel.so) prints the same numbers, to the last bit, as
# the C host heat_host.c for the same parameters, under mplua and under a
# stock lua5.4 -l mp.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
build=$(cd "$(dirname "$MPLUA")" && pwd)
src=$MPLUA_TEST_DIR/..
fail() { cat err >&2 2>/dev/null; echo "FAIL ($N): $*" >&2; exit 1; }
export LUA_CPATH="$build/lib/lua/5.4/?.so;;"
lua_asan "$build/lib/libmplua.so"
for args in "16 12 50" "33 17 200 0.2"; do
  "$MPIEXEC" -n "$N" "$build/heat_host" $args </dev/null >host 2>err || fail "heat_host $args"
  want=$(grep '^heat ' host) || fail "heat_host $args printed no figures"
  got=$("$MPIEXEC" -n "$N" "$MPLUA" "$src/scripts/examples/heat_lua.lua" $args 2>err) ||
    fail "mplua heat_lua.lua $args"
  [ "$got" = "$want" ] || fail "mplua: '$got' vs heat_host: '$want'"
  got=$("$MPIEXEC" -n "$N" lua5.4 -l mp "$src/scripts/examples/heat_lua.lua" $args 2>err) ||
    fail "lua5.4 -l mp heat_lua.lua $args"
  [ "$got" = "$want" ] || fail "lua5.4: '$got' vs heat_host: '$want'"
done
# the kernel's field is an mp.Array view, and the module needs mp first
"$MPIEXEC" -n "$N" "$MPLUA" -e '
  print(mp.exec(function()
    local k = require("heat_kernel").new(8, 8)
    k:step(0.1)
    local _, s = k:stats()
    return mp.allreduce(math.abs(k.T:sum() - s) <= 1e-12 * s and 1 or 0, "min"), select("#", k.T:dims())
  end))' >out 2>err || fail "the view"
[ "$(cat out)" = "$(printf '1\t2')" ] || fail "the view: $(cat out)"
lua5.4 -e 'local ok, e = pcall(require, "heat_kernel"); local k = ok and e.new
  ok, e = pcall(k, 8, 8); assert(not ok and e:find("require \"mp\" first"), e)' 2>err ||
  fail "heat_kernel without mp"
echo "ok ($N): heat_lua.lua == heat_host (mplua, lua5.4 -l mp)"
