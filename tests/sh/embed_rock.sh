# ranks: 2  quick: none  sanitize: none
# SPDX-License-Identifier: MIT
# The rockspec (scripts/mplua-*.rockspec): `luarocks --lua-version 5.4 make
# --tree T` in a copy of the checkout, with no network (HOME and the
# luarocks configuration private to the test, no server), installs mp.so and
# ad.so in T/lib/lua/5.4 and the Lua library as T/share/lua/5.4/mplua/*.lua,
# and mplua/fftw.so (mp.fft's plug-in) when FFTW is installed, nothing else
# there; mp.so exports the API only and needs no readline; the
# rock's version is project()'s. Then a stock lua5.4 does require "mp" at N
# ranks, finds mplua.optim next to it, runs mp.fft (with FFTW), and ad alone (no MPI) or before mp
# (one `ad` in the state). Exit 77 (skipped) without luarocks
# (scripts/setup.sh installs Debian's).
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
. "$MPLUA_TEST_DIR/sh/lib/subbuild.bash"
fail() { echo "FAIL ($N): $*" >&2; exit 1; }
command -v luarocks >/dev/null || { echo "skipped ($N): no luarocks (Debian: luarocks)"; exit 77; }

rock=$(cd "$src/scripts" && ls mplua-*.rockspec 2>/dev/null) || fail "no scripts/mplua-*.rockspec"
[ "$(echo "$rock" | wc -l)" = 1 ] || fail "more than one rockspec: $rock"
proj=$(sed -n 's/^project(mplua VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
case $rock in "mplua-$proj-"*.rockspec) ;; *) fail "$rock is not version $proj (project())" ;; esac

copy_sources s
T=$PWD/T
mkdir home
cat >rocks-config.lua <<'CFG'
rocks_servers = {}
CFG
# luarocks runs `cmake --build` without -j: the test holds two processors
(cd s && HOME=$tmp/home LUAROCKS_CONFIG=$tmp/rocks-config.lua CMAKE_BUILD_PARALLEL_LEVEL=2 \
  luarocks --lua-version 5.4 make --tree "$T" "scripts/$rock") >log 2>&1 || built_fail "luarocks make" log

# mp.fft's FFTW plug-in (mplua/fftw.so) beside them when FFTW is installed
cmods="ad.so mp.so "
pkg-config --exists fftw3 fftw3f && cmods="ad.so mp.so mplua "
[ "$(ls "$T/lib/lua/5.4" | tr '\n' ' ')" = "$cmods" ] || fail "C modules: $(ls -R "$T/lib/lua/5.4")"
[ "$cmods" = "ad.so mp.so " ] || [ "$(ls "$T/lib/lua/5.4/mplua")" = fftw.so ] ||
  fail "the rock has no mplua/fftw.so though FFTW is installed: $(ls -R "$T/lib/lua/5.4")"
[ "$(ls "$T/share/lua/5.4")" = mplua ] || fail "top-level Lua modules: $(ls "$T/share/lua/5.4")"
[ -f "$T/share/lua/5.4/mplua/optim.lua" ] || fail "no mplua/optim.lua"
nm -D --defined-only "$T/lib/lua/5.4/mp.so" | awk '{ print $3 }' | grep -vE '^(mplua_|luaopen_)' >other || true
[ ! -s other ] || fail "mp.so exports more than the API: $(head -5 other | tr '\n' ' ')"
readelf -d "$T/lib/lua/5.4/mp.so" | grep -q 'NEEDED.*readline' && fail "mp.so links readline"
readelf -d "$T/lib/lua/5.4/ad.so" | grep -q 'NEEDED.*mpi' && fail "ad.so links MPI"

export LUA_CPATH="$T/lib/lua/5.4/?.so" LUA_PATH="$T/share/lua/5.4/?.lua"
out=$("$MPIEXEC" -n "$N" lua5.4 -e '
  local mp = require "mp"
  if mp.rank > 0 then return mp.serve() end
  print(mp.size, mp.exec(function() return mp.allreduce(1, "sum") end),
        package.searchpath("mplua.optim", package.path))') || fail "lua5.4 require \"mp\""
[ "$out" = "$N	$N	$T/share/lua/5.4/mplua/optim.lua" ] || fail "lua5.4 require \"mp\": '$out'"
if [ "$cmods" != "ad.so mp.so " ]; then
  out=$("$MPIEXEC" -n "$N" lua5.4 -e '
    local mp = require "mp"
    if mp.rank > 0 then return mp.serve() end
    print(mp.exec(function()
      local lay = mp.layout("c128[x=8, y=8@1]")
      local b = mp.fft(lay):forward(lay:alloc():fill(1))
      return mp.allreduce(b[1].re, "max")
    end))' 2>&1) || fail "lua5.4: mp.fft: $out"
  [ "$out" = "64.0" ] || fail "lua5.4: mp.fft: '$out'"
fi
out=$(lua5.4 -e '
  local ad = require "ad"
  print(mp, select(2, ad.grad(function(x) return x[1]^2 end, {3}))[1])') || fail "require \"ad\" alone"
[ "$out" = "nil	6.0" ] || fail "require \"ad\" alone: '$out'"
out=$(MPLUA_DISABLED=1 lua5.4 -e '
  local ad = require "ad"
  local mp = require "mp"
  assert(package.loaded.ad == ad and _G.ad == ad, "two ad modules")
  local optim = require "mplua.optim"
  local x, f, info = optim.lbfgs(function(x) return ad.grad(function(v) return (v[1] - 3)^2 end, x) end, {0})
  print(x[1], info.status)' 2>&1) || fail "ad, then mp, then mplua.optim: $out"
[ "$out" = "3.0	converged" ] || fail "ad, then mp, then mplua.optim: '$out'"
echo "ok ($N): $rock installs mp, ad and mplua.* into a tree; lua5.4 runs them"
