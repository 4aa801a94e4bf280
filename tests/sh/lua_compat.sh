# ranks: nompi 1 2  quick: nompi
# SPDX-License-Identifier: MIT
# mplua against a stock lua5.4, case by case: the scripts of tests/sh/compat/
# (errors of every kind, exits, finalizers, warnings, output bytes, the
# standard library) and command lines (-e, -l, -i, -v, -E, -W, --, -, the
# arg table, LUA_INIT, LUA_PATH, LUA_CPATH, binary chunks, invalid options)
# run under both, and each must give the same stdout, stderr and exit status.
# Normalized: the program's name (lua5.4's or mplua's path), addresses
# (0x...), mplua's version banner, and the lines naming mplua's own library
# directories, which it adds to package.path/cpath: the differences that
# interp/README.md documents ("Differences from lua"). At 1 rank mplua runs
# alone (a singleton, as `build/mplua script.lua`), at 2 under mpiexec.
set -eu
N=${1:?usage: $0 nompi|RANKS}
corpus=$(cd "$(dirname "$0")/compat" && pwd)
. "$(dirname "$0")/lib/common.bash"
LUA=$(command -v lua5.4) || { echo "FAIL ($N): lua5.4 is not installed" >&2; exit 1; }
cp -r "$corpus"/. .
libdir=$(dirname "$MPLUA")
unset MPLUA_LABELS LUA_CPATH LUA_CPATH_5_4

mplua_at_n() {
  case $N in
  nompi) MPLUA_DISABLED=1 "$MPLUA" "$@" ;; # (--nompi would show in arg)
  1) "$MPLUA" "$@" ;;
  *) "$MPIEXEC" -n "$N" "$MPLUA" "$@" ;;
  esac
}

# normalize FILE: the program's name, addresses, the banner, mplua's own
# library directories in package.path/cpath
normalize() {
  sed -i -e "s#$MPLUA#PROGRAM#g" -e "s#$LUA#PROGRAM#g" \
    -e 's/0x[0-9a-f][0-9a-f]*/ADDR/g' -e 's/^mplua [^ ]*  Lua /Lua /' \
    -e "\\#^	no file '$libdir/#d" -e "s#;$libdir/[^;]*##g" "$1"
}

# outcome TAG CMD...: run CMD with stdin from ./in; TAG.out, TAG.err, TAG.status
outcome() {
  local tag=$1 status=0
  shift
  "$@" <in >"$tag.out" 2>"$tag.err" || status=$?
  echo "$status" >"$tag.status"
  normalize "$tag.out"
  normalize "$tag.err"
}

differs() {
  echo "FAIL ($N): $1: mplua and lua5.4 differ in $2" >&2
  echo "  args: ${*:3}" >&2
  echo "  diff lua5.4 mplua:" >&2
  diff -a "lua.$2" "mplua.$2" >&2 || true
  exit 1
}

# same DESC ARGS...: lua5.4 ARGS and mplua ARGS give the same stdout, stderr
# and exit status
same() {
  local desc=$1 k
  shift
  outcome lua "$LUA" "$@"
  outcome mplua mplua_at_n "$@"
  for k in status out err; do
    cmp -s "lua.$k" "mplua.$k" || differs "$desc" "$k" "$@"
  done
}

# same_but_usage DESC ARGS...: an invalid command line: the same status and
# first line of stderr (mplua's usage lists more options)
same_but_usage() {
  local desc=$1 k
  shift
  outcome lua "$LUA" "$@"
  outcome mplua mplua_at_n "$@"
  sed -i '2,$d' lua.err mplua.err
  for k in status out err; do
    cmp -s "lua.$k" "mplua.$k" || differs "$desc" "$k" "$@"
  done
}

printf 'first line\n42 rest\n' >in

# every script of the corpus, with arguments
for f in *.lua; do
  same "$f" "$f" a 'b c'
done

# -e, -l, -W, -v, -i in their order
same "-e twice" -e 'x = 1' -e 'print(x, ...)'
same "-e glued" '-eprint(3)'
same "-e syntax error" -e 'print(' -e 'print("not reached")'
same "-e runtime error" -e 'print("a")' -e 'error("boom")' -e 'print("b")'
same "-e error object" -e 'error({})'
export LUA_PATH="$tmp/modules/?.lua;;"
same "-l mod" -l mymod -e 'print(mymod.name, mymod.args[1], mymod.args[2])'
same "-l g=mod" -l g=mymod -e 'print(g.name, mymod)'
same "-l glued" -lmymod -e 'print(mymod.name)'
same "-l missing" -l nosuchmod -e 'print("not reached")'
same "LUA_PATH ;;" -e 'print(package.path:find(";;", 1, true), package.path:find("./?.lua", 1, true) ~= nil)'
LUA_PATH_5_4="$tmp/modules/?.lua" same "LUA_PATH_5_4 first" -e 'print(package.path)'
same "-E ignores LUA_PATH" -E -l mymod
same "-W in order" -e 'warn("a")' -W -e 'warn("b")' -e 'warn("@off") warn("c")'
same "-W and __gc" -W gc_warn_off.lua
same "-v" -v
same "-v -e" -v -e 'print(1)'
: >in # (lua5.4's readline echoes what the prompt reads from a pipe: see README)
same "-i after a script" -i args.lua x
same "-i after a failing script" -i err_table.lua
same "-i after os.exit" -i exit_n.lua
printf 'first line\n42 rest\n' >in
unset LUA_PATH

# the arg table, --, - (stdin), a file named -
same "-e and a script" -e 'x = 1' args.lua a 'b c'
same "-- ends options" -- args.lua -e
same "arg without a script" -e 'print(arg[0] == arg[-1], #arg, ...)' -E
cp args.lua in
same "- reads stdin" - p q
same "-- - runs the file -" -e 'print(1)' -- - p
cp err_runtime.lua in
same "- fails" -
cp shebang.lua in
same "- skips a shebang" - x
cp bom_shebang.lua in
same "- skips a byte order mark" -
printf 'first line\n42 rest\n' >in

# LUA_INIT and LUA_INIT_5_4
LUA_INIT='print("init", #arg, arg[1])' same "LUA_INIT" args.lua q
LUA_INIT='print("init")' same "-E ignores LUA_INIT" -E -e 'print(2)'
LUA_INIT_5_4='print(54)' LUA_INIT='print(0)' same "LUA_INIT_5_4 first" -e 'print(1)'
printf 'print("from file", ...)\n' >init.lua
LUA_INIT="@$tmp/init.lua" same "LUA_INIT=@file" -e 'print(1)'
LUA_INIT="@$tmp/nosuch.lua" same "LUA_INIT=@missing" -e 'print(1)'
LUA_INIT='error("init failed")' same "LUA_INIT error" -e 'print(1)'
LUA_INIT='x = = 1' same "LUA_INIT syntax error" -e 'print(1)'

# a C module through LUA_CPATH (and ;; for the default), with a submodule
# in the same library
cat >cmod.c <<'EOF'
#include "lua.h"
#include "lauxlib.h"
static int hello(lua_State *L) { lua_pushstring(L, "hello from C"); return 1; }
int luaopen_cmod(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, hello);
  lua_setfield(L, -2, "hello");
  return 1;
}
int luaopen_cmod_sub(lua_State *L) { lua_pushstring(L, "sub"); return 1; }
EOF
# shellcheck disable=SC2046
cc -shared -fPIC $(pkg-config --cflags lua5.4) -o cmod.so cmod.c
export LUA_CPATH="$tmp/?.so;;"
same "C module" -e 'local m = require "cmod" print(m.hello(), package.loaded.cmod == m, require "cmod.sub")'
same "-l C module" -l cmod -e 'print(cmod.hello())'
LUA_CPATH_5_4="$tmp/nosuch/?.so" same "LUA_CPATH_5_4 first" -l cmod
unset LUA_CPATH

# scripts that are not there, not files, binary chunks
same "missing script" nosuch.lua
mkdir adir
same "a directory" adir
if command -v luac5.4 >/dev/null; then
  luac5.4 -o bin.luac args.lua
  same "binary chunk" bin.luac x y
  luac5.4 -s -o strip.luac err_runtime.lua
  same "stripped binary chunk" strip.luac
else
  echo "note: luac5.4 not installed, no binary chunks compared" >&2
fi

# os.exit's argument
for code in 'true' 'false' '7' '300' '-1' '1.0' '1.5' '"x"' '0, true'; do
  same "os.exit($code)" -e "io.write('out') os.exit($code)"
done

# invalid command lines
same_but_usage "unknown option" -x
same_but_usage "-e without its argument" -e
same_but_usage "-l without its argument" -l
same_but_usage "option with a suffix" -ix

# a reader that goes away: both end by SIGPIPE
status=0
"$LUA" -e 'for i = 1, 1e6 do print(i) end' </dev/null | head -1 >/dev/null || true
want=${PIPESTATUS[0]}
mplua_at_n -e 'for i = 1, 1e6 do print(i) end' </dev/null | head -1 >/dev/null || true
status=${PIPESTATUS[0]}
if [ "$status" != "$want" ]; then
  echo "FAIL ($N): output to a closed pipe: exit status $status, lua5.4's $want" >&2
  exit 1
fi

# a hangup (the terminal closed) ends a running script by the default
# action, as it ends lua: 128 + SIGHUP (UCX, under MPICH, catches SIGHUP when
# its library loads; the program gives it back). Under nohup (SIGHUP ignored
# from the start) both run on. Each run gets a SIGTERM right after the
# SIGHUP, so that one that survives the SIGHUP ends with 128 + SIGTERM
# (pending together, the lower-numbered signal is delivered first).
# hangup_status CMD...: start CMD spinning, send it SIGHUP then SIGTERM,
# print its exit status
hangup_status() {
  local pid status=0 end=$((SECONDS + 120))
  : >hup.err
  "$@" -e 'io.stderr:write("spinning\n") while true do end' </dev/null 2>hup.err &
  pid=$!
  until grep -q spinning hup.err; do
    [ "$SECONDS" -lt "$end" ] || { kill -KILL "$pid"; echo "never started"; return; }
    sleep 0.1
  done
  kill -HUP "$pid"
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || status=$?
  echo "$status"
}
# hangup_same DESC [nohup]: mplua ends as lua5.4 does
hangup_same() {
  local want got
  want=$(hangup_status ${2:-} "$LUA")
  if [ "$N" = 2 ]; then got=$(hangup_status "$MPIEXEC" -n "$N" "$MPLUA")
  else got=$(hangup_status ${2:-} "$MPLUA"); fi
  [ "$got" = "$want" ] || { echo "FAIL ($N): $1: $got, lua5.4: $want" >&2; exit 1; }
}
[ "$N" != nompi ] || export MPLUA_DISABLED=1
if [ "$N" = 2 ]; then
  # mpiexec gets the signal: hydra passes it to the ranks
  hangup_same "SIGHUP to mpiexec"
else
  hangup_same "SIGHUP to a running script"
  hangup_same "SIGHUP under nohup" nohup
fi
unset MPLUA_DISABLED
echo "PASS ($N)"
