# ranks: 2
# SPDX-License-Identifier: MIT
# Tab at the front end's prompt, in a real terminal: the terminal asks rank 0
# (which has the globals) for the completions while it waits for the line:
# `mp.ex` becomes `mp.exec`, `a:to` becomes `a:totable` for an mp.Array, and
# a table prints as its contents. The same at a singleton's own prompt
# (readline in rank 0's process).
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/term.bash"
export MPLUA_LAUNCHER="$MPIEXEC -n" MPLUA_HISTORY=
for how in "-n $N" "--nompi"; do
  term_start "$MPLUA $how"
  wait_prompt "start, $how"
  type_text "a = mp.array('f64', 3)"
  keys Enter
  wait_prompt "after a, $how"
  type_text "mp.ex"
  keys Tab
  wait_screen "mp.ex completed ($how)" grep -qF "> mp.exec"
  type_text "(function() return 'ran' end)"
  keys Enter
  wait_screen "the task ($how)" grep -qx "ran"
  type_text "a:to"
  keys Tab
  wait_screen "a:to completed ($how)" grep -qF "> a:totable"
  type_text "()"
  keys Enter
  wait_screen "the table ($how)" grep -qxF "{0.0, 0.0, 0.0}"
  keys C-d
  wait_screen "the end ($how)" grep -qx "EXIT 0"
done
echo "front_complete ok ($N)"
