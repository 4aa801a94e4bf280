# ranks: nompi 1 2
# SPDX-License-Identifier: MIT
# -j FILE runs FILE on every rank as a parallel task, before anything else
# (LUA_INIT, -e, the script), in the order given; a failing -j file ends the
# run with status 1. MPLUA_DISABLED=1 means --nompi.
set -eu
N=${1:?usage: $0 nompi|RANKS}
. "$(dirname "$0")/lib/common.bash"
size=$N
[ "$N" != nompi ] || size=1

# Each -j file appends a letter to ORDER on every rank. Nothing else may run
# before them, whatever the position of -j among the options.
printf 'ORDER = (ORDER or "") .. "a"\n' >ja.lua
printf 'ORDER = (ORDER or "") .. "b"\n' >jb.lua
check "-j order, before -e" 0 $'ab\n' -e 'print(ORDER)' -j ja.lua -j jb.lua
export LUA_INIT='io.write("init ", ORDER, "\n")'
check "-j before LUA_INIT" 0 $'init ab\nab\n' -e 'print(ORDER)' -j ja.lua -j jb.lua
unset LUA_INIT
check "-j glued, order kept" 0 $'ba\n' -jjb.lua -j ja.lua -e 'print(ORDER)'
printf 'io.open(os.getenv("OUTDIR") .. "/rank" .. mp.rank, "w"):write(ORDER):close()\n' >report.lua
OUTDIR=$tmp check "-j runs on every rank" 0 "" -j ja.lua -j jb.lua -j report.lua -e ""
for ((r = 0; r < size; r++)); do
  [ "$(cat "rank$r" 2>/dev/null)" = ab ] || { echo "FAIL ($N): rank $r did not run the -j files in order" >&2; exit 1; }
done
[ ! -e "rank$size" ] || { echo "FAIL ($N): a rank beyond $size ran" >&2; exit 1; }
printf 'error("job failed")\n' >bad.lua
check "-j error: status 1, nothing after" 1 "" -j bad.lua -e 'print("not reached")'
grep -qF "job failed" err || { echo "FAIL ($N): -j error not reported" >&2; cat err >&2; exit 1; }
check "-j missing file" 1 "" -j nosuch.lua -e 'print("not reached")'

# MPLUA_DISABLED=1: every process runs alone, as with --nompi
MPLUA_DISABLED=1 check "MPLUA_DISABLED=1" 0 "$(for ((r = 0; r < size; r++)); do echo 1; done)"$'\n' \
  -e 'print(mp.size)'
MPLUA_DISABLED=0 check "MPLUA_DISABLED=0" 0 "$size"$'\n' -e 'print(mp.size)'
echo "ok"
