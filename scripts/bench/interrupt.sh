#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Responsiveness of interrupts and aborts, and what the poll costs a
# spinning loop, for two builds run in turn (interleaved): RUNS jobs of
# scripts/bench/interrupt.lua at 4 ranks each; prints each build's medians
# and the ratios new/old.
# Usage: scripts/bench/interrupt.sh OLD-BUILD-DIR [NEW-BUILD-DIR] [RUNS] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
old=$(cd "${1:?usage: $0 OLD-BUILD-DIR [NEW-BUILD-DIR] [RUNS] [ROUNDS]}" && pwd)
new=$(cd "${2:-$root/build}" && pwd)
RUNS=${3:-5}
ROUNDS=${4:-5}
MPIEXEC=${MPIEXEC:-mpiexec}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root"
for _ in $(seq "$RUNS"); do
  for b in old new; do
    dir=$old
    [ "$b" = new ] && dir=$new
    "$MPIEXEC" -n 4 "$dir/mplua" scripts/bench/interrupt.lua "$ROUNDS" >>"$out/$b"
  done
done
# each line: ctrlc X ms  error Y ms  spin Z
awk '
  function median(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  FNR == 1 { f++ }
  { n[f]++; c[f, n[f]] = $2; e[f, n[f]] = $5; s[f, n[f]] = $8 }
  END {
    for (k = 1; k <= 2; k++) {
      for (i = 1; i <= n[k]; i++) { cc[i] = c[k, i]; ee[i] = e[k, i]; ss[i] = s[k, i] }
      mc[k] = median(cc, n[k]); me[k] = median(ee, n[k]); ms[k] = median(ss, n[k])
    }
    printf "old: Ctrl-C to prompt %.1f ms, error to report %.1f ms, spin loop in a task %.4f of outside\n", mc[1], me[1], ms[1]
    printf "new: Ctrl-C to prompt %.1f ms, error to report %.1f ms, spin loop in a task %.4f of outside\n", mc[2], me[2], ms[2]
    printf "ratios new/old: Ctrl-C %.3f, error %.3f, spin %.4f\n", mc[2] / mc[1], me[2] / me[1], ms[2] / ms[1]
  }' "$out/old" "$out/new"
