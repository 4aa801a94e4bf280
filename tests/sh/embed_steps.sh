# ranks: 1 2 4
# SPDX-License-Identifier: MIT
# mplua_serve from a host loop that has its own collectives and ring exchange
# between steps (tests/embed/steps.c): commands typed at rank 0 while the loop
# runs at full speed (each group of lines typed once the previous one has been
# answered, the loop stepping on meanwhile) and while it is paused (timeout)
# run at the same host step on every rank, and input's end stops every rank at
# the same step.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
prog=$(dirname "$MPLUA")/tests/embed_steps
fail() { cat out err >&2; echo "FAIL ($N): $*" >&2; exit 1; }
mkfifo typed
"$MPIEXEC" -n "$N" "$prog" <typed >out 2>err &
pid=$!
exec 3>typed
# wait_out LINE: until the host has printed LINE (a bounded poll: the bound is
# a guard, never the synchronization)
wait_out() {
  for _ in $(seq 2400); do
    grep -qx -- "$1" out && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  grep -qx -- "$1" out || { kill "$pid" 2>/dev/null; fail "no '$1' from the host"; }
}
typed() { printf '%s\n' "$@" >&3; }
# each group of lines, then one that rank 0 answers: the next group is typed
# once the answer is out, while the host loop runs at full speed meanwhile
group() { typed "$@" "print('done $((++groups))')"; wait_out "done $groups"; }
groups=0
wait_out ready
group 'mark()'
group 'mark()' 'mark()' 'print("same:", same())'
group 'for i = 1, 3 do' '  mark()' 'end'
group 'set("paused", true)'
group 'mark()' 'print("paused same:", same())' 'set("paused", false)'
typed 'mark()'
exec 3>&-
status=0
wait "$pid" || status=$?
[ "$status" = 0 ] || fail "exit status $status"
grep -q '^same:	true$' out || fail "a typed task saw different steps"
grep -q '^paused same:	true$' out || fail "a typed task saw different steps (paused)"
grep -q "^ok 8 marks at the same steps on $N ranks" out || fail "marks"
grep -q '^ok ended together after [0-9]* steps (some paused)' out || fail "end"
[ ! -s err ] || fail "stderr is not empty"

# os.exit typed while the loop runs ends every rank's process with its status
# (the host let it: no MPLUA_OUT_EXIT), MPI finalized although the host started
# it. Rank 0 left without MPI_Finalize, and the workers went on into the
# host's collectives with it: hydra's BAD TERMINATION, status 9, or a hang.
ended="$(sed -n 's/^ok ended/&/p' out)"
for i in 1 2; do
  status=0
  printf 'mark()\nos.exit(3)\n' | "$MPIEXEC" -n "$N" "$prog" exits >out 2>err || status=$?
  [ "$status" = 3 ] || fail "os.exit(3) typed: exit status $status"
  ! grep -q "BAD TERMINATION\|^ok" out || fail "os.exit(3) typed: a launcher report or the host's end"
  # (LeakSanitizer's list of suppressions used may be on stderr)
  ! grep -q "FAIL\|Abort\|WARN\|not matched\|MPI routine" err || fail "os.exit(3) typed: stderr"
done
echo "ok ($N): $ended; os.exit ends every rank"
