# ranks: 2  quick: none
# SPDX-License-Identifier: MIT
# Ctrl-C that rank 0 cannot take, in a real terminal (tmux) under the front
# end: a coroutine spinning in pure Lua never meets the poll hook, so its
# interrupt stays untaken. A Ctrl-C while one sent over 2 s ago is still
# untaken says so, once; the next one ends the job (status 130, as a shell
# sees of lua ended by its second Ctrl-C) and leaves no process behind.
# Interrupts that are taken, however far apart, say nothing. The only
# waits on the clock are for the front end's threshold (the test waits
# longer than it); every other step waits for the screen.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/term.bash"
mark="MPLUA_TEST_STUCK=$tmp" # in the environment of this test's processes only
session="$mark MPLUA_LAUNCHER='$MPIEXEC -n' MPLUA_HISTORY= INPUTRC=/dev/null '$MPLUA' -n $N"
warning="mplua: rank 0 has not taken the interrupt"
past_threshold() { sleep 2.5; } # the front end's threshold is 2 s

# this test's processes: the front end, the launcher, the ranks
ours() { grep -lzx -- "$mark" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true; }

term_start "$session"
wait_prompt "the first prompt"

# taken interrupts, the second one more than the threshold after the first:
# reported each time, no warning
for k in 1 2; do
  type_text "print('loop $k') while true do end"
  keys Enter
  wait_screen "loop $k running" grep -qx "loop $k"
  [ "$k" = 1 ] || past_threshold
  keys C-c
  wait_count "interrupt #$k reported" "interrupted!" "$k"
  wait_prompt "after interrupt #$k"
done
! screen | grep -qF "$warning" || term_fail "a warning for interrupts that were taken"

# a coroutine spinning in pure Lua: the interrupt is not taken
type_text "coroutine.wrap(function() print('spinning') while true do end end)()"
keys Enter
wait_screen "the coroutine spinning" grep -qx "spinning"
keys C-c
past_threshold
[ "$(count 'interrupted!')" = 2 ] || term_fail "the spinning coroutine was interrupted"
[ "$(last_line)" != ">" ] || term_fail "the spinning coroutine ended"
! screen | grep -qF "$warning" || term_fail "a warning before a second Ctrl-C"
keys C-c
wait_screen "the warning" grep -qF "$warning"
[ "$(count "$warning")" = 1 ] || term_fail "not one warning"
screen | grep -qF "press Ctrl-C again to end the job" || term_fail "the warning does not say what to do"
! screen | grep -q '^EXIT ' || term_fail "the job ended before the third Ctrl-C"
[ -n "$(ours)" ] || term_fail "no process of the job before the third Ctrl-C"
keys C-c
wait_screen "the end of the job" grep -q '^EXIT '
screen | grep -qx 'EXIT 130' || term_fail "the status of the ended job is not 130"
[ "$(count "$warning")" = 1 ] || term_fail "not one warning"
end=$((SECONDS + 60))
while [ -n "$(ours)" ]; do # the launcher and ranks may die just after the front end
  [ "$SECONDS" -lt "$end" ] || term_fail "processes left behind: $(ours | tr '\n' ' ')"
  sleep 0.1
done
echo "front_stuck ok"
