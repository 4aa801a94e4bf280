# ranks: 2 4
# Across two hosts (see lib/netns.bash): idle workers cost (almost) no CPU.
# After a task, rank 0 sits at its prompt; the CPU time (utime + stime from
# /proc/PID/stat, all threads) of every worker is read over 5 s. Each worker
# on the remote host must use < 1% of a core; the figures of all workers are
# printed. Skipped (SKIPPED printed, status 77) where namespaces cannot be
# made.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/netns.bash"
nodes_up
WINDOW=5

mkfifo in
nodes_run <in >out 2>err &
job=$!
exec 3>in # held open: the prompt waits for input
echo 'print("sum", mp.exec(function() return mp.allreduce(1, "sum") end))' >&3
for _ in $(seq 3000); do # bounded: 150 s
  grep -q "sum	$N$" out && break
  kill -0 "$job" 2>/dev/null || break
  sleep 0.05
done
if ! grep -q "sum	$N$" out; then
  echo "FAIL ($N): the first task did not complete"
  echo "  stdout:"; cat out; echo "  stderr:"; cat err
  exit 1
fi

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rank_of() { tr '\0' '\n' <"/proc/$1/environ" | sed -n 's/^PMI_RANK=//p'; }
pids_b=$(nodes_pids "$NS_B")
pids_a=$(nodes_pids "$NS_A")
declare -A t0 host
for p in $pids_a $pids_b; do t0[$p]=$(cpu_ticks "$p"); done
for p in $pids_a; do host[$p]=A; done
for p in $pids_b; do host[$p]=B; done
s0=$(date +%s.%N)
sleep "$WINDOW" # the measurement window (the ranks are idle: nothing to wait for)
s1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
bad=0 report=""
for p in $pids_a $pids_b; do
  r=$(rank_of "$p")
  [ "$r" != 0 ] || continue # rank 0 waits at the prompt, not on the control channel
  pct=$(awk -v a="${t0[$p]}" -v b="$(cpu_ticks "$p")" -v hz="$hz" -v s0="$s0" -v s1="$s1" \
    'BEGIN { printf "%.2f", 100 * (b - a) / hz / (s1 - s0) }')
  report="$report rank $r (host ${host[$p]}) $pct%;"
  if [ "${host[$p]}" = B ] && awk -v x="$pct" 'BEGIN { exit !(x >= 1) }'; then bad=1; fi
done
echo "idle worker CPU over $WINDOW s, % of one core:$report"
if [ "$bad" = 1 ]; then
  echo "FAIL ($N): an idle worker on the remote host uses >= 1% of a core (want < 1%)"
  exit 1
fi
echo "nodes_idle ok"
