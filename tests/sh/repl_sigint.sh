# ranks: nompi 1
# SPDX-License-Identifier: MIT
# Ctrl-C (SIGINT) while the prompt waits for input drops the pending input,
# even an unfinished multi-line chunk, and shows a fresh prompt on a new line;
# the session goes on. The prompt is driven through pipes as a coprocess: each
# step waits for the prompt text before acting, so nothing depends on timing.
# At 1 rank the signal goes to the mplua process under mpiexec (its child).
set -eu
N=${1:?usage: $0 nompi|1}
: "${MPLUA:?}" "${MPIEXEC:?}"
tmp=$(mktemp -d)
fail() { echo "FAIL ($N): $*" >&2; echo "transcript so far:" >&2; printf '%s\n' "$seen" >&2; exit 1; }
. "$(dirname "$0")/lib/coproc.bash"
if [ "$N" = nompi ]; then
  coproc_start "$MPLUA" --nompi
else
  coproc_start "$MPIEXEC" -n "$N" "$MPLUA"
fi

upto "> " # the first prompt: mplua is running and waiting for input
# The pid to signal: mplua itself; under mpiexec, the mplua process whose
# ancestors include this mpiexec.
target=$pid
if [ "$N" != nompi ]; then
  target=""
  exe=$(readlink -f "$MPLUA")
  for p in $(pgrep -f -- "$MPLUA" || true); do
    [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$exe" ] || continue
    a=$p
    while [ "$a" -gt 1 ] && [ "$a" != "$pid" ]; do
      a=$(awk '{print $4}' "/proc/$a/stat" 2>/dev/null) || a=1 # another test's, gone
    done
    if [ "$a" = "$pid" ]; then target=$p; fi
  done
  [ -n "$target" ] || fail "cannot find the mplua process under mpiexec"
fi

send "x = 1"
upto "> "
send "x = x +"              # unfinished chunk
upto ">> "
kill -INT "$target"         # drops it
upto $'\n> '
send "x"                    # x is still 1: the chunk never ran
upto $'1\n> '
kill -INT "$target"         # at an empty first-line prompt
upto $'\n> '
send "for i = 1, 2 do"
upto ">> "
send "  x = x + i"
upto ">> "
kill -INT "$target"
upto $'\n> '
send "x + 1"                # the session goes on
upto $'2\n> '
exec {in}>&- # end of input ends the session with status 0
status=0
wait "$pid" || status=$?
pid=""
[ "$status" = 0 ] || fail "exit status $status after end of input (want 0)"
if [ -s "$tmp/err" ]; then
  echo "FAIL ($N): unexpected stderr:" >&2
  cat "$tmp/err" >&2
  exit 1
fi
echo "ok"
