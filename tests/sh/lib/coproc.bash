# SPDX-License-Identifier: MIT
# A program driven through pipes as a coprocess (bash's coproc), for tests
# that talk to a prompt: each step waits for the text it expects, so nothing
# depends on timing. Source it after setting $tmp, then
#   coproc_start CMD ARGS...   start CMD (its stderr to $tmp/err)
#   upto TEXT                  read the output up to and including TEXT
#   send LINE                  write LINE and a newline to its input
# $seen holds everything read so far. A test may define fail() before the
# first call to word the failure itself (default: report, transcript, stderr).
pid=""
seen=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT

if ! declare -F fail >/dev/null; then
  fail() {
    echo "FAIL (${N:-?}): $*" >&2
    echo "transcript so far:" >&2; printf '%s\n' "$seen" >&2
    cat "$tmp/err" >&2 2>/dev/null || true
    exit 1
  }
fi

coproc_start() {
  coproc P { exec "$@" 2>"$tmp/err"; }
  # bash forgets the coprocess's pid and pipes once it exits: keep them
  pid=$P_PID out=${P[0]} in=${P[1]}
}

upto() {
  local c buf=""
  while IFS= read -r -n1 -d '' c <&"$out"; do
    buf+=$c
    seen+=$c
    case $buf in *"$1") return 0 ;; esac
  done
  fail "output ended before '$1'"
}

send() { printf '%s\n' "$1" >&"$in"; }

# For tests that signal rank 0 at a known point: the task prints
# "TEXT <pid> ." (PID_LUA below gives the pid in Lua) and
#   kill_int_after TEXT   reads up to the pid and sends it SIGINT
#   finish_interrupted    ends the input, waits for exit status 0 and checks
#                         that "mp.exec: interrupted!" came before a prompt
PID_LUA='io.open("/proc/self/stat"):read("a"):match("^(%d+)")'
kill_int_after() {
  upto "$1"
  upto " ."
  local p=${seen% .}
  kill -INT "${p##* }"
}
finish_interrupted() {
  exec {in}>&-
  local status=0
  wait "$pid" || status=$?
  pid=""
  [ "$status" = 0 ] || fail "exit status $status"
  # the report comes before the next prompt, on stdout (the prompt joins
  # rank 0's stderr to stdout's pipe, so that hydra keeps their order)
  case $seen in
    *"mp.exec: interrupted!"*"> "*) ;;
    *) fail "no interrupt report before the prompt" ;;
  esac
}
