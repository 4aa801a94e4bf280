#!/bin/sh
# SPDX-License-Identifier: MIT
# The posteriordb acceptance run: fifteen posteriors (scripts/posteriordb/)
# sampled with 4 chains of 1000 draws over the ranks, each parameter's mean
# and sd against posteriordb's reference draws (|z| <= 4, R-hat <= 1.05).
# Long (tens of minutes on two cores); tests/sh/posteriordb_quick.sh runs a
# subset with short chains.
# Usage: scripts/posteriordb.sh [build-dir] [ranks] [run.lua options and names...]
set -e
B=${1:-build}
N=${2:-2}
[ $# -ge 2 ] && shift 2 || shift $#
HERE=$(cd "$(dirname "$0")" && pwd)
exec mpiexec -n "$N" "$B/mplua" "$HERE/posteriordb/run.lua" --iter 1000 "$@"
