# ranks: 2  lock: install
# cpack -G DEB packages the installed tree (scripts/cmake/install.cmake): the
# package holds the program, the library (SONAME), the header alone, mp.so,
# the Lua library, pkg-config and CMake files and the examples; extracted
# anywhere (dpkg-deb -x, no install), mplua and a stock lua5.4 -l mp run from
# it and find the Lua library relative to the files.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
build=$(cd "$(dirname "$MPLUA")" && pwd)
fail() { echo "FAIL ($N): $*" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "SKIPPED ($N): no dpkg-deb"; exit 77; }
cpack -G DEB -B "$tmp/pkg" --config "$build/CPackConfig.cmake" >log 2>&1 || { cat log >&2; fail "cpack"; }
deb=$(ls "$tmp"/pkg/*.deb) || fail "no .deb made"
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./||' >list
p=usr/local
for f in bin/mplua lib/libmplua.so.0 include/mplua/mplua.h lib/lua/5.4/mp.so lib/lua/5.4/ad.so \
         share/lua/5.4/mplua/optim.lua share/lua/5.4/mplua/hmc.lua lib/pkgconfig/mplua.pc \
         lib/cmake/mplua/mplua-config.cmake share/mplua/examples/heat_host.c \
         share/mplua/examples/heat_kernel.c share/mplua/examples/heat_lua.lua; do
  grep -qx "$p/$f" list || fail "the package has no $p/$f"
done
grep -q "^$p/include/mplua/" list && [ "$(grep -c "^$p/include/mplua/." list)" = 1 ] ||
  fail "headers other than mplua.h: $(grep "^$p/include/" list)"
dpkg-deb -f "$deb" Package Depends | grep -q '^Depends:.*mpich' || fail "no Depends on mpich"
dpkg-deb -x "$deb" x
r=$PWD/x/$p
out=$("$MPIEXEC" -n "$N" "$r/bin/mplua" -e 'print(mp.size, package.searchpath("mplua.optim", package.path))') ||
  fail "mplua from the extracted tree"
[ "$out" = "$N	$r/share/lua/5.4/mplua/optim.lua" ] || fail "mplua: '$out'"
lua_asan "$r/lib/libmplua.so.0"
out=$(LUA_CPATH="$r/lib/lua/5.4/?.so;;" "$MPIEXEC" -n "$N" lua5.4 -l mp -e '
  if mp.rank > 0 then return mp.serve() end
  print(mp.size, package.searchpath("mplua.optim", package.path), mp.exec(function() return mp.allreduce(1, "sum") end))') ||
  fail "lua5.4 -l mp from the extracted tree"
[ "$out" = "$N	$r/share/lua/5.4/mplua/optim.lua	$N" ] || fail "lua5.4 -l mp: '$out'"
echo "ok ($N): $(basename "$deb"), $(wc -l <list) entries, runs extracted"
