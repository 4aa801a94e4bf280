#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Embedding benchmarks:
#   - mplua_serve with nothing typed, per call, next to an empty MPI_Iprobe
#     (build/serve_idle), at 1, 2 and 4 ranks;
#   - start-up of a stock `lua5.4 -l mp -e ''` (and -l mp.auto) at 4 ranks next
#     to a C MPI_Init/MPI_Finalize program (build/mpi_empty): the median wall
#     time of RUNS jobs each, and the ratio.
# Usage: scripts/bench/embed.sh [build-dir] [RUNS]   (from anywhere)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
RUNS=${2:-11}
MPIEXEC=${MPIEXEC:-mpiexec}
export LUA_CPATH="$build/lib/lua/5.4/?.so;;"
for n in 1 2 4; do "$MPIEXEC" -n $n "$build/serve_idle"; done

median() { # seconds for RUNS runs of the command: the median
  for _ in $(seq "$RUNS"); do
    s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN { print e - s }'
  done | sort -g | sed -n "$(( (RUNS + 1) / 2 ))p"
}
c=$(median "$MPIEXEC" -n 4 "$build/mpi_empty")
l=$(median "$MPIEXEC" -n 4 lua5.4 -l mp -e '')
a=$(median "$MPIEXEC" -n 4 lua5.4 -l mp.auto -e '')
awk -v c="$c" -v l="$l" -v a="$a" 'BEGIN { printf "startup ranks 4: C MPI_Init/Finalize %.3f s, " \
  "lua5.4 -l mp %.3f s (ratio %.2f), -l mp.auto %.3f s (ratio %.2f)\n", c, l, l / c, a, a / c }'
