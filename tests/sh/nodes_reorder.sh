# ranks: 2 4  quick: none  labels: netns
# SPDX-License-Identifier: MIT
# Across two hosts (see lib/netns.bash), reordering with the real machine:
# mp.machine() has the two hosts as mpiexec placed the ranks (ranks 0 ..
# ceil(N/2)-1 on host A, the others on B). Each rank sends 4000 bytes to the
# rank N/2 away, so under the identity all of it crosses the hosts; traced,
# the p2p byte matrix goes to mp.reorder (default machine: mp.machine()),
# and the same exchange on the relabelled communicator (comm:reorder) is
# traced again: the bytes that really crossed the hosts, counted by the
# tracer by world rank, equal the report's before and after (4 ranks: all,
# then none; 2 ranks: one per host, nothing better, the identity kept).
# Skipped (SKIPPED printed, status 77) where namespaces cannot be made.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/netns.bash"
nodes_up

cat >reorder.lua <<'LUA'
local P = mp.size
local m = mp.machine()
print(m)
local half = (P + 1) // 2
for r = 0, P - 1 do
  assert(m.nodes[r + 1] == (r < half and 0 or 1), "rank " .. r .. " on the wrong node")
end
assert(m.nnodes == 2)
local function exchange(R)  -- new rank k sends 4000 bytes to new rank k + P/2
  mp.trace.start{file = "t.json"}
  mp.exec(function()
    local c = R and mp.world:reorder(R) or mp.world
    c:send((c.rank + P // 2) % P, string.rep("x", 4000))
    c:recv((c.rank - P // 2) % P)
  end)
  mp.trace.stop()
  return mp.trace.matrix{by = "bytes", kind = "p2p"}
end
local function crossing(M)  -- bytes between world ranks on different hosts
  local s = 0
  for i = 1, P do
    for j = 1, P do
      if m.nodes[i] ~= m.nodes[j] then s = s + M:get(i, j) end
    end
  end
  return s
end
local M0 = exchange(nil)
local R = mp.reorder(M0)
print(R)
local M1 = exchange(R)
local b, a = crossing(M0), crossing(M1)
print(("measured bytes crossing the hosts: %d before, %d after"):format(b, a))
assert(b == R.before.cross_node and a == R.after.cross_node and b > 4000 * P // 2)
if P == 4 then assert(R.changed and a == 0) else assert(not R.changed and a == b) end
print("reorder across hosts ok")
LUA
nodes_run -b reorder.lua </dev/null >out 2>err &
nodes_wait_exit $! "reorder across hosts ok" out || nodes_fail "the job did not end"
[ "$status" = 0 ] && grep -q "reorder across hosts ok" out || nodes_fail "reorder across hosts"
cat out
echo "nodes_reorder ok"
