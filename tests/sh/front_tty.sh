# ranks: 4
# SPDX-License-Identifier: MIT
# The front end in a real terminal (tmux), as a user meets it: `mplua -n 4`
# shows the banner and the prompt; lines are edited with the arrow keys;
# errors come right after their line, in lua's words; a continuation prompt;
# io.read asks in place; a spinning task interrupted three times in a row,
# then with three quick Ctrl-C, and the job still works; Ctrl-C at the prompt
# drops the line; the progress line appears below the output, is never glued
# to it, and is gone when the pool ends; Ctrl-D ends the job with status 0;
# the history comes back in the next session.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/term.bash"
hist="$tmp/history"
session="MPLUA_LAUNCHER='$MPIEXEC -n' MPLUA_HISTORY='$hist' INPUTRC=/dev/null '$MPLUA' -n $N"

term_start "$session"
wait_prompt "the first prompt"
screen | grep -q '^mplua .*Lua 5\.4' || term_fail "no banner"

# editing: the cursor goes back three characters and b goes in
type_text 'print("ac")'
keys Left Left Left
type_text b
keys Enter
wait_screen "the edited line's result" grep -qx 'abc'
wait_prompt "after print"

# an error comes right after its line, before the next prompt, as lua says it
type_text 'error("boom")'
keys Enter
wait_prompt "after the error"
[ "$(screen | grep -A1 -F '> error("boom")' | tail -n 1)" = "stdin:1: boom" ] ||
  term_fail "the error is not right after its line"
[ "$(count 'stack traceback:')" = 1 ] || term_fail "not one traceback"

# a continuation line, and io.read asking where io.write left the cursor
type_text 'for i = 1, 2 do'
keys Enter
wait_last "the continuation prompt" ">>"
type_text 'print("i=" .. i) end'
keys Enter
wait_screen "the loop's output" grep -qx 'i=2'
wait_prompt "after the loop"
type_text 'io.write("name? ") name = io.read()'
keys Enter
wait_last "io.read's question" 'name?'
type_text 'Ann'
keys Enter
wait_prompt "after io.read"
type_text 'name'
keys Enter
wait_screen "what io.read read" grep -qx 'Ann'
wait_prompt "after name"

# a spinning task, interrupted three times in a row (recalled with arrow-up)
spin='mp.exec(function() if mp.rank == 3 then print("spin" .. "ning") end while true do end end)'
type_text "$spin"
keys Enter
for k in 1 2 3; do
  wait_screen "spinning #$k" sh -c "[ \$(grep -cx spinning) -ge $k ]"
  keys C-c
  wait_count "interrupt #$k reported" "interrupted!" "$k"
  wait_prompt "after interrupt #$k"
  if [ "$k" -lt 3 ]; then
    keys Up
    wait_last "the recalled line" "> $spin"
    keys Enter
  fi
done
# three quick Ctrl-C on one task: one interrupt, and the job lives on
keys Up Enter
wait_screen "spinning #4" sh -c '[ $(grep -cx spinning) -ge 4 ]'
keys C-c C-c C-c
wait_count "interrupt #4 reported" "interrupted!" 4
wait_prompt "after three quick Ctrl-C"
type_text 'print("alive " .. mp.exec(function() return mp.handin(1) end))'
keys Enter
wait_screen "the next task" grep -qx "alive $N"
[ "$(count 'interrupted!')" = 4 ] || term_fail "not one report per interrupted task"

# Ctrl-C at the prompt drops what was typed, even an unfinished chunk
type_text 'x = 1'
keys Enter
wait_prompt "after x = 1"
type_text 'x = x +'
keys Enter
wait_last "the continuation prompt" ">>"
keys C-c
wait_prompt "after Ctrl-C at >>"
type_text 'x'
keys Enter
wait_screen "x unchanged" sh -c "grep -A1 -x '> x' | tail -n 1 | grep -qx 1"

# the progress line: shown below the output while the pool runs (until the
# test creates the stop file), never glued to what reap prints, gone after
stop="$tmp/stop"
type_text "mp.pool{sow = function(n) if not io.open('$stop') then return n end end, work = function(v) local t = mp.wtime() while mp.wtime() - t < 0.01 do end return v end, reap = function(n) if n % 50 == 0 then print('reaped ' .. n) end end}"
keys Enter
wait_screen "the progress line" grep -q '^mp\.pool: [0-9]* done'
wait_screen "reap's output with the progress line" \
  awk '/^reaped [0-9]+$/ { r++ } /^mp\.pool: [0-9]* done/ { p = 1 } END { exit !(r >= 3 && p) }'
touch "$stop"
wait_prompt "after the pool"
! screen | grep -q 'mp\.pool: ' || term_fail "the progress line is still there"
! screen | grep 'reaped' | grep -v '^> ' | grep -vqx 'reaped [0-9]*' || term_fail "reap's output glued to something"

# the last line of this session, for the next one; then Ctrl-D
type_text 'x = "from the first session"'
keys Enter
wait_prompt "after the last line"
keys C-d
wait_screen "the end of the job" grep -qx 'EXIT 0'
grep -qF 'x = "from the first session"' "$hist" || term_fail "the history file lacks the last line"

# the next session: arrow-up brings the last line back
term_start "$session"
wait_prompt "the second session's prompt"
keys Up
wait_last "the first session's line" '> x = "from the first session"'
keys Enter
wait_prompt "after the recalled line"
type_text 'x'
keys Enter
wait_screen "its value" grep -qx 'from the first session'
keys C-d
wait_screen "the end of the second job" grep -qx 'EXIT 0'
echo "ok"
