# ranks: 1 4  quick: 1  lock: install
# SPDX-License-Identifier: MIT
# The installed tree: `cmake --install` into a temporary prefix lays out
# bin/mplua, lib/libmplua.so* (SONAME libmplua.so.0), include/mplua/mplua.h
# alone, lib/lua/5.4/{mp,ad}.so and nothing else there, share/lua/5.4/mplua
# and nothing else there, share/doc/mplua/examples, the man pages, mplua.pc
# (no run path) and the CMake package config; the tree still works once moved
# (nothing points back at the build). The example host
# (scripts/examples/heat_host.c) is built against it with pkg-config and with
# find_package(mplua) (shared and static), and each build runs a piped
# session at N ranks: inspect the field, pause, change alpha, a fault in a
# command, stop.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
build=$(cd "$(dirname "$MPLUA")" && pwd)
src=$MPLUA_TEST_DIR/..
fail() { echo "FAIL ($N): $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/p0" >/dev/null
mv "$tmp/p0" "$tmp/p" # relocated: found relative to the files, not the prefix given
p=$tmp/p
ex=$p/share/doc/mplua/examples
for f in bin/mplua lib/libmplua.so lib/libmplua.so.0 lib/libmplua.a include/mplua/mplua.h \
         lib/lua/5.4/mp.so lib/lua/5.4/ad.so share/lua/5.4/mplua/optim.lua share/lua/5.4/mplua/hmc.lua \
         share/doc/mplua/examples/heat_host.c lib/pkgconfig/mplua.pc lib/cmake/mplua/mplua-config.cmake \
         lib/cmake/mplua/mplua-targets.cmake share/man/man1/mplua.1.gz share/man/man3/mplua.3.gz; do
  [ -e "$p/$f" ] || fail "install: $f is missing"
done
# where the docs say things are installed: the installed layout's table
# (interp/README.md; the LIBDIR rows are checked above) and the examples' folder
sed -n '/^### Installed layout/,/^### /s/^| `\([a-z][^`]*\)`.*/\1/p' "$src/interp/README.md" |
  grep -v LIBDIR >doc_paths
sed -n 's/.*`cmake --install` puts this folder in `\([^`]*\)`.*/\1/p' "$src/scripts/examples/README.md" >>doc_paths
[ "$(wc -l <doc_paths)" -ge 5 ] || fail "the docs' installed paths were not found: $(cat doc_paths)"
while read -r f; do
  # shellcheck disable=SC2086
  set -- "$p"/$f # a pattern (share/lua/5.4/mplua/*.lua) names its first match
  [ -e "$1" ] || [ -e "$p/$f.gz" ] || fail "the docs name $f, which the install does not have"
done <doc_paths
[ "$(ls "$p/include/mplua")" = mplua.h ] || fail "install: headers other than mplua.h: $(ls "$p/include/mplua")"
# one namespace: the modules mp and ad, the Lua library under mplua (and
# mp.fft's FFTW plug-in, mplua/fftw.so, when FFTW was found).
c=$(ls "$p/lib/lua/5.4" | tr '\n' ' ')
[ "$c" = "ad.so mp.so " ] || { [ "$c" = "ad.so mp.so mplua " ] && [ "$(ls "$p/lib/lua/5.4/mplua")" = fftw.so ]; } ||
  fail "C modules: $(ls -R "$p/lib/lua/5.4")"
[ "$(ls "$p/share/lua/5.4")" = mplua ] || fail "top-level Lua modules: $(ls "$p/share/lua/5.4")"
readelf -d "$p/lib/libmplua.so" | grep -q 'SONAME.*\[libmplua\.so\.0\]' || fail "no SONAME libmplua.so.0"
readelf -d "$p/bin/mplua" | grep -q 'NEEDED.*\[libmplua\.so\.0\]' || fail "bin/mplua does not link libmplua.so.0"
readelf -d "$p/bin/mplua" | grep -q 'R.*PATH.*\$ORIGIN/\.\./lib' || fail "bin/mplua has no \$ORIGIN/../lib run path"
# ldd: which libmplua.so.0 a program loads, as a real path
loads() { realpath "$(ldd "$1" | awk '$1 == "libmplua.so.0" { print $3 }')"; }
[ "$(loads "$p/bin/mplua")" = "$(realpath "$p/lib/libmplua.so.0")" ] || fail "ldd: $(ldd "$p/bin/mplua" | grep mplua)"
readelf -d "$p/lib/libmplua.so" | grep -q 'NEEDED.*liblua' && fail "libmplua links liblua (a stock lua5.4 would hold two)"
# the Lua library is the installed one, and no path of the build is used
out=$("$p/bin/mplua" --nompi -e 'print(package.searchpath("mplua.optim", package.path))')
[ "$out" = "$p/share/lua/5.4/mplua/optim.lua" ] || fail "optim found at '$out'"
B=$build S=$(cd "$src" && pwd) "$p/bin/mplua" --nompi -e '
  for _, v in ipairs{"B", "S"} do assert(not package.path:find(os.getenv(v), 1, true), package.path) end' ||
  fail "package.path names the build or source tree"

# a sanitized build: the host must load the sanitizer runtime first too
san=
if readelf -d "$p/lib/libmplua.so" | grep -q libasan; then san="-fsanitize=address,undefined"; fi
export LSAN_OPTIONS="suppressions=$MPLUA_TEST_DIR/lsan.supp:${LSAN_OPTIONS:-}"

# pkg-config: no run path (where the library is found is the consumer's choice)
export PKG_CONFIG_PATH=$p/lib/pkgconfig
libs=$(pkg-config --libs mplua)
case $libs in *rpath*) fail "mplua.pc puts a run path in every consumer: $libs" ;; esac
pkg-config --libs --static mplua | grep -q readline && fail "mplua.pc lists readline"
mpicc $san "$ex/heat_host.c" $(pkg-config --cflags mplua) $libs -Wl,-rpath,"$p/lib" -lm -o heat_pc ||
  fail "heat_host does not build with pkg-config"
[ "$(loads ./heat_pc)" = "$(realpath "$p/lib/libmplua.so.0")" ] || fail "heat_pc: $(ldd ./heat_pc | grep mplua)"

# find_package
mkdir cm
cat >cm/CMakeLists.txt <<CM
cmake_minimum_required(VERSION 3.18)
project(heat C)
find_package(mplua 0.1 REQUIRED)
if(NOT mplua_LUA_DIR STREQUAL "$p/share/lua/5.4")
  message(FATAL_ERROR "mplua_LUA_DIR is \${mplua_LUA_DIR}")
endif()
add_executable(heat_cm $ex/heat_host.c)
target_link_libraries(heat_cm PRIVATE mplua::mplua m)
add_executable(heat_st $ex/heat_host.c)
target_link_libraries(heat_st PRIVATE mplua::mplua_static m)
CM
cmake -S cm -B cm/b -DCMAKE_PREFIX_PATH="$p" -DCMAKE_C_FLAGS="$san" >cm/log 2>&1 &&
  cmake --build cm/b >>cm/log 2>&1 || { cat cm/log >&2; fail "heat_host does not build with find_package"; }

want=$MPLUA_TEST_DIR/embed/session.want
readelf -d cm/b/heat_st | grep -q 'NEEDED.*libmplua' && fail "heat_st links libmplua.so, not libmplua.a"
for prog in ./heat_pc cm/b/heat_cm cm/b/heat_st; do
  status=0
  "$MPIEXEC" -n "$N" "$prog" 16 16 <"$MPLUA_TEST_DIR/embed/session.txt" >out 2>err || status=$?
  [ "$status" = 0 ] || { cat err >&2; fail "$prog: exit status $status"; }
  grep -v '^heat_host: stopped after' out >got || true
  cmp -s "$want" got || { diff "$want" got >&2; cat err >&2; fail "$prog: session output"; }
  grep -q '^heat_host: stopped after [0-9]* steps$' out || fail "$prog: no final line"
  grep -q 'boom' err || fail "$prog: the fault in a command was not reported"
  [ "$(grep -c 'stack traceback' err)" = 1 ] || { cat err >&2; fail "$prog: stderr has more than the one fault"; }
done
echo "ok ($N): install layout, relocated tree, heat_host via pkg-config and find_package (shared, static)"
