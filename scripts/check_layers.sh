#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The house's rules, checked over the sources (DESIGN.md section 2):
#   ad/ < mpbuiltins/ < interp/; nothing under ad/ includes a Lua or MPI header;
#   inside mpbuiltins/: array < wire, adlib < chan < p2p < coll < layout < topo < tasks, fftw (the
#   FFTW plug-in, a module of its own) < map, mpi < trace < mp.c,
#   and array/, wire/, adlib/ include no MPI header;
#   inside chan/: floors (CHAN_FLOORS, printed), a file including only headers of its floor
#   or below, and none including chan.h (the umbrella of the layers above);
#   a function declared in a wing's header is defined in that wing (so no call
#   reaches up through a header declared below its definition);
#   no source file over 600 lines.
# Prints every violation and exits 1 if there is one.
set -u
cd "$(dirname "$0")/.."
bad=0
say() { echo "check_layers: $*"; bad=1; }

level() { # the rank of a wing; unknown wings are an error
  case $1 in
    array) echo 0 ;; wire | adlib) echo 1 ;; chan) echo 2 ;; p2p) echo 3 ;; coll) echo 4 ;;
    layout) echo 5 ;; topo) echo 6 ;; tasks | fftw) echo 7 ;; map | mpi) echo 8 ;; trace) echo 9 ;;
    .) echo 10 ;; *) echo -1 ;;
  esac
}

# ad/: plain C
for f in ad/*.[ch]; do
  if grep -nE '#\s*include\s*[<"](lua|lauxlib|lualib|mpi)\.h[">]' "$f" >/dev/null ||
     grep -nE '#\s*include\s*"[a-z]+/' "$f" >/dev/null; then
    say "$f: ad/ is the plain C core: it includes $(grep -ohE '#\s*include\s*[<"][^">]+' "$f" | grep -E 'lua|lauxlib|lualib|mpi\.h|/' | tr '\n' ' ')"
  fi
done

# mpbuiltins/: includes point down
for f in $(find mpbuiltins -name '*.[ch]' | sort); do
  rel=${f#mpbuiltins/}
  wing=$(dirname "$rel")
  lw=$(level "$wing")
  [ "$lw" -ge 0 ] || { say "$f: unknown wing '$wing' (add it to scripts/check_layers.sh)"; continue; }
  while IFS= read -r inc; do
    to=$(echo "$inc" | sed -E 's/.*"([^"]+)".*/\1/')
    case $to in
      */*)
        tw=${to%%/*}
        lt=$(level "$tw")
        if [ "$tw" != "$wing" ] && { [ "$lt" -lt 0 ] || [ "$lt" -ge "$lw" ]; }; then
          say "$f includes $to: $wing/ may not reach $tw/"
        fi ;;
      mplua.h) say "$f includes interp's mplua.h: the builtins must not know the host" ;;
    esac
  done < <(grep -E '^\s*#\s*include\s*"' "$f")
  if [ "$lw" -le 1 ] && grep -qE '#\s*include\s*<mpi\.h>' "$f"; then
    say "$f: $wing/ has no MPI"
  fi
done

# chan/: floors, bottom first (a file's .c and .h share a floor)
CHAN_FLOORS=(
  "class msg frame state leave"
  "trace wake outbox mailbox codec"
  "ctl arrive"
  "hook wait send start"
)
declare -A chan_floor
for i in "${!CHAN_FLOORS[@]}"; do
  for n in ${CHAN_FLOORS[$i]}; do chan_floor[$n]=$i; done
  echo "check_layers: chan/ floor $((i + 1)): ${CHAN_FLOORS[$i]}"
done
for f in mpbuiltins/chan/*.[ch]; do
  n=$(basename "${f%.*}")
  [ "$n" = chan ] && continue
  [ -n "${chan_floor[$n]:-}" ] || { say "$f is on no floor of chan/ (add it to CHAN_FLOORS)"; continue; }
  while IFS= read -r to; do
    t=${to#chan/}
    t=${t%.h}
    if [ "$t" = chan ]; then
      say "$f includes chan/chan.h: inside chan/, include the floors' headers"
    elif [ -z "${chan_floor[$t]:-}" ]; then
      say "$f includes $to, which is on no floor of chan/"
    elif [ "${chan_floor[$t]}" -gt "${chan_floor[$n]}" ]; then
      say "$f (floor $((chan_floor[$n] + 1))) includes $to (floor $((chan_floor[$t] + 1))): chan/'s floors name nothing above them"
    fi
  done < <(grep -ohE '^\s*#\s*include\s*"chan/[^"]+"' "$f" | sed -E 's/.*"(chan\/[^"]+)".*/\1/')
done

# declarations and definitions live in the same wing
wing_of() { case $1 in mpbuiltins/*/*) p=${1#mpbuiltins/}; echo "${p%%/*}" ;; mpbuiltins/*) echo . ;;
            ad/*) echo ad ;; interp/*) echo interp ;; esac; }
name_re='^[A-Za-z][A-Za-z0-9_ *]*[ *]((mpb|lad|luaopen|mplua|ad)_[A-Za-z0-9_]*)\('
# "name file" for every definition (a line that opens a function, not a prototype)
defs=$(grep -nE "$name_re" -r --include='*.c' ad mpbuiltins interp | grep -vE ';\s*$' |
       grep -vE ':[0-9]+:(static|typedef)' |
       sed -E 's/^([^:]+):[0-9]+:[^(]*[ *]([A-Za-z0-9_]+)\(.*/\2 \1/')
decls=$(grep -nE "$name_re" -r --include='*.h' --include='*.h.in' ad mpbuiltins interp | grep -vE ':[0-9]+:(static|typedef)' |
        sed -E 's/^([^:]+):[0-9]+:[^(]*[ *]([A-Za-z0-9_]+)\(.*/\2 \1/' | sort -u)
declare -A defined
while read -r fn c; do [ -n "$fn" ] && defined[$fn]+="$c "; done <<<"$defs"
while read -r fn h; do
  [ -n "$fn" ] || continue
  hw=$(wing_of "$h")
  for c in ${defined[$fn]:-}; do
    cw=$(wing_of "$c")
    [ "$cw" = "$hw" ] || say "$fn is declared in $h ($hw/) but defined in $c ($cw/)"
  done
done <<<"$decls"

# file sizes
while read -r n f; do
  [ "$f" = total ] && continue
  [ "$n" -gt 600 ] && say "$f has $n lines (split it by concept)"
done < <(find ad mpbuiltins interp lib -name '*.[ch]' -o -name '*.lua' | xargs wc -l)

[ $bad = 0 ] && echo "check_layers: ok"
exit $bad
