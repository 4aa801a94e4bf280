#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fresh Debian 12 machine: install, build, run the demo on 4 ranks.
#   scripts/demo.sh           set up, build, run
#   scripts/demo.sh MPLUA     run with that mplua only (the tests do)
# Not in batch mode (-b): the demo catches a fault with pcall to show the
# report and the recovery, and under -b any fault ends the job.
set -euo pipefail
cd "$(dirname "$0")/.."
mplua=${1:-}
if [ -z "$mplua" ]; then
  scripts/setup.sh demo            # what building and running need, nothing for the tests
  BUILD_DIR=build scripts/build.sh # the tests too only if the machine has what they need
  mplua=build/mplua
fi
mpiexec -n 4 "$mplua" scripts/demo.lua
