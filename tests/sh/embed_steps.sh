# ranks: 1 2 4
# mplua_serve from a host loop that has its own collectives and ring exchange
# between steps (tests/embed/steps.c): commands typed at rank 0 while the loop
# runs at full speed (long idle windows between decision steps) and while it
# is paused (timeout) run at the same host step on every rank, and input's end
# stops every rank at the same step.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
prog=$(dirname "$MPLUA")/tests/embed_steps
fail() { cat out err >&2; echo "FAIL ($N): $*" >&2; exit 1; }
mkfifo typed
"$MPIEXEC" -n "$N" "$prog" <typed >out 2>err &
pid=$!
exec 3>typed
for _ in $(seq 600); do grep -q '^ready$' out && break; sleep 0.1; done
grep -q '^ready$' out || { kill "$pid"; fail "the host did not start"; }
{
  echo 'mark()'; sleep 0.3
  echo 'mark()'; echo 'mark()'; echo 'print("same:", same())'; sleep 0.2
  echo 'for i = 1, 3 do'; echo '  mark()'; echo 'end'; sleep 0.2
  echo 'set("paused", true)'; sleep 0.2
  echo 'mark()'; echo 'print("paused same:", same())'
  echo 'set("paused", false)'; sleep 0.2
  echo 'mark()'
} >&3
exec 3>&-
status=0
wait "$pid" || status=$?
[ "$status" = 0 ] || fail "exit status $status"
grep -q '^same:	true$' out || fail "a typed task saw different steps"
grep -q '^paused same:	true$' out || fail "a typed task saw different steps (paused)"
grep -q "^ok 8 marks at the same steps on $N ranks" out || fail "marks"
grep -q '^ok ended together after [0-9]* steps (some paused)' out || fail "end"
[ ! -s err ] || fail "stderr is not empty"
echo "ok ($N): $(grep '^ok ended' out)"
