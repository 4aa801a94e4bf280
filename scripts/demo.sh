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
# A build directory of its own: BUILD_TESTING=OFF stays in a directory's
# CMake cache, so build/ (scripts/build.sh's and the tests') keeps its tests.
dir=build-demo
if [ -z "$mplua" ]; then
  scripts/setup.sh demo            # what building and running need, nothing for the tests
  BUILD_DIR=$dir scripts/build.sh -DBUILD_TESTING=OFF
  mplua=$dir/mplua
fi
mpiexec -n 4 "$mplua" scripts/demo.lua
