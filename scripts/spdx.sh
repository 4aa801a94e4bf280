#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every source file names its license in its first 3 lines:
#   /* SPDX-License-Identifier: MIT */     C (.c, .h, .h.in)
#   -- SPDX-License-Identifier: MIT        Lua (.lua, .rockspec)
#   # SPDX-License-Identifier: MIT         shell, Python, CMake, pkg-config,
#                                          sanitizer suppressions, any script
#                                          with a shebang (.ci/run)
#   .\" SPDX-License-Identifier: MIT       man pages (roff)
# After a first line that must stay first: a shebang, or a test's
# `-- ranks:` / `# ranks:` line.
#   scripts/spdx.sh --check   list the files without it; exit 1 if there is one
#   scripts/spdx.sh --fix     add it where it is missing (again: no change)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
[ "$mode" = --check ] || [ "$mode" = --fix ] || { echo "usage: $0 --check | --fix" >&2; exit 2; }
TAG="SPDX-License-Identifier: MIT"

# The comment line for a file, or nothing when it is not a source file.
comment_for() {
  case $1 in
    *.c | *.h | *.h.in) echo "/* $TAG */" ;;
    *.lua | *.rockspec) echo "-- $TAG" ;;
    *.sh | *.bash | *.py | *.cmake | *.cmake.in | */CMakeLists.txt | CMakeLists.txt | *.pc.in) echo "# $TAG" ;;
    scripts/man/*.[1-9].in) echo ".\\\" $TAG" ;;
    *.supp) echo "# $TAG" ;;
    *) # a script without an extension (.ci/run): its shebang says so
      if [ "$(head -c 2 "$1" | tr -d '\0')" = '#!' ]; then echo "# $TAG"; fi ;;
  esac
}

# The files of the tree: git's list in a checkout (build directories and
# other untracked files are not sources), else every file but build*/.
files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -co --exclude-standard
  else
    find . -path './build*' -prune -o -type f -print | sed 's|^\./||'
  fi
}

missing=0
while IFS= read -r f; do
  [ -f "$f" ] || continue
  line=$(comment_for "$f")
  [ -n "$line" ] || continue
  head -n 3 "$f" | grep -qF "$TAG" && continue
  if [ "$mode" = --check ]; then
    echo "$f"
    missing=1
    continue
  fi
  first=$(head -n 1 "$f")
  case $first in
    '#!'* | '-- ranks:'* | '# ranks:'*) # stays first
      { printf '%s\n%s\n' "$first" "$line"; tail -n +2 "$f"; } >"$f.spdx" ;;
    *)
      { printf '%s\n' "$line"; cat "$f"; } >"$f.spdx" ;;
  esac
  chmod --reference="$f" "$f.spdx"
  mv "$f.spdx" "$f"
  echo "spdx: $f"
done < <(files)
if [ "$mode" = --check ] && [ $missing = 1 ]; then
  echo "spdx: the files above lack '$TAG' in their first 3 lines (scripts/spdx.sh --fix)" >&2
  exit 1
fi
exit 0
