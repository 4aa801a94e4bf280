#!/bin/bash
# SPDX-License-Identifier: MIT
# scale.lua at 2, 8, 16, 32 and 64 ranks (or those given), one job each, and
# the table: every row beside C MPI's barrier and 1 MiB bcast of the same job,
# and the growth of abort + recovery against the barrier's from the first
# count past 2 to the last.
# Run: scripts/bench/scale.sh [build-dir] [rounds] [counts...]
set -eu
build=${1:-build}
rounds=${2:-3}
shift $(( $# < 2 ? $# : 2 ))
counts=${*:-2 8 16 32 64}
rows=()
for p in $counts; do
  row=$(mpiexec -n "$p" "$build/mpbench" scripts/bench/scale.lua "$rounds" | tail -1)
  echo "$row"
  rows+=("$row")
done
# growth: abort + recovery and C barrier, from the first row past 2 ranks to the last
first= last=
for r in "${rows[@]}"; do
  p=$(echo "$r" | awk -F'|' '{print $2+0}')
  [ "$p" -gt 2 ] && [ -z "$first" ] && first=$r
  last=$r
done
if [ -n "$first" ] && [ "$first" != "$last" ]; then
  awk -F'|' -v a="$first" -v b="$last" 'BEGIN {
    split(a, x, "|"); split(b, y, "|");
    ga = y[4] / x[4]; gb = y[9] / x[9];
    printf "abort + recovery grows %.1fx from %d to %d ranks, C barrier %.1fx: ratio %.2f (at most 2)\n",
      ga, x[2], y[2], gb, ga / gb }'
fi
