# ranks: 2 4  quick: 2
# SPDX-License-Identifier: MIT
# Ctrl-C (SIGINT to rank 0) while rank 0 waits for a window lock: rank 1
# holds the lock and computes (no deadlock to find), the other ranks wait
# for the lock too. The task stops everywhere, the prompt reports
# "interrupted!" and the next task locks the same target at once. Were the
# wait inside MPI_Win_lock, the interrupt would never be seen (the `timeout`
# turns that hang into a failure). No sleeps: the test waits for rank 0 to
# announce that it is about to lock before signalling.
set -eu
N=${1:?usage: $0 RANKS}
: "${MPLUA:?}" "${MPIEXEC:?}"
tmp=$(mktemp -d)
. "$(dirname "$0")/lib/coproc.bash"
coproc_start timeout 120 "$MPIEXEC" -n "$N" "$MPLUA"
upto "> "
send 'mp.exec(function() local w = mp.mpi.Win_create(mp.array("f64", 1)) if mp.rank == 1 then w:Lock(0) mp.send(0, "held") while true do end elseif mp.rank == 0 then mp.recv(1) print("locking " .. '"$PID_LUA"' .. " .") w:Lock(0) else w:Lock(0) end end)'
kill_int_after "locking "
upto "> "
send 'print("next", mp.exec(function() local a = mp.array("i64", 1) local w = mp.mpi.Win_create(a) w:Lock(0) w:Accumulate(mp.array("i64", {1}), 0, 0, mp.mpi.SUM) w:Unlock(0) mp.barrier() return a[1] end))'
upto "next	$N"
finish_interrupted
echo "mpi_winlock_sigint ok"
