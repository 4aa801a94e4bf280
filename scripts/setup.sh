#!/usr/bin/env bash
# Install what mplua needs on Debian 12 (only what is missing), as root or via sudo.
set -euo pipefail
# (the README lists the same packages: keep them in step)
# tmux and procps (pgrep): the tests that drive a terminal and find processes;
# iproute2: the tests across network namespaces (tests/sh/nodes_*.sh);
# clang: the fuzz target (libFuzzer); chromium: the trace report test renders the page headless;
# libzmq3-dev, libcjson-dev, libssl-dev: the Jupyter kernel; python3-jupyter-client,
# jupyter-nbconvert, python3-nbclient: its tests (real clients); python3-ipykernel,
# python3-ipyparallel: its benchmark (none of them pulls Open MPI);
# libfftw3-dev: the FFTW plug-in of mp.fft (optional at build time: FFTW is GPL-2+ and only the
# plug-in links it); python3-numpy: the test that numpy.load reads what mp.save wrote
pkgs=(cmake make gcc pkg-config liblua5.4-dev lua5.4 mpich libmpich-dev libcriterion-dev libreadline-dev
      tmux procps iproute2 clang libclang-rt-14-dev chromium
      libzmq3-dev libcjson-dev libssl-dev python3-jupyter-client jupyter-nbconvert python3-nbclient
      python3-ipykernel python3-ipyparallel libfftw3-dev python3-numpy)
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
