#!/usr/bin/env bash
# Fresh Debian 12 machine: install, build, run the demo on 4 ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
mpiexec -n 4 build/mplua -b scripts/demo.lua
