# ranks: 1 2
# Parallel tasks started from the prompt: mp.exec returns rank 0's results;
# a task that fails on one rank is reported and the next one works.
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

session "a failing task, then one that works" 0 \
'mp.exec(function() if mp.rank == mp.size - 1 then error("task fault") end end)
mp.exec(function() return mp.rank + 10 end)
' \
'> > 10
> 
'
grep -qF "task fault" err || { echo "FAIL ($N): the task fault was not reported" >&2; cat err >&2; exit 1; }
echo "ok"
