#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmarks across two hosts, in one run (root: two network namespaces
# joined by a veth, UCX over TCP; the set-up of tests/sh/lib/netns.bash):
#   - round trip of one number and 1 MiB strings vs raw MPI (p2p.lua, 1 rank
#     per host), empty mp.exec vs MPI_Barrier at 4 ranks (exec.lua, 2 per host)
#   - idle CPU of every worker over 10 s, then the first task after that idle
#     spell (3 times), at 4 ranks
#   - how jobs end at 4 ranks: a normal exit and a -b fault exit, RUNS times
#     each (a job still running 10 s after its work is done counts as hung in
#     MPI_Finalize and is killed), and the status of a job whose remote rank
#     is killed.
# Usage: scripts/bench/nodes.sh [build-dir] [RUNS]   (from anywhere)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
RUNS=${2:-15}
export MPLUA=$build/mpbench MPIEXEC=${MPIEXEC:-$(command -v mpiexec)}
N=4
. "$root/tests/sh/lib/netns.bash"
nodes_up
work=$tmp
cd "$root" # the bench scripts find their helpers from here; hydra starts ranks here

# job MARKER FILE CMD...: run in the background; after MARKER appears in FILE,
# give the job 10 s to exit, then kill it (hung). Sets jstatus and jsecs.
job() {
  local marker=$1 file=$2 t0 done_at="" p
  shift 2
  t0=$(date +%s.%N)
  "$@" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ -z "$done_at" ] && grep -qF -- "$marker" "$file" 2>/dev/null; then done_at=$SECONDS; fi
    if [ -n "$done_at" ] && [ $((SECONDS - done_at)) -ge 10 ]; then break; fi
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    for p in $(ip netns pids "$NS_A") $(ip netns pids "$NS_B"); do kill -9 "$p" 2>/dev/null || true; done
    wait "$pid" 2>/dev/null || true
    jstatus=hung
  else
    jstatus=0
    wait "$pid" || jstatus=$?
  fi
  jsecs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
}
run_n() { # mpbench at n ranks, split over the hosts like the tests
  local n=$1
  shift
  printf '%s:%d\n%s:%d\n' "$NS_A" $(((n + 1) / 2)) "$NS_B" $((n / 2)) >"$work/hostfile.$n"
  ip netns exec "$NS_A" env UCX_TLS=tcp UCX_NET_DEVICES=mpnet0 \
    "$MPIEXEC" -f "$work/hostfile.$n" -launcher ssh -launcher-exec "$root/tests/sh/lib/netns_launch.sh" \
    -localhost "$NS_A" -n "$n" "$MPLUA" "$@"
}

echo "== p2p.lua, 2 ranks (1 per host)"
job "1 MiB string" "$work/p2p" run_n 2 scripts/bench/p2p.lua </dev/null >"$work/p2p" 2>&1
cat "$work/p2p"; echo "(exit: $jstatus)"
echo "== exec.lua, 4 ranks (2 per host)"
job "exec/barrier" "$work/exec" run_n 4 scripts/bench/exec.lua </dev/null >"$work/exec" 2>&1
cat "$work/exec"; echo "(exit: $jstatus)"

echo "== idle CPU per worker over 10 s, then the first task, 4 ranks (3 times)"
mkfifo "$work/in"
MPLUA=$build/mplua # the prompt (mpbench runs scripts only)
run_n 4 <"$work/in" >"$work/idle" 2>&1 &
idle_job=$!
exec 3>"$work/in"
echo 'print("warm", mp.exec(function() return mp.allreduce(1, "sum") end))' >&3
for _ in $(seq 3000); do grep -q "warm	4" "$work/idle" && break; sleep 0.05; done
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rank_of() { tr '\0' '\n' <"/proc/$1/environ" | sed -n 's/^PMI_RANK=//p'; }
for k in 1 2 3; do
  declare -A t0=()
  pids=$(nodes_pids "$NS_A"; nodes_pids "$NS_B")
  for p in $pids; do t0[$p]=$(cpu_ticks "$p"); done
  s0=$(date +%s.%N)
  sleep 10 # the idle spell
  s1=$(date +%s.%N)
  line=""
  for p in $pids; do
    r=$(rank_of "$p")
    [ "$r" != 0 ] || continue
    line="$line rank $r $(awk -v a="${t0[$p]}" -v b="$(cpu_ticks "$p")" -v hz="$hz" -v s0="$s0" -v s1="$s1" \
      'BEGIN { printf "%.2f%%", 100 * (b - a) / hz / (s1 - s0) }');"
  done
  echo "idle CPU, % of a core:$line"
  echo "local t = mp.wtime(); mp.exec(function() end); print(string.format('first task after 10 s idle: %.3f ms', 1e3 * (mp.wtime() - t)))" >&3
  for _ in $(seq 600); do [ "$(grep -c "first task" "$work/idle")" -ge "$k" ] && break; sleep 0.05; done
  grep "first task" "$work/idle" | tail -1
done
exec 3>&-
for p in $(ip netns pids "$NS_A") $(ip netns pids "$NS_B"); do kill -9 "$p" 2>/dev/null || true; done
wait "$idle_job" 2>/dev/null || true

echo "== how jobs end at 4 ranks across hosts ($RUNS runs each)"
for kind in normal fault; do
  hung=0 stats=""
  for _ in $(seq "$RUNS"); do
    if [ $kind = normal ]; then
      job "done" "$work/end" run_n 4 -b -e 'mp.exec(function() end) print("done")' </dev/null >"$work/end" 2>&1
    else
      job "remote fault" "$work/end" run_n 4 -b \
        -e 'mp.exec(function() if mp.rank == mp.size - 1 then error("remote fault") end end)' </dev/null >"$work/end" 2>&1
    fi
    [ "$jstatus" != hung ] || hung=$((hung + 1))
    stats="$stats $jstatus"
  done
  echo "$kind exit (-b): $hung of $RUNS hung in MPI_Finalize; statuses:$stats"
done
cat >"$work/kill.lua" <<'LUA'
mp.exec(function()
  if mp.rank == mp.size - 1 then
    os.execute("kill -9 " .. io.open("/proc/self/stat"):read("a"):match("^(%d+)"))
  end
  mp.handin(1)
end)
LUA
job "BAD TERMINATION" "$work/end" run_n 4 "$work/kill.lua" </dev/null >"$work/end" 2>&1
echo "remote rank killed: status $jstatus after $jsecs s; hydra's banner: $(grep -m1 'EXIT CODE' "$work/end" | tr -s ' =')"
