# ranks: 5 8  quick: 5
# SPDX-License-Identifier: MIT
# A rank waiting for a window lock still passes ABORT down the fan-out tree.
# With mp.nfan(2), rank 1 is an inner node (children 3 and 4): rank 3 holds
# an exclusive lock on rank 0's part of a window and waits for a message
# from rank 2; rank 1 waits for the lock; rank 2 faults. ABORT goes
# 0 -> 1 -> 3: were rank 1 blocked inside MPI_Win_lock it would never pass
# it on, rank 3 would never leave its wait nor release the lock, and the job
# would hang silently. The fault must be reported and the next task run.
# The `timeout` turns a hang into a failure.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
cat >job.lua <<'LUA'
mp.nfan(2)
for round = 1, 3 do
  local ok, err = pcall(mp.exec, function()
    local w = mp.mpi.Win_create(mp.array("f64", 1))
    if mp.rank == 3 then
      w:Lock(0, "exclusive")
      mp.send(1, "held")
      mp.recv(2)               -- never comes: rank 2 faults
    elseif mp.rank == 1 then
      mp.recv(3)
      mp.send(2, "locking")
      w:Lock(0, "exclusive")   -- waits for rank 3
    elseif mp.rank == 2 then
      mp.recv(1)
      error("rank 2 fails")
    end
  end)
  assert(not ok and tostring(err):find("rank 2 fails", 1, true), tostring(err))
  print("round " .. round .. " reported")
  -- the next task: a new window, every rank locks rank 0's part
  print("next", mp.exec(function()
    local a = mp.array("i64", 1)
    local w = mp.mpi.Win_create(a)
    w:Lock(0)
    w:Accumulate(mp.array("i64", {1}), 0, 0, mp.mpi.SUM)
    w:Unlock(0)
    mp.barrier()
    return mp.rank == 0 and a[1] or nil
  end))
end
LUA
status=0
timeout 60 "$MPIEXEC" -n "$N" "$MPLUA" job.lua >out 2>err || status=$?
if [ "$status" = 124 ]; then
  echo "FAIL ($N): the job hangs (killed after 60 s)" >&2
  cat out err >&2
  exit 1
fi
printf 'round %d reported\nnext\t%d\n' 1 "$N" 2 "$N" 3 "$N" >want
if [ "$status" != 0 ] || ! cmp -s want out; then
  echo "FAIL ($N): exit status $status, stdout want vs got:" >&2
  diff want out >&2 || true
  cat err >&2
  exit 1
fi
echo "mpi_winlock_abort ok"
