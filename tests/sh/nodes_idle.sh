# ranks: 2 4  quick: none  labels: netns
# SPDX-License-Identifier: MIT
# Across two hosts (see lib/netns.bash): idle workers sleep. After a task,
# rank 0 sits at its prompt and every worker (on either host) must sleep
# between its looks at the channel, working less than 1% of its own time (see
# below). Skipped (SKIPPED printed, status 77) where namespaces cannot be made.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/netns.bash"
nodes_up

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

# An idle worker sleeps between its looks at the channel: over a number of its
# sleeps (voluntary context switches of its main thread), the CPU time of all
# its threads must stay under 1% of the time its main thread spent not waiting
# for a core (the scheduler's own figures, /proc/PID/task/TID/schedstat: time
# on a core, time runnable but waiting). Counting events, not a wall-clock
# window, and leaving out the time a loaded machine keeps the rank waiting,
# this cannot flake with load: a rank that spins never sleeps (the bounded
# wait below fails) or, napping too briefly, works far above 1% of its time.
# The idle CPU over wall-clock time is scripts/bench/nodes.sh's measure.
SLEEPS=10
rank_of() { tr '\0' '\n' <"/proc/$1/environ" | sed -n 's/^PMI_RANK=//p'; }
# sample PID: "now_ns cpu_ns_all_threads waiting_ns_main sleeps_main"
sample() {
  local p=$1 cpu=0 t
  for t in /proc/"$p"/task/*/schedstat; do cpu=$((cpu + $(cut -d' ' -f1 "$t" 2>/dev/null || echo 0))); done
  echo "$(date +%s%N) $cpu $(cut -d' ' -f2 "/proc/$p/task/$p/schedstat")" \
    "$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$p/task/$p/status")"
}
declare -A s0 host
workers=""
for p in $(nodes_pids "$NS_A"); do host[$p]=A; done
for p in $(nodes_pids "$NS_B"); do host[$p]=B; done
for p in "${!host[@]}"; do
  r=$(rank_of "$p")
  [ "$r" != 0 ] || continue # rank 0 waits at the prompt, not on the control channel
  workers="$workers $p"
  s0[$p]=$(sample "$p")
done
[ -n "$workers" ] || { echo "FAIL ($N): no worker found"; exit 1; }
bad=0 report=""
for p in $workers; do
  r=$(rank_of "$p")
  read -r w0 c0 q0 v0 <<<"${s0[$p]}"
  # until SLEEPS sleeps, or a second of CPU (a spinner's end), or 150 s (a guard)
  for _ in $(seq 3000); do
    read -r w1 c1 q1 v1 <<<"$(sample "$p")"
    [ $((v1 - v0)) -lt "$SLEEPS" ] && [ $((c1 - c0)) -lt 1000000000 ] || break
    sleep 0.05
  done
  pct=$(awk -v c=$((c1 - c0)) -v w=$((w1 - w0)) -v q=$((q1 - q0)) \
    'BEGIN { d = w - q; printf "%.3f", (d > 0 ? 100 * c / d : 100) }')
  report="$report rank $r (host ${host[$p]}) $pct% over $((v1 - v0)) sleeps;"
  if awk -v x="$pct" 'BEGIN { exit !(x >= 1) }'; then bad=1; fi
done
echo "idle workers' CPU, % of the time they were not waiting for a core:$report"
if [ "$bad" = 1 ]; then
  echo "FAIL ($N): an idle worker spins (it must sleep, and work < 1% of its time)"
  exit 1
fi
echo "nodes_idle ok"
