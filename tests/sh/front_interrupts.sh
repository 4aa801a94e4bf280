# ranks: 4  quick: none
# SPDX-License-Identifier: MIT
# Ctrl-C in a real terminal (tmux) under the front end, as a nervous user
# presses it: many rounds of {a spinning task, two Ctrl-C back to back, a
# Ctrl-C at the idle prompt, a task that must answer}. Every round the task
# is reported as interrupted (not as a fault of rank 0), the second Ctrl-C
# never reaches the next command, and the session lives on. Then Ctrl-C
# while output flows, and Ctrl-C during start-up (it goes to what rank 0
# runs first: the prompt drops it, a script is interrupted). Each step
# waits for what it expects on the screen; no step depends on timing.
set -eu
N=${1:?usage: $0 RANKS}
ROUNDS=${MPLUA_TEST_ROUNDS:-25}
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/term.bash"
session="MPLUA_LAUNCHER='$MPIEXEC -n' MPLUA_HISTORY= INPUTRC=/dev/null '$MPLUA' -n $N"

# never: a fault report, a lost session, or an interrupt in a later command
no_harm() {
  ! screen | grep -q 'faulted' || term_fail "a report blames a rank ($1)"
  ! screen | grep -qE 'BAD TERMINATION|^EXIT ' || term_fail "the session ended ($1)"
}

term_start "$session"
wait_prompt "the first prompt"
for k in $(seq "$ROUNDS"); do
  type_text "mp.exec(function() if mp.rank == $N - 1 then print('spin' .. 'ning $k') end while true do end end)"
  keys Enter
  wait_screen "spinning #$k" grep -qx "spinning $k"
  keys C-c # the second press 0-80 ms later: a person's double press, which
  sleep "0.0$((k % 5 * 2))" # lands in the task, its abort or its report
  keys C-c
  wait_count "interrupt #$k reported" "interrupted!" "$k"
  wait_prompt "after interrupt #$k"
  type_text "dropped $k"
  keys C-c
  wait_screen "Ctrl-C at the prompt #$k" grep -qx "> dropped $k^C"
  wait_prompt "after Ctrl-C at the prompt #$k"
  type_text "print('answer $k: ' .. mp.exec(function() return mp.handin(1) end))"
  keys Enter
  wait_screen "the answer #$k" grep -qx "answer $k: $N"
  wait_prompt "after the answer #$k"
  no_harm "round $k"
done
[ "$(count 'mp.exec: interrupted!')" = "$ROUNDS" ] || term_fail "not one report per interrupted task"
[ "$(count 'interrupted!')" = "$ROUNDS" ] || term_fail "an interrupt reached another command"

keys C-d
wait_screen "the end of the job" grep -qx 'EXIT 0'

# while output flows: rank 0 prints long lines as fast as it can (what
# is in flight when it stops still fits the terminal's scrollback), the
# others spin
term_start "$session"
wait_prompt "the prompt of the flowing session"
type_text "mp.exec(function() local i, pad = 0, string.rep('x', 150) while true do i = i + 1 if mp.rank == 0 then print('flow ' .. i .. ' ' .. pad) end end end)"
keys Enter
wait_screen "output flowing" grep -q '^flow [0-9]*000 x'
keys C-c
wait_count "the flowing task interrupted" "interrupted!" 1
wait_prompt "after the flowing task"
type_text "print('after flow: ' .. mp.exec(function() return mp.handin(1) end))"
keys Enter
wait_screen "the answer after the flow" grep -qx "after flow: $N"
no_harm "output flowing"
keys C-d
wait_screen "the end of the job" grep -qx 'EXIT 0'

# during start-up: as soon as the front end runs; the prompt comes
term_start "$session"
wait_front >/dev/null # the front end catches SIGINT
keys C-c
wait_prompt "the prompt after Ctrl-C during start-up"
type_text "print('started: ' .. mp.exec(function() return mp.handin(1) end))"
keys Enter
wait_screen "the first command after Ctrl-C during start-up" grep -qx "started: $N"
no_harm "start-up"
keys C-d
wait_screen "the end of the job" grep -qx 'EXIT 0'

# a script started with Ctrl-C pressed during start-up is interrupted
printf 'print("script " .. mp.size)\nwhile true do end\n' >spin.lua
term_start "MPLUA_LAUNCHER='$MPIEXEC -n' '$MPLUA' -n $N spin.lua"
wait_front >/dev/null
keys C-c
wait_screen "the script's end" grep -q '^EXIT '
screen | grep -q 'interrupted!' || term_fail "the script was not interrupted"
screen | grep -qx 'EXIT 1' || term_fail "the interrupted script's status is not 1"
echo "front_interrupts ok"
