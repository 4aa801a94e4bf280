# ranks: 2  quick: none  sanitize: none
# SPDX-License-Identifier: MIT
# mplua inside another CMake project (add_subdirectory), on a machine
# without Criterion (its .pc hidden): the outer project's own BUILD_TESTING
# is on, mplua's tests stay out (nothing looks for Criterion, tmux or
# chromium), mplua's flags stay on mplua's targets (the outer host has a
# shadowed variable, which mplua's -Wshadow with -DMPLUA_WERROR=ON would turn
# into an error), mplua installs nothing of the outer project's, and a host
# linked to mplua::mplua runs at N ranks from the build tree.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
. "$MPLUA_TEST_DIR/sh/lib/subbuild.bash"
fail() { echo "FAIL ($N): $*" >&2; exit 1; }

no_criterion pc || fail "cannot hide Criterion from pkg-config"
unset PKG_CONFIG_PATH
mkdir outer
cat >outer/CMakeLists.txt <<CM
cmake_minimum_required(VERSION 3.18)
project(outer C)
include(CTest)
add_subdirectory("$src" mplua)
add_executable(host host.c)
target_link_libraries(host PRIVATE mplua::mplua)
foreach(t mplua_ad mplua_nompi mplua_mpi mplua_shared mplua heat_host mpbench test_wire)
  if(TARGET \${t})
    message(STATUS "target \${t}")
  endif()
endforeach()
CM
cat >outer/host.c <<'C'
#include <stdio.h>
#include "mplua.h"
#include "lauxlib.h"

int main(int argc, char **argv) {
  int status = 0;
  lua_State *L = mplua_open(&argc, &argv, 1);
  if (!L) return 1;
  if (mplua_rank(L) == 0) {
    int ranks = mplua_size(L);
    { int ranks = 1; (void)ranks; } /* shadows: fine for this project's flags */
    status = luaL_loadstring(L, "print(mp.exec(function() return mp.allreduce(1, 'sum') end),"
                                " mp.size, require('mplua.optim') ~= nil)");
    if (status == LUA_OK) status = mplua_docall(L, 0, 0);
    mplua_report(L, status);
    status = status != LUA_OK || ranks != mplua_size(L);
  } else {
    status = mplua_worker(L);
  }
  return mplua_close(L, status);
}
C
PKG_CONFIG_LIBDIR=$PWD/pc cmake -S outer -B b -DCMAKE_BUILD_TYPE=Debug -DBUILD_TESTING=ON \
  -DMPLUA_WERROR=ON >log 2>&1 || built_fail "configure" log
grep -qi criterion b/CMakeCache.txt && fail "mplua looks for Criterion inside another project"
grep -qiE 'tmux|chromium' b/CMakeCache.txt && fail "mplua looks for tmux or chromium inside another project"
for t in mplua_shared mplua; do grep -qx -- "-- target $t" log || fail "no target $t"; done
for t in heat_host mpbench test_wire; do grep -qx -- "-- target $t" log && fail "target $t built inside another project"; done
cmake --build b -j2 >>log 2>&1 || built_fail "build" log
ctest --test-dir b -N >tests 2>&1 || true
grep -q 'Total Tests: 0' tests || fail "mplua's tests are in the outer project's: $(tail -3 tests)"
[ ! -e b/mplua/cmake_install.cmake ] || ! grep -q 'mplua.h' b/mplua/cmake_install.cmake ||
  fail "mplua installs its files inside another project (MPLUA_INSTALL defaults to off there)"
out=$("$MPIEXEC" -n "$N" b/host) || fail "the host: exit status $?"
[ "$out" = "$N	$N	true" ] || fail "the host printed '$out'"
echo "ok ($N): add_subdirectory without Criterion, flags kept to mplua's targets, host runs"
