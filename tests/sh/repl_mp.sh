# ranks: 1 2
# Parallel tasks started from the prompt: mp.exec returns rank 0's results;
# a task that fails on one rank is reported and the next one works.
set -eu
N=${1:?usage: $0 RANKS}
: "${MPLUA:?}" "${MPIEXEC:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
unset LUA_INIT LUA_INIT_5_4 MPLUA_DISABLED

session() {
  printf '%s' "$3" >in
  printf '%s' "$4" >want
  status=0
  "$MPIEXEC" -n "$N" "$MPLUA" <in >out 2>err || status=$?
  if [ "$status" != "$2" ] || ! cmp -s want out; then
    echo "FAIL ($N): $1" >&2
    echo "  exit status $status (want $2)" >&2
    echo "  stdout, want vs got:" >&2
    diff want out >&2 || true
    echo "  stderr:" >&2
    cat err >&2
    exit 1
  fi
}

session "mp.exec at the prompt" 0 \
'mp.exec(function() return mp.rank end)
mp.size
' \
"> 0
> $N
> 
"
if [ -s err ]; then echo "FAIL ($N): unexpected stderr:" >&2; cat err >&2; exit 1; fi

session "a failing task, then one that works" 0 \
'mp.exec(function() if mp.rank == mp.size - 1 then error("task fault") end end)
mp.exec(function() return mp.rank + 10 end)
' \
'> > 10
> 
'
grep -qF "task fault" err || { echo "FAIL ($N): the task fault was not reported" >&2; cat err >&2; exit 1; }
echo "ok"
