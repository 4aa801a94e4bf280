# ranks: 1 2
# SPDX-License-Identifier: MIT
# Parallel tasks started from the prompt: mp.exec returns rank 0's results;
# a task that fails on one rank is reported (before the next prompt, with
# one traceback) and the next one works.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"

session "mp.exec at the prompt" 0 \
'mp.exec(function() return mp.rank end)
mp.size
' \
"> 0
> $N
> 
"
if [ -s err ]; then echo "FAIL ($N): unexpected stderr:" >&2; cat err >&2; exit 1; fi

# the README's example file: read on rank 0, shipped, run on every rank
ring="ring of $N: $(seq -s ' -> ' 0 $((N - 1))) -> 0"
session "mp.include of the ring example" 0 \
"t = mp.include('$MPLUA_TEST_DIR/../scripts/examples/ring.lua')
#t
" \
"> $ring
> $N
> 
"

# the report comes before the next prompt, with one traceback (the faulting
# rank's), and no program name
joined "a failing task, then one that works" 0 \
'mp.exec(function() if mp.rank == mp.size - 1 then error("task fault") end end)
mp.exec(function() return mp.rank + 10 end)
'
in_order "report, then the next task" out "> mp.exec: rank $((N - 1))/$N faulted: stdin:1: task fault" \
  "stack traceback:" "> 10" "> "
count_lines "one traceback per fault" out "stack traceback:" 1
count_lines "no program name at the prompt" out "[^ ]*mplua:" 0
echo "ok"
