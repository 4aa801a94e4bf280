# ranks: 1 2 4
# SPDX-License-Identifier: MIT
# Stock lua5.4 with mp.so (a link to libmplua.so) on LUA_CPATH under mpiexec:
# `require "mp"` starts the runtime and the mp.serve() idiom gives mplua's
# model (p2p, a collective, a fault and its recovery, the Lua library);
# `lua5.4 -l mp.auto -i` gives lua's prompt on rank 0 with serving workers
# that end with it; `require "ad"` works without MPI (MPI never started);
# without the idiom, workers end cleanly and fail the tasks sent to them.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
build=$(cd "$(dirname "$MPLUA")" && pwd)
fail() { echo "FAIL ($N): $*" >&2; cat err >&2 2>/dev/null; exit 1; }
export LUA_CPATH="$build/lib/lua/5.4/?.so;;"
lua_asan "$build/lib/libmplua.so"

"$MPIEXEC" -n "$N" lua5.4 "$MPLUA_TEST_DIR/embed/stock_job.lua" >out 2>err || fail "stock_job exit status $?"
printf 'ring\ttrue\narray\ttrue\nfault\ttrue\nrecovered\ttrue\nlib\ttrue\nad\ttrue\n' >want
cmp -s want out || { diff want out >&2; fail "stock_job output"; }

# lua's own prompt on rank 0 (lua -i prints its banner on every rank, before -l)
printf 'print(mp.size, mp.exec(function() return mp.allreduce(mp.rank, "sum") end))\n' >in
"$MPIEXEC" -n "$N" lua5.4 -l mp.auto -i <in >out 2>err || fail "mp.auto exit status $?"
grep -q "^$N	$((N * (N - 1) / 2))\$" out || { cat out >&2; fail "mp.auto session"; }

# Without the idiom every rank runs the whole program. A worker whose
# program has ended waits in lua_close for rank 0's exit notice and passes it
# on (left unreceived, UCX warned 'unexpected tag-receive descriptor ... was
# not matched' at every such exit); a task rank 0 starts meanwhile fails,
# naming the rank, instead of hanging.
"$MPIEXEC" -n "$N" lua5.4 -l mp -e '' >out 2>err || fail "-l mp -e '' exit status $?"
! grep -q "WARN\|not matched" err || fail "-l mp -e '': a warning at exit"
if [ "$N" -gt 1 ]; then
  "$MPIEXEC" -n "$N" lua5.4 -l mp -e 'if mp.rank == 0 then
      local ok, e = pcall(mp.exec, function() return 1 end)
      print(ok, e:match("rank %d+ has ended its program without mp.serve%(%)") ~= nil)
    end' >out 2>err || fail "a task for ended workers: exit status $?"
  [ "$(cat out)" = "false	true" ] || { cat out >&2; fail "a task for ended workers"; }
  ! grep -q "WARN\|not matched" err || fail "a task for ended workers: a warning at exit"
fi

# os.exit(n) on rank 0 ends every rank with n, as the mplua program's does
# (lua's own would leave the workers waiting and MPI unfinalized): at the top
# level, typed at lua's prompt, in a finalizer at the end, without the idiom,
# and with `true` (the state closed first). Without the idiom every rank runs
# the whole program, and os.exit on a worker ends it as its end would. Two runs
# each: the launcher's view of rank 0's end is a race.
# exits WHAT CODE LUA-ARGS...: every run exits with CODE, nothing on stdout
# but the program's, no launcher report
exits() {
  local what=$1 code=$2 i status
  shift 2
  for i in 1 2; do
    status=0
    "$MPIEXEC" -n "$N" lua5.4 "$@" <in >out 2>err || status=$?
    [ "$status" = "$code" ] || { cat out >&2; fail "$what: exit status $status, not $code"; }
    ! grep -q "BAD TERMINATION\|WARN\|not matched" out err || { cat out >&2; fail "$what: a launcher report"; }
  done
}
serve='local mp = require "mp"
if mp.rank > 0 then return mp.serve() end
mp.exec(function() return 1 end)'
: >in
exits "os.exit(3) after mp.serve()" 3 -e "$serve os.exit(3)"
exits "os.exit(3, true) after mp.serve()" 3 -e "$serve os.exit(3, true)"
exits "os.exit(3) in a finalizer at the end" 3 -e "$serve setmetatable({}, {__gc = function() os.exit(3) end})"
exits "os.exit(3) without mp.serve()" 3 -l mp -e 'if mp.rank == 0 then os.exit(3) end'
exits "os.exit(3) on every rank without mp.serve()" 3 -l mp -e 'os.exit(3)'
exits "os.exit(0) on the workers without mp.serve()" 0 -l mp -e 'if mp.rank > 0 then os.exit(0) end'
printf 'mp.exec(function() return 1 end)\nos.exit(3)\n' >in
exits "os.exit(3) at the prompt of -l mp.auto" 3 -l mp.auto -i
: >in

# a finalizer of an object older than `mp` runs after the runtime has
# stopped (MPI finalized): a task it starts fails clearly, without an MPI call
"$MPIEXEC" -n "$N" lua5.4 -e 'KEEP = setmetatable({}, {__gc = function()
    if mp.rank == 0 then print(pcall(mp.exec, function() return 1 end)) end end})' \
  -l mp -e 'if mp.rank > 0 then return mp.serve() end' >out 2>err ||
  fail "a task after the runtime stopped: exit status $?"
[ "$(cat out)" = "false	mp.exec: [rank 0/$N] the program has ended: the other ranks have left and run no more tasks" ] ||
  { cat out >&2; fail "a task after the runtime stopped"; }

# ad alone, no MPI: mp is not loaded and no MPI library call is made
lua5.4 -e 'local ad = require "ad"
  local v, g = ad.grad(function(p) return ad.sum(p * p) end, {3})
  assert(v == 9 and g[1] == 6, "ad.grad")
  assert(package.loaded.mp == nil and mp == nil, "mp loaded")
  print("ad ok")' >out 2>err || fail "ad without MPI"
[ "$(cat out)" = "ad ok" ] || fail "ad without MPI: $(cat out)"
echo "ok ($N): stock lua5.4 with mp.so"
