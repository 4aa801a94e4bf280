#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configure and build into a directory (default build/). Extra arguments go to cmake.
# The tests are configured whenever Criterion (their unit-test library) is installed,
# every time: CMake keeps BUILD_TESTING in its cache, so a build made without them
# (scripts/demo.sh on a machine set up for the demo alone) would otherwise stay so.
# An explicit -DBUILD_TESTING=... among the arguments wins.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BUILD_DIR:-build}
testing=OFF
pkg-config --exists criterion 2>/dev/null && testing=ON
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=$testing "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
