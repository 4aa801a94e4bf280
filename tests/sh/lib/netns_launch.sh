#!/bin/sh
# SPDX-License-Identifier: MIT
# Hydra's "ssh" for the nodes_*.sh tests (mpiexec -launcher ssh
# -launcher-exec THIS): called as `THIS [-x ...] HOST COMMAND...`, runs
# COMMAND in the network namespace named HOST, through a shell as ssh would.
while [ $# -gt 0 ]; do
  case $1 in
    -*) shift ;;
    *) break ;;
  esac
done
host=${1:?usage: netns_launch.sh [options] HOST COMMAND...}
shift
exec ip netns exec "$host" sh -c "$*"
