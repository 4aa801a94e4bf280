#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Soak the transport: the xfer harness (tests/lua/xfer_*.lua) over and over,
# each run with a fresh random seed, a random rank count and both send paths,
# until a run fails (its command line, seed included, is printed so it can be
# replayed exactly) or the time is up.
#   scripts/xfer_soak.sh [minutes]      (default 10; needs build/mplua)
set -euo pipefail
cd "$(dirname "$0")/.."
end=$((SECONDS + 60 * ${1:-10}))
ranks=(1 2 3 4 5 8)
tests=(xfer_p2p xfer_coll xfer_reduce xfer_pool xfer_fault)
runs=0
out=$(mktemp "${TMPDIR:-/tmp}/xfer_soak.XXXXXX") # a fresh file of our own, never a planted link
trap 'rm -f "$out"' EXIT
cd tests/lua
while [ "$SECONDS" -lt "$end" ]; do
  t=${tests[RANDOM % ${#tests[@]}]}
  n=${ranks[RANDOM % ${#ranks[@]}]}
  seed=$((RANDOM * 32768 + RANDOM))
  path=$((RANDOM % 2))
  cmd="MPLUA_XFER_SEED=$seed MPLUA_ZERO_COPY=$path mpiexec -n $n ../../build/mplua $t.lua"
  if ! env MPLUA_XFER_SEED=$seed MPLUA_ZERO_COPY=$path MPLUA_XFER_ROUNDS=1 \
       timeout 600 mpiexec -n "$n" ../../build/mplua "$t.lua" >"$out" 2>&1; then
    echo "xfer_soak: FAILED after $runs runs: (cd tests/lua && $cmd)"
    tail -n 30 "$out"
    exit 1
  fi
  runs=$((runs + 1))
done
echo "xfer_soak: $runs runs, no failure"
