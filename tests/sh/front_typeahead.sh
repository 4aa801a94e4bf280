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
# never the next prompt; and keys typed between a dropped line and the next
# prompt (rank 0 stopped meanwhile) reach that prompt in order, Ctrl-C too.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/term.bash"
session="MPLUA_LAUNCHER='$MPIEXEC -n' MPLUA_HISTORY= INPUTRC=/dev/null '$MPLUA' -n $N"

# the terminal has taken N keys: they wait to be read (Ctrl-C as a key), or
# a Ctrl-C among them is SIGINT, pending for the stopped front end (the keys
# before it are flushed)
taken() {
  local pend
  pend=$(awk '/^(SigPnd|ShdPnd):/ {print $2}' "/proc/$front/status" | while read -r m; do
    echo $((0x$m & 2)); done | sort -u | tail -n 1)
  [ "$pend" != 0 ] && return 0
  perl -e 'use Fcntl; sysopen(my $t, $ARGV[0], O_RDONLY | O_NOCTTY | O_NONBLOCK) or exit 1;
    my $n = pack("L", 0); ioctl($t, 0x541B, $n) or exit 1; exit(unpack("L", $n) >= $ARGV[1] ? 0 : 1)' \
    "$(readlink "/proc/$front/fd/0")" "$1"
}

# stopped TEXT KEYS...: type TEXT then KEYS (C-c, Enter: a byte each) while
# the front end is stopped; let it go on once the terminal has taken them
stopped() {
  local text=$1 n=${#1} end=$((SECONDS + 120))
  shift
  term_stop "$front"
  type_text "$text"
  keys "$@"
  n=$((n + $#))
  until taken "$n"; do
    [ "$SECONDS" -lt "$end" ] || term_fail "the terminal never took the keys"
    sleep 0.01
  done
  kill -CONT "$front"
}

term_start "$session"
wait_prompt "the first prompt"
front=$(term_front) || term_fail "no front end"

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

# between a dropped line and the next prompt (rank 0 is stopped, so that
# prompt cannot come yet): what is typed there, Ctrl-C too, waits for the
# next prompt in order, neither echoed by the terminal nor flushed by it
rank0=$(term_rank0 "$front") || term_fail "no rank 0"
term_stop "$rank0"
type_text "dropped 1"
keys C-c
wait_screen "the first dropped line" grep -qx "> dropped 1^C"
wait_idle "$front" # it has dropped the line and waits for the next prompt
stopped "dropped 2" C-c
stopped "print('kept ' .. 1 + 1)" Enter
kill -CONT "$rank0"
wait_screen "the line dropped before its prompt" grep -qx "> dropped 2^C"
wait_screen "the line typed before its prompt" grep -qx "kept 2"
wait_prompt "after the kept line"
! screen | grep -qx "print('kept ' .. 1 + 1)" || term_fail "the terminal echoed keys typed for the prompt"
screen | grep -qx "> print('kept ' .. 1 + 1)" || term_fail "the kept line is not at its prompt"
[ "$(count 'interrupted!')" = 1 ] || term_fail "a Ctrl-C typed ahead interrupted a command"
keys C-d
wait_screen "the end of the job" grep -qx 'EXIT 0'
echo "front_typeahead ok"
