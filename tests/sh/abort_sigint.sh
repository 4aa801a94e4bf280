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
send 'mp.exec(function() if mp.rank == 0 then print("spinning " .. io.open("/proc/self/stat"):read("a"):match("^(%d+)") .. " .") end while true do end end)'
upto "spinning "
upto " ."
rank0=${seen% .}
rank0=${rank0##* }
kill -INT "$rank0"
upto "> "
send 'print("next", mp.exec(function() return mp.handin(1) end))'
upto "next	$N"
exec {in}>&-
wait "$pid" || { echo "FAIL ($N): exit status $?" >&2; exit 1; }
pid=""
# the report comes before the next prompt, on stdout (the prompt joins
# rank 0's stderr to stdout's pipe, so that hydra keeps their order)
# it is reported as an interrupt, not as a fault of rank 0
case $seen in
  *"mp.exec: interrupted!"*"> "*) ;;
  *) echo "FAIL ($N): no report before the prompt; got: $seen"; cat "$tmp/err"; exit 1 ;;
esac
case $seen in
  *faulted*) echo "FAIL ($N): the interrupt is reported as a fault: $seen"; exit 1 ;;
esac
echo "abort_sigint ok"
