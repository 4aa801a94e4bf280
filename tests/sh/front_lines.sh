# ranks: 3
# SPDX-License-Identifier: MIT
# The front end in a real terminal (tmux): another rank's line that arrives
# while the prompt is shown goes above it, never onto the prompt line (the
# prompt and what was typed are drawn again below it); one that arrives
# while rank 0 has written half a line goes above that half, which is then
# completed in place. A background process of rank 1's writes the line when
# the test creates a file, so each arrives exactly when the test wants it.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/term.bash"
session="cd '$tmp' && MPLUA_LAUNCHER='$MPIEXEC -n' MPLUA_HISTORY= INPUTRC=/dev/null '$MPLUA' -n $N"
# late NAME FILE: rank 1 prints NAME once FILE exists (a task that returns at once)
late() {
  printf 'mp.exec(function() if mp.rank == 1 then os.execute("(while [ ! -e %s ]; do sleep 0.05; done; echo %s) &") end end)' "$2" "$1"
}

term_start "$session"
wait_prompt "the first prompt"

# at the prompt, with a half-typed line
type_text "$(late late-at-prompt go1)"
keys Enter
wait_prompt "after the task"
type_text 'x = 12'
wait_last "the typed text" '> x = 12'
touch go1
wait_screen "rank 1's line" grep -qx 'late-at-prompt'
wait_last "the prompt drawn again below it" '> x = 12'
! screen | grep -q 'x = 12late\|late-at-prompt>' || term_fail "rank 1's line on the prompt line"
type_text '3 print(x)'
keys Enter
wait_screen "the edited line ran" grep -qx '123'
wait_prompt "after print(x)"

# while rank 0 has written half a line
type_text "$(late late-in-line go2) io.write('half... ') io.flush() os.execute('while [ ! -e go3 ]; do sleep 0.05; done') print('whole')"
keys Enter
wait_last "rank 0's half line" 'half...'
touch go2
wait_screen "rank 1's line" grep -qx 'late-in-line'
wait_last "the half line below it" 'half...'
touch go3
wait_prompt "after the command"
screen | grep -qx 'half... whole' || term_fail "rank 0's line was not completed in place"
! screen | grep -q 'half\.\.\. late' || term_fail "rank 1's line glued to rank 0's half line"
keys C-d
wait_screen "the end of the job" grep -qx 'EXIT 0'
echo "ok"
