# Shared by the shell tests (sourced after N is set): a fresh temporary
# directory with a clean Lua environment, `run` to start mplua at N ranks,
# and checks that print what differed. Not a test itself (ctest runs
# tests/sh/*.sh only).
: "${MPLUA:?}" "${MPIEXEC:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
unset LUA_INIT LUA_INIT_5_4 LUA_PATH LUA_PATH_5_4 MPLUA_DISABLED
: >in

# mplua at N ranks (alone with --nompi for "nompi")
run() {
  if [ "$N" = nompi ]; then "$MPLUA" --nompi "$@"
  else "$MPIEXEC" -n "$N" "$MPLUA" "$@"; fi
}

# check DESC STATUS STDOUT ARGS...: run with stdin from ./in; the exit status
# and stdout must match exactly
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

# session DESC STATUS INPUT TRANSCRIPT: feed INPUT to the prompt
session() {
  printf '%s' "$3" >in
  check "$1" "$2" "$4"
}

# err_has DESC TEXT [COUNT]: stderr holds TEXT (exactly COUNT times if given)
err_has() {
  got=$(grep -cF -- "$2" err || true)
  if [ "$got" = 0 ] || { [ $# -ge 3 ] && [ "$got" != "$3" ]; }; then
    echo "FAIL ($N): $1: stderr has '$2' $got times (want ${3:-some})" >&2
    cat err >&2
    exit 1
  fi
}
