#!/bin/bash
# SPDX-License-Identifier: MIT
# Instructions per exchange (one send and one receive of a number) of
# mp.send/mp.recv and of the interruptible C scheme, counted by callgrind on
# rank 0 (p2p_count.lua says how the waits are left out). Needs valgrind.
# Usage: scripts/bench/p2p_count.sh [build dir] [exchanges]
set -e
build=${1:-build}
n=${2:-20000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export UCX_MM_FIFO_SIZE=65536 # rank 0 never waits for room (p2p_count.lua)
export MPLUA_POLL_MS=${MPLUA_POLL_MS:-10000} # the 5 ms tick would poll 50x as often under callgrind
count() { # kind: prints the instructions per exchange
  mpiexec -n 1 valgrind --tool=callgrind --collect-atstart=no --dump-instr=no \
      --callgrind-out-file="$out/cg.$1" "$build/mpbench" scripts/bench/p2p_count.lua "$1" "$n" \
    : -n 1 "$build/mpbench" scripts/bench/p2p_count.lua "$1" "$n" >"$out/log.$1" 2>&1
  local ir
  ir=$(sed -n 's/^summary: //p' "$out/cg.$1")
  echo "$ir / $n" | awk '{printf "%.0f", $1 / $3}'
}
mp=$(count mp)
c=$(count c)
echo "instructions per exchange (send + receive, rank 0): mp $mp  interruptible C $c  ratio $(awk -v a="$mp" -v b="$c" 'BEGIN{printf "%.2f", a / b}')"
if [ -n "$P2P_COUNT_KEEP" ]; then cp "$out"/cg.* "$P2P_COUNT_KEEP"/; fi
