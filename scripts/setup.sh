#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what mplua needs on Debian 12 (only what is missing), as root or via sudo.
#   scripts/setup.sh demo     build and run: compiler, CMake, Lua, MPICH, readline
#   scripts/setup.sh [test]   that, and what the tests need (the default)
set -euo pipefail
# (tests/README.md lists the test set's packages: keep them in step;
# tests/sh/setup_packages.sh checks that the tools the tests run come from these)
build=(cmake make gcc pkg-config liblua5.4-dev mpich libmpich-dev libreadline-dev)
# lua5.4: stock Lua loading mp.so; libcriterion-dev: the unit tests; tmux and
# procps (pgrep): the tests that drive a terminal and find processes;
# iproute2: the tests across network namespaces (tests/sh/nodes_*.sh);
# clang: the fuzz target (libFuzzer); chromium: the trace report test renders
# the page headless; python3: tests/lua/trace_names.lua reads a trace with
# Python's json module, tests/sh/hmc_csv.sh reads Stan CSV (standard library only); libzmq3-dev, libcjson-dev, libssl-dev: the Jupyter
# kernel (built when they are present); python3-jupyter-client,
# jupyter-nbconvert, python3-nbclient: its tests (real clients);
# python3-ipykernel, python3-ipyparallel: its benchmark (none pulls Open MPI);
# dpkg-dev, file, man-db, luarocks: the packaging tests (cpack -G DEB with
# dpkg-shlibdeps, which runs `file` on what it packs; man -l, luarocks make); libfftw3-dev: the FFTW plug-in of mp.fft
# (optional at build time: FFTW is GPL-2+ and only the plug-in links it);
# python3-numpy: the test that numpy.load reads what mp.save wrote
tests=(lua5.4 libcriterion-dev tmux procps iproute2 clang libclang-rt-14-dev chromium python3
       libzmq3-dev libcjson-dev libssl-dev python3-jupyter-client jupyter-nbconvert python3-nbclient
       python3-ipykernel python3-ipyparallel dpkg-dev file man-db luarocks libfftw3-dev python3-numpy)
case "${1:-test}" in
  demo) pkgs=("${build[@]}") ;;
  test) pkgs=("${build[@]}" "${tests[@]}") ;;
  *) echo "usage: scripts/setup.sh [demo|test]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
