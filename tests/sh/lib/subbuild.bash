# SPDX-License-Identifier: MIT
# Shared by the tests that build mplua again from its sources, as a packager
# or another project would (sourced after common.bash). Not a test itself.

src=$(cd "$MPLUA_TEST_DIR/.." && pwd)

# no_criterion DIR: a pkg-config directory holding every .pc file the
# system's pkg-config finds but Criterion's; with PKG_CONFIG_LIBDIR=DIR a
# configure sees a machine without Criterion.
no_criterion() {
  local d f
  mkdir -p "$1"
  for d in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
    [ -d "$d" ] || continue
    for f in "$d"/*.pc; do
      [ -e "$f" ] && [ ! -e "$1/${f##*/}" ] && ln -s "$f" "$1/"
    done
  done
  rm -f "$1/criterion.pc"
  pkg-config --exists lua5.4 || return 1
  ! PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$1 pkg-config --exists criterion
}

# copy_sources DIR: the checkout's files (what git tracks, or the tree
# without its build directories), for a build that writes into its sources.
copy_sources() {
  mkdir -p "$1"
  if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$src" ls-files -co --exclude-standard | (cd "$src" && tar -cf - -T -) | tar -xf - -C "$1"
  else
    (cd "$src" && tar -cf - --exclude='./build*' .) | tar -xf - -C "$1"
  fi
}

# built_fail DESC LOG: fail, showing the end of the build's log
built_fail() { tail -40 "$2" >&2; echo "FAIL ($N): $1" >&2; exit 1; }
