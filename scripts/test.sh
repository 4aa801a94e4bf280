#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fresh Debian 12 machine: install what the tests need, build (warnings are
# errors), run every test (the quick, full and soak tiers; tests/README.md);
# fuzz the message decoder for a minute while the sanitized build compiles;
# then the tests again with AddressSanitizer + UBSan + LeakSanitizer, all but
# the soak tier and the runs labelled `nosan` (above 4 ranks: a fan-out of 2 gives
# the 3- and 4-rank runs the deep trees of the larger ones; 2 ranks beside 3 or 4;
# the rebuilds), and fewer rounds of the terminal's Ctrl-C (tests/README.md says why). MPLUA_NO_ASAN=1 skips that pass.
# ctest runs two tests at a time: a test of n ranks takes min(n, 2) of the
# two slots, so only single-process tests share the cores.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scripts/setup.sh test
BUILD_DIR=build scripts/build.sh -DMPLUA_WERROR=ON -DBUILD_TESTING=ON
(cd build && ctest -j2 --output-on-failure --timeout 300)
asan=${MPLUA_NO_ASAN:-0}
if [ "$asan" != 1 ]; then
  mkdir -p build-asan
  BUILD_DIR=build-asan scripts/build.sh -DMPLUA_WERROR=ON -DMPLUA_SANITIZE=ON -DBUILD_TESTING=ON \
    >build-asan/build.log 2>&1 &
  asan_build=$!
fi
scripts/fuzz.sh 60
if [ "$asan" != 1 ]; then
  wait "$asan_build" || { cat build-asan/build.log; exit 1; }
  # Leaks are checked everywhere; what MPICH and UCX keep until exit is
  # suppressed (tests/lsan.supp). The terminal's Ctrl-C rounds run 5 times,
  # not 25: their races are the first pass's to explore. The tests that build
  # mplua again from its sources (packages, a rock, a parent project) build it
  # without the sanitizers: the first pass has run them, as the house rules
  # (scripts that run no mplua code).
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     LSAN_OPTIONS=suppressions=$root/tests/lsan.supp \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 MPLUA_TEST_ROUNDS=5 MPLUA_NFAN=2 \
     ctest -j2 --output-on-failure --timeout 600 -LE 'soak|nosan')
fi
