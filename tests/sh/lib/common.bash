# SPDX-License-Identifier: MIT
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

# joined DESC STATUS INPUT [ARGS...]: feed INPUT to mplua with stdout and
# stderr into one file, ./out (a terminal's view: what comes first is shown
# first); the exit status must match
joined() {
  desc=$1 want_status=$2
  printf '%s' "$3" >in
  shift 3
  status=0
  run "$@" <in >out 2>&1 || status=$?
  if [ "$status" != "$want_status" ]; then
    echo "FAIL ($N): $desc: exit status $status (want $want_status)" >&2
    cat out >&2
    exit 1
  fi
}

# in_order DESC FILE PREFIX...: FILE has lines beginning with each PREFIX,
# in this order (other lines may come between)
in_order() {
  local desc=$1 file=$2 i=0 line
  shift 2
  local want=("$@")
  while [ "$i" -lt "${#want[@]}" ] && IFS= read -r line; do
    case $line in "${want[$i]}"*) i=$((i + 1)) ;; esac
  done <"$file"
  if [ "$i" -lt "${#want[@]}" ]; then
    echo "FAIL ($N): $desc: no line '${want[$i]}...' in order in:" >&2
    cat "$file" >&2
    exit 1
  fi
}

# count_lines DESC FILE PREFIX COUNT: exactly COUNT lines begin with PREFIX
count_lines() {
  local got
  got=$(grep -c -- "^$3" "$2" || true)
  if [ "$got" != "$4" ]; then
    echo "FAIL ($N): $1: $got lines begin with '$3' (want $4):" >&2
    cat "$2" >&2
    exit 1
  fi
}

# lua_asan LIB: when LIB (a libmplua.so) is built with AddressSanitizer, a
# stock lua5.4 that loads it needs the sanitizer runtimes preloaded
# (exported for the rest of the test). Leaks are not checked there: lua5.4
# and its modules are not ours.
lua_asan() {
  if readelf -d "$1" 2>/dev/null | grep -q libasan; then
    export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
    export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  fi
}
