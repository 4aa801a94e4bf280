# ranks: nompi 1 2
# Exit statuses and batch mode (-b): 0 on success, 1 on any error, os.exit's
# own status on every rank; -b never prompts (stdin is then the script) and
# ends the whole job with status 1 at the first fault in a task, even one the
# leader's code would catch.
set -eu
N=${1:?usage: $0 nompi|RANKS}
: "${MPLUA:?}" "${MPIEXEC:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
unset LUA_INIT LUA_INIT_5_4 MPLUA_DISABLED

run() {
  if [ "$N" = nompi ]; then "$MPLUA" --nompi "$@"
  else "$MPIEXEC" -n "$N" "$MPLUA" "$@"; fi
}
: >in

# check DESC STATUS STDOUT ARGS...: exit status and stdout must match exactly
check() {
  desc=$1 want_status=$2
  printf '%s' "$3" >want
  shift 3
  status=0
  run "$@" <in >out 2>err || status=$?
  if [ "$status" != "$want_status" ] || ! cmp -s want out; then
    echo "FAIL ($N): $desc" >&2
    echo "  args: $*" >&2
    echo "  exit status $status (want $want_status)" >&2
    echo "  stdout, want vs got:" >&2
    diff want out >&2 || true
    echo "  stderr:" >&2
    cat err >&2
    exit 1
  fi
}
err_has() {
  got=$(grep -cF -- "$2" err || true)
  if [ "$got" = 0 ] || { [ $# -ge 3 ] && [ "$got" != "$3" ]; }; then
    echo "FAIL ($N): $1: stderr has '$2' $got times (want ${3:-some})" >&2
    cat err >&2
    exit 1
  fi
}

# plain statuses
check "success" 0 $'ok\n' -e 'print("ok")'
check "error in -e" 1 "" -e 'error("e1")'
check "os.exit(3) in -e" 3 "" -e 'os.exit(3)' -e 'print("not reached")'
check "os.exit(true)" 0 "" -e 'os.exit(true)'
check "os.exit(false)" 1 "" -e 'os.exit(false)'
printf 'print("s")\nos.exit(5)\n' >exit5.lua
check "os.exit(5) in a script" 5 $'s\n' exit5.lua

# -b: statuses 0 and 1
printf 'print("batch ok")\n' >ok.lua
check "-b success" 0 $'batch ok\n' -b ok.lua
check "-b error in -e" 1 "" -b -e 'error("b1")'
err_has "-b error in -e" "b1" 1
check "-b os.exit(4)" 4 "" -b -e 'os.exit(4)'
printf 'print(1 + 1)\n' >in
check "-b without script runs stdin, no prompt" 0 $'2\n' -b
printf 'error("from stdin")\n' >in
check "-b stdin script error" 1 "" -b
err_has "-b stdin script error" "from stdin" 1
: >in

# a fault in a task: caught by pcall without -b; ends the job with -b
task='local ok = pcall(mp.exec, function() if mp.rank == mp.size - 1 then error("task fault") end end)
print("caught", ok)'
check "task fault caught without -b" 0 $'caught\tfalse\n' -e "$task"
check "task fault ends the job with -b" 1 "" -b -e "$task"
err_has "task fault with -b" "task fault" 1
echo "ok"
