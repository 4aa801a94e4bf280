# ranks: 2
# SPDX-License-Identifier: MIT
# Keys typed faster than the front end reads them keep their order with
# Ctrl-C (interp/README.md, "Ctrl-C"). The front end is stopped (SIGSTOP)
# while the keys reach the terminal, so they all wait unread, as they do
# when a loaded machine gives it no time; it goes on once the terminal has
# taken the Ctrl-C (as a key, or as a signal pending for the front end).
# Then: text typed before Ctrl-C at the prompt is shown with "^C" and
# dropped (never swallowed by the terminal's flush of unread input); and
# Ctrl-C typed right after Enter interrupts the command that line started,
# never the next prompt.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/term.bash"
session="MPLUA_LAUNCHER='$MPIEXEC -n' MPLUA_HISTORY= INPUTRC=/dev/null '$MPLUA' -n $N"

# the front end: the process of `mplua -n N` that catches SIGINT
front_pid() {
  local p
  for p in $(pgrep -f -- "$MPLUA -n $N" || true); do
    [ $((0x$(awk '/^SigCgt:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0) & 2)) != 0 ] &&
      echo "$p" && return 0
  done
  return 1
}

# the terminal has taken Ctrl-C after N unread bytes: as a key (the bytes and
# it wait to be read: N + 1) or as SIGINT, pending for the stopped front end
# (the bytes are flushed)
taken() {
  local pend
  pend=$(awk '/^(SigPnd|ShdPnd):/ {print $2}' "/proc/$front/status" | while read -r m; do
    echo $((0x$m & 2)); done | sort -u | tail -n 1)
  [ "$pend" != 0 ] && return 0
  perl -e 'use Fcntl; sysopen(my $t, $ARGV[0], O_RDONLY | O_NOCTTY | O_NONBLOCK) or exit 1;
    my $n = pack("L", 0); ioctl($t, 0x541B, $n) or exit 1; exit(unpack("L", $n) >= $ARGV[1] ? 0 : 1)' \
    "$(readlink "/proc/$front/fd/0")" "$1"
}

# stopped TEXT KEYS...: type TEXT then KEYS (the last one C-c) while the
# front end is stopped; let it go on once the terminal has taken them
stopped() {
  local text=$1 n=${#1} end=$((SECONDS + 120))
  shift
  kill -STOP "$front"
  until [ "$(awk '{print $3}' "/proc/$front/stat")" = T ]; do
    [ "$SECONDS" -lt "$end" ] || term_fail "the front end did not stop"
    sleep 0.01
  done
  type_text "$text"
  keys "$@"
  n=$((n + $# - 1)) # the keys before Ctrl-C (Enter: one byte)
  until taken "$n"; do
    [ "$SECONDS" -lt "$end" ] || term_fail "the terminal never took Ctrl-C"
    sleep 0.01
  done
  kill -CONT "$front"
}

term_start "$session"
wait_prompt "the first prompt"
front=$(front_pid) || term_fail "no front end"

stopped "dropped" C-c
wait_screen "the dropped line with its ^C" grep -qx "> dropped^C"
wait_prompt "after Ctrl-C at the prompt"

stopped "mp.exec(function() while true do end end)" Enter C-c
wait_count "the task interrupted" "interrupted!" 1
wait_prompt "after the interrupted task"
type_text "print('after: ' .. mp.exec(function() return mp.handin(1) end))"
keys Enter
wait_screen "the next command's answer" grep -qx "after: $N"
wait_prompt "after the answer"
[ "$(count 'interrupted!')" = 1 ] || term_fail "an interrupt reached another command"
! screen | grep -qx '> ^C' || term_fail "a Ctrl-C reached a prompt"
keys C-d
wait_screen "the end of the job" grep -qx 'EXIT 0'
echo "front_typeahead ok"
