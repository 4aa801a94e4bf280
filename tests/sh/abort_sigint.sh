# ranks: 2 4
# SPDX-License-Identifier: MIT
# SIGINT to rank 0 while a task spins on every rank stops the task everywhere;
# the prompt reports "mp.exec: interrupted!" and the next task works. No sleeps:
# the test waits for the task to announce that it is spinning before signalling.
# The signal goes to rank 0's process, as the README advises for repeated
# interrupts: hydra's own forwarding of Ctrl-C (which workers ignore) sometimes
# makes it end the whole job when it is not run from a terminal.
set -eu
N=${1:?usage: $0 RANKS}
: "${MPLUA:?}" "${MPIEXEC:?}"
tmp=$(mktemp -d)
. "$(dirname "$0")/lib/coproc.bash"
coproc_start "$MPIEXEC" -n "$N" "$MPLUA"
upto "> "
send 'mp.exec(function() if mp.rank == 0 then print("spinning " .. '"$PID_LUA"' .. " .") end while true do end end)'
kill_int_after "spinning "
upto "> "
send 'print("next", mp.exec(function() return mp.handin(1) end))'
upto "next	$N"
finish_interrupted
# it is reported as an interrupt, not as a fault of rank 0
case $seen in
  *faulted*) echo "FAIL ($N): the interrupt is reported as a fault: $seen"; exit 1 ;;
esac
echo "abort_sigint ok"
