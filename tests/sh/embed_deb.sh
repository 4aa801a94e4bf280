# ranks: 2  quick: none  sanitize: none
# SPDX-License-Identifier: MIT
# Debian packages as a packager makes them: a build configured for /usr with
# -DBUILD_TESTING=OFF on a machine without Criterion (its .pc hidden), then
# `cpack -G DEB`. Four packages, split as Debian splits a Lua library:
# libmplua0 (the shared library), libmplua-dev, lua-mplua (mp.so and ad.so in
# the multiarch Lua directory, the Lua library under mplua/), mplua (the
# program, its man page, the examples); every file under /usr, owned by
# root, a copyright file and a changelog in each, man pages that `man`
# renders without a warning, no run path, binaries stripped (their symbols
# in -dbgsym packages), a shlibs file for the library and none for mp.fft's
# plug-in (loaded by dlopen: no SONAME), cpack without a warning,
# dependencies on run-time packages only
# (each one a real package of this system) and between them on the same
# version. The packages are installed with dpkg -i into a root of their own
# (--root: installing them system-wide would shadow the build under test for
# everything else on this machine) whose database holds this system's
# entries for the packages they depend on, and run from there: the front end
# (mplua -n N), a stock lua5.4 with require "mp" at N ranks and require
# "mplua.optim", and the man page's C host built with pkg-config mplua; with
# FFTW, mp.fft says to install lua-mplua-fftw until it is installed, then
# transforms. Exit 77 (skipped) off Debian (no dpkg-deb, dpkg-shlibdeps or
# cpack).
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
. "$MPLUA_TEST_DIR/sh/lib/subbuild.bash"
fail() { echo "FAIL ($N): $*" >&2; exit 1; }
for tool in dpkg-deb dpkg-shlibdeps cpack gzip; do
  command -v "$tool" >/dev/null || { echo "skipped ($N): no $tool (Debian's dpkg-dev, cmake)"; exit 77; }
done
arch=$(gcc -print-multiarch)
[ -n "$arch" ] || fail "gcc -print-multiarch names no triplet"

no_criterion pc || fail "cannot hide Criterion from pkg-config"
unset PKG_CONFIG_PATH
PKG_CONFIG_LIBDIR=$PWD/pc cmake -S "$src" -B b -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF \
  -DMPLUA_BUILD_BENCHMARKS=OFF -DMPLUA_BUILD_EXAMPLES=OFF >log 2>&1 || built_fail "configure" log
grep -qi criterion b/CMakeCache.txt && fail "BUILD_TESTING=OFF still looks for Criterion"
grep -qiE 'tmux|chromium' b/CMakeCache.txt && fail "BUILD_TESTING=OFF looks for tmux or chromium"
cmake --build b -j2 >>log 2>&1 || built_fail "build" log
(cd b && cpack -G DEB -B "$tmp/pkg") >cpack.log 2>&1 || built_fail "cpack" cpack.log
ls pkg/*.deb >/dev/null 2>&1 || fail "no .deb made: $(ls pkg)"
! grep -i -A3 warning cpack.log >&2 || fail "cpack warns"

ver=$(sed -n 's/^#define MPLUA_RELEASE "mplua \(.*\)"$/\1/p' b/gen/include/mplua.h)
same="(= $ver-1)"
deb() { ls pkg/"$1"_*.deb; }
for p in libmplua0 libmplua-dev lua-mplua mplua; do
  deb "$p" >/dev/null 2>&1 || fail "no package $p: $(ls pkg)"
  [ "$(dpkg-deb -f "$(deb "$p")" Package)" = "$p" ] || fail "$p: Package field"
  dpkg-deb -c "$(deb "$p")" >"$p.list"
  awk '{ print $6 }' "$p.list" | sed 's|^\./||; s|/$||' | grep -v '^$' >"$p.files"
  grep -v -e '^usr$' -e '^usr/' "$p.files" >outside || true
  [ ! -s outside ] || fail "$p: files outside /usr: $(tr '\n' ' ' <outside)"
  awk '$2 != "root/root"' "$p.list" >owners
  [ ! -s owners ] || fail "$p: files not owned by root: $(cat owners)"
  grep -qx "usr/share/doc/$p/copyright" "$p.files" || fail "$p: no usr/share/doc/$p/copyright"
  grep -qx "usr/share/doc/$p/changelog.Debian.gz" "$p.files" || fail "$p: no changelog.Debian.gz"
  dpkg-deb -f "$(deb "$p")" Depends >"$p.depends"
done
lib=usr/lib/$arch
want() { grep -qx "$2" "$1.files" || fail "$1 has no /$2"; }
want libmplua0 "$lib/libmplua.so.0"
want libmplua0 "$lib/libmplua.so.$ver"
want libmplua-dev "$lib/libmplua.so"
want libmplua-dev "$lib/libmplua.a"
want libmplua-dev usr/include/mplua/mplua.h
want libmplua-dev "$lib/pkgconfig/mplua.pc"
want libmplua-dev "$lib/cmake/mplua/mplua-config.cmake"
want libmplua-dev "$lib/cmake/mplua/mplua-targets.cmake"
want libmplua-dev usr/share/man/man3/mplua.3.gz
want lua-mplua "$lib/lua/5.4/mp.so"
want lua-mplua "$lib/lua/5.4/ad.so"
want lua-mplua usr/share/lua/5.4/mplua/optim.lua
want lua-mplua usr/share/lua/5.4/mplua/hmc.lua
want mplua usr/bin/mplua
want mplua usr/share/man/man1/mplua.1.gz
want mplua usr/share/doc/mplua/examples/heat_host.c
want mplua usr/share/doc/mplua/examples/heat_lua.lua
# one namespace: nothing else in the Lua directories
grep -E "^($lib/lua/5.4|usr/share/lua/5.4)/." lua-mplua.files |
  grep -vxE "$lib/lua/5.4/(mp|ad)\.so|usr/share/lua/5.4/mplua(/[a-z_]+\.lua)?" >stray || true
[ ! -s stray ] || fail "lua-mplua: modules outside mp, ad and mplua.*: $(tr '\n' ' ' <stray)"
grep -q "mp.so -> \.\./\.\./libmplua\.so\.0" lua-mplua.list || fail "mp.so is not a link to libmplua.so.0"
# mp.fft's FFTW plug-in (GPL-2+ through FFTW) is a package of its own, when FFTW is here
if pkg-config --exists fftw3 fftw3f; then
  deb lua-mplua-fftw >/dev/null 2>&1 || fail "no package lua-mplua-fftw: $(ls pkg)"
  dpkg-deb -c "$(deb lua-mplua-fftw)" | awk '{ print $6 }' | sed 's|^\./||; s|/$||' >fftw.files
  grep -qx "$lib/lua/5.4/mplua/fftw.so" fftw.files || fail "lua-mplua-fftw has no /$lib/lua/5.4/mplua/fftw.so"
  grep -qx "usr/share/doc/lua-mplua-fftw/copyright" fftw.files || fail "lua-mplua-fftw: no copyright"
  dpkg-deb -f "$(deb lua-mplua-fftw)" Depends | grep -q "lua-mplua $same" ||
    fail "lua-mplua-fftw does not depend on lua-mplua $same"
  dpkg-deb -f "$(deb lua-mplua-fftw)" Depends | grep -q "libfftw3-double3" ||
    fail "lua-mplua-fftw does not depend on libfftw3-double3 (shlibdeps)"
  dpkg-deb --ctrl-tarfile "$(deb lua-mplua-fftw)" | tar -tf - | grep -q '^\./shlibs$' &&
    fail "lua-mplua-fftw has a shlibs file (nothing links the plug-in)"
  dpkg-deb -f "$(deb lua-mplua-fftw)" Depends >lua-mplua-fftw.depends
fi

# the packages made are the ones interp/README.md's table lists
sed -n '/^### Debian packages/,/^### /s/^| `\([a-z0-9.+-]*\)` |.*/\1/p' "$src/interp/README.md" | sort >doc.pkgs
for f in pkg/*.deb; do dpkg-deb -f "$f" Package; done | sort >made.pkgs
cmp -s doc.pkgs made.pkgs ||
  fail "the packages made differ from interp/README.md's table (< docs, > made): $(diff doc.pkgs made.pkgs | grep '^[<>]' | tr '\n' ' ')"

# dependencies: run-time packages only, and ours at the same version
for p in libmplua0 lua-mplua mplua; do
  grep -q -- '-dev' "$p.depends" && fail "$p depends on a -dev package: $(cat "$p.depends")"
done
has_dep() { tr ',' '\n' <"$1.depends" | sed 's/^ *//' | grep -qx -- "$2" || fail "$1: Depends has no '$2': $(cat "$1.depends")"; }
has_dep libmplua-dev "libmplua0 $same"
has_dep lua-mplua "libmplua0 $same"
has_dep mplua "libmplua0 $same"
has_dep mplua "lua-mplua $same"
grep -q 'libmpich12' libmplua0.depends || fail "libmplua0 does not depend on libmpich12 (shlibdeps): $(cat libmplua0.depends)"
grep -q 'liblua5.4-0' mplua.depends || fail "mplua does not depend on liblua5.4-0: $(cat mplua.depends)"
if [ -f /usr/include/readline/readline.h ]; then
  grep -q 'libreadline8' mplua.depends || fail "mplua does not depend on libreadline8: $(cat mplua.depends)"
fi
grep -q readline libmplua0.depends lua-mplua.depends && fail "the library's packages depend on readline"
# every package named exists on this system (what dpkg -i would need)
for p in libmplua0 libmplua-dev lua-mplua mplua; do
  tr ',|' '\n\n' <"$p.depends" | sed 's/^ *//; s/ .*//' | grep -v '^$' | while read -r d; do
    case $d in libmplua0 | lua-mplua) continue ;; esac
    dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q 'ok installed' ||
      dpkg-query -W -f='${Status}' "$d:$(dpkg --print-architecture)" 2>/dev/null | grep -q 'ok installed' ||
      { echo "FAIL ($N): $p depends on $d, which is not installed here" >&2; exit 1; }
  done
done
shlibs=$(dpkg-deb --ctrl-tarfile "$(deb libmplua0)" | tar -xOf - ./shlibs) || fail "libmplua0 has no shlibs file"
[ "$shlibs" = "libmplua 0 libmplua0 (>= $ver-1)" ] || fail "libmplua0's shlibs file: '$shlibs'"

# installed into a root: its dpkg database has this system's entries for
# the packages ours depend on (dpkg checks them); the maintainer scripts
# (libmplua0's ldconfig) run outside it, as --root has no shell to run them in
R=$PWD/root
db=$R/var/lib/dpkg
mkdir -p "$db/info" "$db/updates" "$db/triggers"
: >"$db/available"
cat ./*.depends | tr ',|' '\n\n' | sed 's/^ *//; s/ .*//' | grep -v '^$' | sort -u | while read -r d; do
  case $d in libmplua0 | lua-mplua) continue ;; esac
  dpkg-query -s "$d" 2>/dev/null || continue # an alternative not installed
  echo
  : >"$db/info/$(dpkg-query -W -f='${binary:Package}' "$d").list"
done >"$db/status"
install_debs() {
  dpkg --root="$R" --force-script-chrootless -i "$@" >dpkg.log 2>&1 || { cat dpkg.log >&2; fail "dpkg -i $*"; }
  ! grep -i warning dpkg.log >&2 || fail "dpkg -i $*: warnings"
}
install_debs $(for p in libmplua0 libmplua-dev lua-mplua mplua; do deb "$p"; done)
for p in libmplua0 libmplua-dev lua-mplua mplua; do
  [ "$(dpkg-query --root="$R" -W -f='${Status}' "$p")" = "install ok installed" ] || fail "dpkg -i: $p is not installed"
done
objdump -p "$R/$lib/libmplua.so.$ver" | grep -q 'SONAME *libmplua\.so\.0$' ||
  fail "libmplua.so.$ver: no SONAME libmplua.so.0"
readelf -d "$R/usr/bin/mplua" | grep -qE 'R(UN)?PATH' && fail "/usr/bin/mplua has a run path: $(readelf -d "$R/usr/bin/mplua" | grep PATH)"
for f in usr/bin/mplua "$lib/libmplua.so.$ver"; do # the symbols are in <package>-dbgsym
  readelf -S "$R/$f" | grep -q '\.debug_info' && fail "/$f is not stripped"
done
ls pkg/libmplua0-dbgsym_*.ddeb pkg/mplua-dbgsym_*.ddeb >/dev/null || fail "no -dbgsym packages: $(ls pkg)"
for page in man1/mplua.1.gz man3/mplua.3.gz; do
  MANWIDTH=80 man --warnings -l "$R/usr/share/man/$page" >page 2>warn || fail "man -l $page"
  [ ! -s warn ] || { cat warn >&2; fail "man -l $page: warnings"; }
  grep -q 'mplua' page || fail "man -l $page shows nothing"
done
export LD_LIBRARY_PATH="$R/$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# the front end
printf '%s\n' 'mp.exec(function() return mp.allreduce(1, "sum") end)' \
  'package.searchpath("mplua.optim", package.path)' >in
status=0
MPLUA_LAUNCHER="$MPIEXEC -n" "$R/usr/bin/mplua" -n "$N" <in >out 2>err || status=$?
printf '%s\n' "> $N" "> $R/usr/share/lua/5.4/mplua/optim.lua" '> ' >want
[ "$status" = 0 ] && cmp -s want out || { diff want out >&2; cat err >&2; fail "mplua -n $N (status $status)"; }

# stock lua5.4
export LUA_CPATH="$R/$lib/lua/5.4/?.so" LUA_PATH="$R/usr/share/lua/5.4/?.lua"
out=$("$MPIEXEC" -n "$N" lua5.4 -e '
  local mp = require "mp"
  if mp.rank > 0 then return mp.serve() end
  print(mp.size, mp.exec(function() return mp.allreduce(1, "sum") end))') ||
  fail "lua5.4 require \"mp\""
[ "$out" = "$N	$N" ] || fail "lua5.4 require \"mp\": '$out'"
out=$(MPLUA_DISABLED=1 lua5.4 -e '
  local ad = require "ad"
  local optim = require "mplua.optim"
  local x, f, info = optim.lbfgs(function(x) return ad.grad(function(v) return (v[1] - 3)^2 end, x) end, {0})
  print(x[1], info.status)' 2>&1) || fail "lua5.4 require \"mplua.optim\": $out"
[ "$out" = "3.0	converged" ] || fail "mplua.optim: '$out'"

# mp.fft without lua-mplua-fftw names the package; with it, transforms
if pkg-config --exists fftw3 fftw3f; then
  fft='print(mp.exec(function()
    local lay = mp.layout("c128[x=8, y=8@1]")
    return mp.allreduce(mp.fft(lay):forward(lay:alloc():fill(1))[1].re, "max")
  end))'
  status=0
  MPLUA_LAUNCHER="$MPIEXEC -n" "$R/usr/bin/mplua" -n "$N" -e "$fft" >out 2>err || status=$?
  [ "$status" = 1 ] && cat out err | grep -qF "mp.fft: [rank 0/$N] no local FFT library: mp.fft needs its FFTW plug-in, the module mplua.fftw (Debian packages: install lua-mplua-fftw;" ||
    { cat out err >&2; fail "mp.fft without lua-mplua-fftw: status $status (want 1)"; }
  install_debs "$(deb lua-mplua-fftw)"
  so=$R/$lib/lua/5.4/mplua/fftw.so
  [ -f "$so" ] || fail "lua-mplua-fftw installed no /$lib/lua/5.4/mplua/fftw.so"
  objdump -p "$so" | grep -q SONAME && fail "fftw.so has a SONAME (a plug-in only dlopen loads)"
  out=$(MPLUA_LAUNCHER="$MPIEXEC -n" "$R/usr/bin/mplua" -n "$N" -e "$fft" 2>&1) || fail "mp.fft with lua-mplua-fftw: $out"
  [ "$out" = "64.0" ] || fail "mp.fft with lua-mplua-fftw: '$out'"
fi

# the C host of mplua(3)'s EXAMPLE, built with pkg-config
zcat "$R/usr/share/man/man3/mplua.3.gz" |
  sed -n '/^\.SH EXAMPLE/,/^\.fi/p' | sed '1,2d; $d; s/\\-/-/g; s/\\e/\\/g' >host.c
grep -q mplua_open host.c || fail "no C example in mplua(3)"
export PKG_CONFIG_PATH="$R/$lib/pkgconfig"
mpicc host.c $(pkg-config --cflags --libs mplua) -o host 2>cc.err || { cat cc.err >&2; fail "the host does not build with pkg-config mplua"; }
out=$("$MPIEXEC" -n "$N" ./host) || fail "the host: exit status $?"
[ "$out" = "$N" ] || fail "the host printed '$out'"
echo "ok ($N): $(cd pkg && ls *.deb | tr '\n' ' ')installed into a root and run from there"
