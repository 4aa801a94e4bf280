#!/usr/bin/env bash
# Fresh Debian 12 machine: install, build (warnings are errors), run every test;
# then the same with AddressSanitizer + UBSan. MPLUA_NO_ASAN=1 skips the second pass.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=build scripts/build.sh -DMPLUA_WERROR=ON
(cd build && ctest --output-on-failure --timeout 300)
if [ "${MPLUA_NO_ASAN:-0}" != 1 ]; then
  BUILD_DIR=build-asan scripts/build.sh -DMPLUA_WERROR=ON -DMPLUA_SANITIZE=ON
  # MPICH and UCX keep allocations until exit that LeakSanitizer reports as
  # leaks; ours are checked by the unit tests, which run with leak detection.
  (cd build-asan && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure --timeout 600 -E '\.20$')
fi
