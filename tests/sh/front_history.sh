# ranks: 2
# SPDX-License-Identifier: MIT
# The front end's history file stays the user's (interp/front_tty.c): a
# file grown past twice the entries kept is rewritten at start, through a
# temporary file of its own beside it, and keeps its mode (0600 here, under
# umask 022); a symbolic link planted at the name a fixed temporary would
# have (HISTORY.new) is neither followed nor moved over the history. The
# rewritten file holds the last entries, and they come back with arrow-up.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/term.bash"
hist="$tmp/history"
for i in $(seq 2500); do printf '# time: 0\n\tx = %d\n' "$i"; done >"$hist"
chmod 600 "$hist"
echo "not history" >victim
ln -s "$tmp/victim" "$hist.new"
term_start "cd '$tmp' && umask 022 && MPLUA_LAUNCHER='$MPIEXEC -n' MPLUA_HISTORY='$hist' INPUTRC=/dev/null '$MPLUA' -n $N"
wait_prompt "the first prompt"
keys Up
wait_last "the last entry, recalled" "> x = 2500"
keys C-u C-d
wait_screen "the end of the job" grep -qx 'EXIT 0'
[ "$(cat victim)" = "not history" ] || term_fail "the link planted at $hist.new was followed"
[ -L "$hist.new" ] && [ "$(readlink "$hist.new")" = "$tmp/victim" ] || term_fail "the planted link was moved"
[ -f "$hist" ] && [ ! -L "$hist" ] || term_fail "the history is not a plain file"
[ "$(stat -c %a "$hist")" = 600 ] || term_fail "the history's mode is $(stat -c %a "$hist") (want 600)"
entries=$(grep -c '^# time' "$hist")
[ "$entries" -le 1000 ] || term_fail "the history was not rewritten ($entries entries)"
tail -n 1 "$hist" | grep -qx "$(printf '\tx = 2500')" || term_fail "the last entry is not the file's last"
[ "$(ls "$tmp" | grep -c '^history\.')" = 1 ] || term_fail "temporary files left: $(ls "$tmp")"
echo "ok"
