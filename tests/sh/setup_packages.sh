# ranks: 1  quick: none
# SPDX-License-Identifier: MIT
# scripts/setup.sh installs what the tests run: each program and Python module
# below (what the tests, the fuzzer and the packaging tests call) belongs to a
# Debian package that setup.sh names, or that one of those depends on (through
# dpkg's database of installed packages: no network), or that every Debian
# system has (Essential, Priority required). A tool missing from the list
# passes on a machine that happens to have it and fails on a fresh one.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
setup=$MPLUA_TEST_DIR/../scripts/setup.sh
fail() { echo "FAIL ($N): $*" >&2; exit 1; }
command -v dpkg-query >/dev/null || { echo "skipped ($N): not Debian (no dpkg-query)"; exit 77; }

# setup.sh's packages: the words of its build=(...) and tests=(...) arrays
sed -n '/^\(build\|tests\)=(/,/)/p' "$setup" | sed 's/^[a-z]*=(//; s/)//' | tr ' ' '\n' |
  grep -E '^[a-z0-9][a-z0-9.+-]+$' | sort -u >named
[ "$(wc -l <named)" -ge 20 ] || fail "setup.sh's package lists were not found: $(tr '\n' ' ' <named)"

# programs: cmake, cpack, ctest; compilers (mpicxx needs g++); the terminal,
# process and network-namespace tests; the fuzzer; the kernel's and the
# notebook's clients; the packaging tests (cpack -G DEB runs `file` on every
# file it packs, and dpkg-shlibdeps); the exports' checks
progs="cmake cpack ctest gcc g++ mpicc mpicxx mpiexec pkg-config lua5.4 luarocks tmux pgrep ip
clang chromium jupyter jupyter-nbconvert dpkg-shlibdeps file man readelf nm objdump python3"
# Python modules the tests import (tests/jupyter, tests/sh/*.sh)
mods="numpy jupyter_client nbclient nbformat zmq"
# each one's file, and its other names under merged /usr (/bin, /sbin)
: >paths
for p in $progs; do
  path=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "$p") || fail "$p is not installed here"
  echo "$p $path" >>paths
done
for m in $mods; do
  path=$(/usr/bin/python3 -c "import $m; print($m.__file__)" 2>/dev/null) ||
    fail "Python module $m is not installed here"
  echo "$m $path" >>paths
done
while read -r what path; do
  real=$(realpath "$path")
  printf '%s\n' "$path" "$real" "${path#/usr}" "${real#/usr}"
done <paths | sort -u >candidates
# one dpkg-query for all (each call reads every package's file list)
xargs dpkg-query -S <candidates 2>/dev/null | grep -v '^diversion' >owners || true
: >needed
while read -r what path; do
  real=$(realpath "$path")
  pkg=
  for f in "$path" "$real" "${path#/usr}" "${real#/usr}"; do
    # "pkg[:arch][, pkg2...]: /path": the first package holding the path
    pkg=$(awk -v f="$f" '{ i = index($0, ": /"); p = substr($0, 1, i - 1); q = substr($0, i + 2) }
                         q == f { sub(/,.*/, "", p); sub(/:.*/, "", p); print p; exit }' owners)
    [ -n "$pkg" ] && break
  done
  [ -n "$pkg" ] || fail "no package holds $path ($what)"
  echo "$pkg $what" >>needed
done <paths

# what installing the named packages brings: their dependencies, recursively,
# over the installed packages (alternatives and virtual packages included)
dpkg-query -W -f='${Package}\t${Essential}\t${Priority}\t${Provides}\t${Pre-Depends}, ${Depends}\n' >db
/usr/bin/python3 - named db >closure <<'PY'
import re, sys
named = open(sys.argv[1]).read().split()
prov, deps, base = {}, {}, set()
for line in open(sys.argv[2]):
    pkg, ess, prio, provides, dep = line.rstrip("\n").split("\t")
    deps[pkg] = dep
    prov.setdefault(pkg, set()).add(pkg)
    for v in provides.split(","):
        v = re.sub(r"[ (:].*", "", v.strip())
        if v: prov.setdefault(v, set()).add(pkg)
    if ess == "yes" or prio == "required": base.add(pkg)
seen, todo = set(base), list(named)
while todo:
    p = todo.pop()
    for q in prov.get(p, ()):
        if q in seen: continue
        seen.add(q)
        for alt in re.split(r"[,|]", deps.get(q, "")):
            name = re.sub(r"[ (:].*", "", alt.strip())
            if name: todo.append(name)
print("\n".join(sorted(seen)))
PY
sort -u needed | while read -r pkg what; do
  grep -qx "$pkg" closure ||
    { echo "FAIL ($N): $what comes from Debian's $pkg, which scripts/setup.sh neither names nor pulls in" >&2; exit 1; }
done
echo "ok ($N): $(wc -l <needed) programs and modules, all from setup.sh's packages ($(wc -l <named) named, $(wc -l <closure) with dependencies)"
