# ranks: nompi 1 2  quick: nompi 1
# SPDX-License-Identifier: MIT
# The command line, option by option, as in lua: -e, -l mod, -l g=mod, -v, -h,
# -, --, the arg table and the script's `...`, -E with LUA_INIT/LUA_PATH,
# LUA_INIT_5_4 over LUA_INIT, -i after a script, and invalid lines (one usage
# message, status 1, on every rank count). Only rank 0 runs any of it.
set -eu
N=${1:?usage: $0 nompi|RANKS}
. "$(dirname "$0")/lib/common.bash"
err_empty() {
  if [ -s err ]; then echo "FAIL ($N): $1: unexpected stderr:" >&2; cat err >&2; exit 1; fi
}

# -e, in order, several times
check "-e" 0 $'1\n2\n' -e 'x = 1' -e 'print(x)' -e 'print(x + 1)'
err_empty "-e"
check "-e glued" 0 $'3\n' '-eprint(3)'
check "-e error" 1 "" -e 'print(' -e 'print("not reached")'
err_has "-e syntax error" "(command line):1:"
check "-e runtime error stops" 1 $'a\n' -e 'print("a")' -e 'error("boom")' -e 'print("b")'
err_has "-e runtime error" "boom"

# -l mod and -l g=mod, with a module found through LUA_PATH
mkdir mods
printf 'return { name = "mymod" }\n' >mods/mymod.lua
export LUA_PATH="$tmp/mods/?.lua"
check "-l mod" 0 $'mymod\n' -l mymod -e 'print(mymod.name)'
check "-l g=mod" 0 $'mymod\tnil\n' -l g=mymod -e 'print(g.name, mymod)'
check "-l glued" 0 $'mymod\n' -lmymod -e 'print(mymod.name)'
check "-l missing module" 1 "" -l nosuchmod -e 'print("not reached")'
err_has "-l missing module" "module 'nosuchmod' not found"

# -E: LUA_PATH and LUA_INIT ignored (os.getenv still sees them)
check "-E ignores LUA_PATH" 1 "" -E -l mymod
err_has "-E ignores LUA_PATH" "module 'mymod' not found"
check "-E keeps os.getenv" 0 "$tmp/mods/?.lua"$'\n' -E -e 'print(os.getenv("LUA_PATH"))'
unset LUA_PATH

# LUA_INIT: a chunk or @file, run before -e; LUA_INIT_5_4 wins over LUA_INIT
export LUA_INIT='print("init")'
check "LUA_INIT" 0 $'init\n2\n' -e 'print(2)'
check "-E ignores LUA_INIT" 0 $'2\n' -E -e 'print(2)'
export LUA_INIT_5_4='print("init54")'
check "LUA_INIT_5_4" 0 $'init54\n2\n' -e 'print(2)'
unset LUA_INIT_5_4
printf 'print("from file")\n' >init.lua
export LUA_INIT="@$tmp/init.lua"
check "LUA_INIT=@file" 0 $'from file\n' -e ''
export LUA_INIT='error("init failed")'
check "LUA_INIT error" 1 "" -e 'print("not reached")'
err_has "LUA_INIT error" "init failed"
unset LUA_INIT

# the script: arg[0], arg[1..], negative indices (interpreter, options), `...`
cat >args.lua <<'EOF'
print(select("#", ...), ...)
print(arg[0], #arg, arg[1], arg[2])
local lo = 0
while arg[lo - 1] ~= nil do lo = lo - 1 end
local opts = {}
for i = lo + 1, -1 do opts[#opts + 1] = arg[i] end
print(arg[lo] == os.getenv("MPLUA"), table.concat(opts, " "))
EOF
if [ "$N" = nompi ]; then pre="--nompi "; else pre=""; fi
check "arg and ..." 0 $'2\ta\tb c\nargs.lua\t2\ta\tb c\ntrue\t'"$pre"$'-e x=1\n' -e x=1 args.lua a 'b c'
check "no script arguments" 0 $'0\nargs.lua\t0\tnil\tnil\ntrue\t'"${pre% }"$'\n' args.lua
check "-- ends options" 0 $'1\t-e\nargs.lua\t1\t-e\tnil\ntrue\t'"$pre"$'--\n' -- args.lua -e
check "missing script" 1 "" nosuch.lua
err_has "missing script" "cannot open nosuch.lua"
printf 'x = = 1\n' >bad.lua
check "script syntax error" 1 "" bad.lua
err_has "script syntax error" "bad.lua:1:"
printf 'print("before")\nerror("in script")\nprint("after")\n' >fails.lua
check "script runtime error" 1 $'before\n' fails.lua
err_has "script runtime error" "in script"

# - : stdin is the script (with arguments); after --, "-" is a file name
printf 'print("stdin", ...)\n' >in
check "- reads stdin" 0 $'stdin\tp\tq\n' - p q
: >in
printf 'print("file named -", ...)\n' >./-
check "-- -" 0 $'file named -\tz\n' -- - z

# -v; -i implies -v and gives the prompt after the script
version=$(run -v </dev/null)
case $version in
  "mplua "*"Lua 5.4"*"Copyright"*) ;;
  *) echo "FAIL ($N): -v printed '$version'" >&2; exit 1 ;;
esac
check "-v alone: no prompt" 0 "$version"$'\n' -v
check "-v with -e" 0 "$version"$'\n5\n' -v -e 'print(5)'
printf 'y = 7\n' >sety.lua
printf 'y\ny * 2\n' >in
check "-i after a script" 0 "$version"$'\n> 7\n> 14\n> \n' -i sety.lua
check "-e then -i" 0 "$version"$'\n> 7\n> 14\n> \n' -e 'y = 7' -i
check "_PROMPT" 0 "$version"$'\nlua> 7\nlua> 14\nlua> \n' -e 'y = 7; _PROMPT = "lua> "' -i
: >in

# -h / --help: usage on stdout, status 0
for h in -h --help; do
  run "$h" </dev/null >out 2>err || { echo "FAIL ($N): $h exit status $?" >&2; exit 1; }
  grep -q '^usage: ' out || { echo "FAIL ($N): $h printed no usage" >&2; cat out >&2; exit 1; }
  for o in -e -l -i -v -E -W -n -j -b --nompi; do
    grep -qF -- "  $o" out || { echo "FAIL ($N): usage lacks $o" >&2; exit 1; }
  done
  err_empty "$h"
done

# -W: warnings on, as in lua 5.4, from where it stands among -e and -l; on
# the workers too
check "no -W: warnings off" 0 "" -e 'warn("hidden")'
err_empty "no -W"
check "-W" 0 "" -e 'warn("before")' -W -e 'warn("after")'
err_has "-W" "Lua warning: after" 1
if grep -q before err; then echo "FAIL ($N): -W acted before its place" >&2; exit 1; fi
if [ "$N" != nompi ] && [ "$N" -ge 2 ]; then
  check "-W on a worker" 0 "" -W -e 'mp.exec(function() if mp.rank == 1 then warn("from 1") end end)'
  err_has "-W on a worker" "Lua warning: from 1" 1
fi

# invalid lines: one message and one usage on stderr, status 1, nothing run
check "unknown option" 1 "" -q -e 'print("not reached")'
err_has "unknown option" "unrecognized option '-q'" 1
err_has "unknown option" "usage: " 1
check "unknown long option" 1 "" --frobnicate
err_has "unknown long option" "unrecognized option '--frobnicate'" 1
check "option with extra characters" 1 "" -vx
err_has "option with extra characters" "unrecognized option '-vx'" 1
check "-e without argument" 1 "" -e
err_has "-e without argument" "'-e' needs argument" 1
err_has "-e without argument" "usage: " 1
check "-l followed by an option" 1 "" -l -v
err_has "-l followed by an option" "'-l' needs argument" 1
check "-j without argument" 1 "" -j
err_has "-j without argument" "'-j' needs argument" 1
check "-i with -b" 1 "" -b -i
err_has "-i with -b" "'-i' cannot be used with '-b'" 1
check "-n not first" 1 "" -e 'print(1)' -n 2
err_has "-n not first" "'-n' needs a number of ranks (1 or more) and must be the first option" 1
check "-n 0" 1 "" -n 0
err_has "-n 0" "'-n' needs a number of ranks" 1
if [ "$N" = 1 ]; then # (with --nompi, every process of the job would say it)
  check "-n with --nompi" 1 "" -n 2 --nompi
  err_has "-n with --nompi" "'-n' cannot be used with '--nompi'" 1
fi
# messages name the program as argv[0] gives it, path and all, as lua.c does
# (Lua's own test suite, main.lua, checks "<argv[0]>: ...")
check "program name" 1 "" -e 'error("named")'
err_has "program name" "$MPLUA: (command line):1: named" 1
echo "ok"
