# ranks: 1
# SPDX-License-Identifier: MIT
# libmplua exports its API only: `nm -D --defined-only` shows exactly the
# functions mplua.h declares with MPLUA_API (mplua_* and luaopen_*); what it
# leaves undefined is Lua's API (the program's) or its libraries' (MPI, libc);
# it needs no readline and no liblua (readelf -d), and neither does a C host
# of it (ldd); mplua.h declares no prompt, front end or terminal function,
# carries project()'s version, compiles alone (C11 -pedantic, and C++) and
# links into a C++ host. The mplua program is the one that links
# readline (when it was found).
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
build=$(cd "$(dirname "$MPLUA")" && pwd)
lib=$build/lib/libmplua.so
hdr=$build/gen/include/mplua.h
fail() { echo "FAIL ($N): $*" >&2; exit 1; }
[ -f "$lib" ] && [ -f "$hdr" ] || fail "no $lib or $hdr"

nm -D --defined-only "$lib" | awk '{ print $3 }' | sort >exported
grep -vE '^(mplua_|luaopen_)' exported >other || true
[ ! -s other ] || fail "libmplua.so exports $(wc -l <other) symbols besides mplua_*/luaopen_*: $(head -20 other | tr '\n' ' ')"
# every exported function is declared MPLUA_API in mplua.h, and the reverse
sed -nE 's/^MPLUA_API [^(]*[ *]((mplua|luaopen)_[A-Za-z0-9_]+)\(.*/\1/p' "$hdr" | sort >declared
[ -s declared ] || fail "no MPLUA_API declaration found in $hdr"
cmp -s declared exported || { diff declared exported >&2; fail "exports differ from mplua.h's MPLUA_API (< header, > library)"; }

# what it leaves undefined is Lua's API or defined by a library it needs
ldd "$lib" | awk '$3 ~ /^\// { print $3 }' | while read -r l; do
  nm -D --defined-only "$l" | awk '{ print $3 }'
done | sed 's/@.*//' | sort -u >provided
nm -D --undefined-only "$lib" | awk '$1 == "U" { print $2 }' | sed 's/@.*//' | sort -u |
  grep -vE '^(lua_|luaL_)' | comm -23 - provided >undef || true
[ -s provided ] && [ ! -s undef ] ||
  fail "libmplua.so needs symbols that are neither Lua's nor its libraries': $(tr '\n' ' ' <undef)"

readelf -d "$lib" >dyn
grep -q 'NEEDED.*readline' dyn && fail "libmplua.so links readline: $(grep NEEDED dyn | tr -s ' ')"
grep -q 'NEEDED.*liblua' dyn && fail "libmplua.so links liblua (a stock lua5.4 would hold two)"
for host in "$build/tests/embed_optout" "$build/heat_host"; do
  [ -x "$host" ] || fail "no $host"
  ldd "$host" | grep -q readline && fail "$(basename "$host") loads readline: $(ldd "$host" | grep readline)"
done
if [ -f /usr/include/readline/readline.h ]; then
  readelf -d "$MPLUA" | grep -q 'NEEDED.*libreadline' || fail "the mplua program does not link readline"
fi

# the header compiles alone, as strict C11 and as C++, and a C++ host links
# against the library (mplua.h gives its functions and Lua's C linkage)
cflags="-I$(dirname "$hdr") $(pkg-config --cflags lua5.4)"
printf '#include "mplua.h"\nint main(void) { return 0; }\n' >alone.c
# shellcheck disable=SC2086
mpicc -std=c11 -Wall -Wextra -pedantic -Werror $cflags -c alone.c -o alone.o 2>err ||
  { cat err >&2; fail "mplua.h does not compile alone with mpicc -std=c11 -Wall -Wextra -pedantic"; }
cat >host.cc <<'CC'
#include "mplua.h"
int main(int argc, char **argv) {
  lua_State *L = mplua_open(&argc, &argv, 0);
  if (!L || mplua_size(L) != 1) return 1;
  lua_pushinteger(L, 42);
  int ok = lua_tointeger(L, -1) == 42 && mplua_capi_get(L) != NULL;
  return mplua_close(L, 0) == 0 && ok ? 0 : 1;
}
CC
# a sanitized library needs the sanitizer runtime loaded first: the host links it too
san=
if readelf -d "$lib" | grep -q libasan; then san="-fsanitize=address,undefined"; fi
# shellcheck disable=SC2086
mpicxx -std=c++11 -Wall -Wextra -pedantic -Werror $san $cflags host.cc -L"$build/lib" -lmplua \
    $(pkg-config --libs lua5.4) -Wl,-rpath,"$build/lib" -o host_cc 2>err ||
  { cat err >&2; fail "a C++ program including mplua.h does not compile or link against libmplua"; }
./host_cc </dev/null || fail "the C++ host failed"

grep -nE 'mplua_(repl|front|attach|stdin_tty)|readline|link_' "$hdr" >front || true
[ ! -s front ] || fail "mplua.h declares the prompt or the front end: $(cat front)"
ver=$(sed -n 's/^#define MPLUA_RELEASE "mplua \(.*\)"$/\1/p' "$hdr")
maj=$(sed -n 's/^#define MPLUA_VERSION_MAJOR \([0-9]*\)$/\1/p' "$hdr")
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[libmplua\.so\.\(.*\)\]/\1/p')
[ -n "$ver" ] && [ "$maj" = "${ver%%.*}" ] && [ "$soname" = "$maj" ] ||
  fail "version: MPLUA_RELEASE '$ver', MAJOR '$maj', SONAME libmplua.so.$soname"
[ "$(realpath "$lib")" = "$build/lib/libmplua.so.$ver" ] || fail "libmplua.so is not libmplua.so.$ver"
echo "ok ($N): $(wc -l <exported) symbols exported, all declared; no readline, no liblua; C and C++ hosts; version $ver"
