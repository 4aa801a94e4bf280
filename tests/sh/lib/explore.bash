# SPDX-License-Identifier: MIT
# Shared by the explorer's tests (mpi_explore.sh, mpi_explore_cli.sh;
# sourced after lib/common.bash): race_found STATUS OUT checks that the
# explorer's report OUT (exit status STATUS) of scripts/examples/mpi_race.lua
# at N ranks found both orders, and that each order's first seed replays it
# 5 times out of 5 under MPLUA_SCHEDULE.
race_found() {
  cat "$2"
  [ "$1" = 1 ] || { echo "FAIL: explore found no race (status $1)"; exit 1; }
  grep -q "2 outcomes" "$2" || { echo "FAIL: want 2 outcomes"; exit 1; }
  grep -q "first divergence, seed" "$2" || { echo "FAIL: no divergence reported"; exit 1; }
  for want in "rank 1 then rank 2" "rank 2 then rank 1"; do
    seed=$(grep -B1 "^  $want\$" "$2" | sed -n 's/^outcome [0-9]*, seeds \([0-9]*\).*/\1/p')
    [ -n "$seed" ] || { echo "FAIL: no seed gave '$want'"; exit 1; }
    for _ in 1 2 3 4 5; do
      got=$(MPLUA_SCHEDULE=$seed "$MPIEXEC" -n "$N" "$MPLUA" -b "$ex/mpi_race.lua")
      [ "$got" = "$want" ] || { echo "FAIL: seed $seed gave '$got', want '$want'"; exit 1; }
    done
  done
}
