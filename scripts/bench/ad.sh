#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the autodiff benchmarks from a build dir and prints their ratios.
# Usage: scripts/bench/ad.sh [build-dir]   (default: build)
set -e
B=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
"$B/ad_core"
"$B/ad_chol"
"$B/ad_dists"
"$B/ad_handles"
"$B/mplua" --nompi -b "$HERE/ad_scalar.lua"
