# ranks: 2 4 5  quick: none  labels: netns
# SPDX-License-Identifier: MIT
# Across two hosts (see lib/netns.bash): mp.mpi.Comm_split_type(comm,
# COMM_TYPE_SHARED) gives each rank the ranks of its host, as mpiexec placed
# them (ranks 0 .. ceil(N/2)-1 on host A, the others on B), ordered by key,
# on COMM_WORLD and on a communicator of the ranks in reverse; a collective
# on the result counts the host's ranks; Win_allocate_shared refuses the
# world (two hosts) on every rank and works on a host's communicator. Skipped (SKIPPED printed, status
# 77) where namespaces cannot be made.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/netns.bash"
nodes_up

cat >split.lua <<'LUA'
local got = mp.exec(function()
  local mpi = mp.mpi
  local P, me = mp.size, mp.rank
  local half = (P + 1) // 2
  local mine = {}
  for r = 0, P - 1 do
    if (r < half) == (me < half) then mine[#mine + 1] = r end
  end
  local node = mpi.Comm_split_type(mpi.COMM_WORLD, mpi.COMM_TYPE_SHARED)
  assert(table.concat(node:ranks(), ",") == table.concat(mine, ","), "this host's ranks")
  assert(mpi.Allreduce(1, mpi.SUM, node) == #mine)
  local back = mpi.Comm_split(mpi.COMM_WORLD, 0, -me)      -- the ranks in reverse
  local rnode = mpi.Comm_split_type(back, mpi.COMM_TYPE_SHARED, -me)
  local rev = {}
  for k = #mine, 1, -1 do rev[#rev + 1] = mine[k] end
  assert(table.concat(rnode:ranks(), ",") == table.concat(rev, ","), "by key")
  -- a shared window needs one node: on the world an error on every rank,
  -- on the node's communicator segments every member of the node reads
  local ok, err = pcall(mpi.Win_allocate_shared, 1, "f64")
  assert(not ok and err:find("are on different nodes: a shared window needs a communicator of one node"), err)
  local w, a = mpi.Win_allocate_shared(1, "f64", node)
  a[1] = me
  w:Fence()
  assert(w:Shared_query(0)[1] == mine[1])
  w:Free()
  return mpi.Comm_size(node)
end)
assert(got == (mp.size + 1) // 2)
print("split_type across hosts ok")
LUA
nodes_run -b split.lua </dev/null >out 2>err &
nodes_wait_exit $! "split_type across hosts ok" out || nodes_fail "the job did not end"
[ "$status" = 0 ] && grep -q "split_type across hosts ok" out || nodes_fail "split_type across hosts"
cat out
echo "nodes_mpi_split ok"
