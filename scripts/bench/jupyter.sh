#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Jupyter kernel's benchmark (scripts/bench/jupyter.py): mplua's kernel at
# 1 and 4 ranks against ipykernel and ipyparallel (4 engines), interleaved.
#   scripts/bench/jupyter.sh [build]       ROUNDS=5 REPS=100 by default
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export JUPYTER_PATH="$tmp/pfx/share/jupyter:/usr/share/jupyter" JUPYTER_DATA_DIR="$tmp/data"
export JUPYTER_RUNTIME_DIR="$tmp/runtime" IPYTHONDIR="$tmp/ipython" JUPYTER_CONFIG_DIR="$tmp/config"
export MPLUA_LAUNCHER="${MPLUA_LAUNCHER:-mpiexec -n}"
"$build/mplua" --install-kernel --prefix "$tmp/pfx" -n 1 --name mplua-bench-1 >/dev/null
"$build/mplua" --install-kernel --prefix "$tmp/pfx" -n 4 --name mplua-bench-4 >/dev/null
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$tmp"
/usr/bin/python3 "$here/jupyter.py" mplua-bench-1 mplua-bench-4
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
