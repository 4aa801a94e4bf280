# ranks: 1 2 4 8
# SPDX-License-Identifier: MIT
# The ranks of one host find each other without a communicator of their own
# (wake.c: one start-up allgather, a host key, nap words in a memfd the
# host's first rank lends to the others): mp.machine() has one node; tasks
# that make ranks nap and wake each other complete; nothing of the job's is
# in /dev/shm, during the job or after.
set -eu
N=${1:?usage: $0 RANKS}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.bash"
cp "$here/lib/ring.lua" .
fail() { echo "FAIL ($N): $*" >&2; cat err >&2 2>/dev/null; exit 1; }
ours() { ls /dev/shm 2>/dev/null | grep -c "^mplua-" || true; }
before=$(ours)

cat >job.lua <<'LUA'
local P = mp.size
local m = mp.machine()
assert(m.nnodes == 1 and #m.nodes == P, tostring(m))
for r = 1, P do assert(m.nodes[r] == 0, "rank " .. (r - 1) .. " on node " .. m.nodes[r]) end
-- during the job: nothing in /dev/shm named after this host's lowest rank (rank 0)
local pid = io.open("/proc/self/stat"):read("n")
local ls = io.popen("ls /dev/shm")
for name in ls:lines() do
  assert(not name:find("^mplua%-" .. pid .. "%-"), "left in /dev/shm: " .. name)
end
ls:close()
-- naps and wake-ups: a ring where each rank waits for its predecessor, many times
local got = dofile("ring.lua")(200)
assert(got == 200 * 201 // 2, "ring: " .. tostring(got))
print("wake ok", P)
LUA
"$MPIEXEC" -n "$N" "$MPLUA" job.lua >out 2>err || fail "exit status $?"
[ "$(cat out)" = "wake ok	$N" ] || { cat out >&2; fail "output"; }
after=$(ours)
[ "$after" -le "$before" ] || fail "/dev/shm has $after mplua objects after the job, $before before"
echo "ok ($N): ranks of one host"
