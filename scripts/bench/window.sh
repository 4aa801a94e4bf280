#!/bin/bash
# SPDX-License-Identifier: MIT
# The send window of blocking transposes, interleaved: for each round, the base build
# (every send at once) and this build at each window, one after the other.
#   scripts/bench/window.sh BASE_MPLUA [ranks=8] [n=2048] [rounds=3] [windows="0 4 8 16"]
set -euo pipefail
base=$1 ranks=${2:-8} n=${3:-2048} rounds=${4:-3} windows=${5:-"0 4 8 16"}
here=$(cd "$(dirname "$0")" && pwd)
new=${MPLUA:-$here/../../build/mplua}
for r in $(seq "$rounds"); do
  echo "round $r"
  echo -n "  base: "; mpiexec -n "$ranks" "$base" "$here/window.lua" "$n" 3 4
  for w in $windows; do
    echo -n "  new:  "; MPLUA_XCHG_WINDOW=$w mpiexec -n "$ranks" "$new" "$here/window.lua" "$n" 3 4
  done
done
