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
