# ranks: nompi 1 2
# SPDX-License-Identifier: MIT
# Exit statuses and batch mode (-b): 0 on success, 1 on any error, os.exit's
# own status on every rank; -b never prompts (stdin is then the script) and
# ends the whole job with status 1 at the first fault in a task, even one the
# leader's code would catch.
set -eu
N=${1:?usage: $0 nompi|RANKS}
. "$(dirname "$0")/lib/common.bash"

# plain statuses
check "success" 0 $'ok\n' -e 'print("ok")'
check "error in -e" 1 "" -e 'error("e1")'
check "os.exit(3) in -e" 3 "" -e 'os.exit(3)' -e 'print("not reached")'
check "os.exit(true)" 0 "" -e 'os.exit(true)'
check "os.exit(false)" 1 "" -e 'os.exit(false)'
printf 'print("s")\nos.exit(5)\n' >exit5.lua
check "os.exit(5) in a script" 5 $'s\n' exit5.lua

# os.exit(code, true) closes the state as lua does: pending __close
# handlers, then finalizers; without `true` neither runs
close='local x <close> = setmetatable({}, {__close = function() print("closed") end})
setmetatable({}, {__gc = function() print("collected") end})
os.exit(3, true)'
check "os.exit(3, true) closes the state" 3 $'closed\ncollected\n' -e "$close"
check "os.exit(3) does not" 3 "" -e "${close%, true)})"
check "os.exit(true, true)" 0 $'closed\ncollected\n' -e "${close%3, true)}true, true)"

# a finalizer run by the program's end: a task fails clearly where other
# ranks have left (it hung), os.exit's status wins
gc='setmetatable({}, {__gc = function()
  local ok, e = pcall(mp.exec, function() return 1 end)
  print(ok or e:match("mp.exec: .rank 0/%d+. the program has ended"))
  os.exit(4)
end})
print("bye")'
if [ "$N" = 2 ]; then want=$'bye\nmp.exec: [rank 0/2] the program has ended\n'; else want=$'bye\ntrue\n'; fi
check "a task in a finalizer at the end" 4 "$want" -e "$gc"

# the same task, the program then ending normally: at 1 rank it runs (its
# message buffer, made while the state closes, is freed: LeakSanitizer)
check "a task in a finalizer at the end, no os.exit" 0 "$want" -e "${gc%%  os.exit(4)*}
end}) print('bye')"

# a finalizer that calls os.exit at a worker's end (the job done, rank 0's
# exit notice received) ends that process as lua would: the job's status is
# os.exit's (at 1 rank, rank 0's finalizer's), with no report "in a task" and
# no MPI_Abort (said so and aborted)
wgc='mp.exec(function() if mp.rank == mp.size - 1 then
  KEEP = setmetatable({}, {__gc = function() os.exit(5) end}) end end)
print("end")'
check "os.exit in a worker's finalizer at its end" 5 $'end\n' -e "$wgc"
[ ! -s err ] || { cat err >&2; echo "FAIL ($N): os.exit in a worker's finalizer: stderr" >&2; exit 1; }

# -b: statuses 0 and 1
printf 'print("batch ok")\n' >ok.lua
check "-b success" 0 $'batch ok\n' -b ok.lua
check "-b error in -e" 1 "" -b -e 'error("b1")'
err_has "-b error in -e" "b1" 1
check "-b os.exit(4)" 4 "" -b -e 'os.exit(4)'
printf 'print(1 + 1)\n' >in
check "-b without script runs stdin, no prompt" 0 $'2\n' -b
printf 'error("from stdin")\n' >in
check "-b stdin script error" 1 "" -b
err_has "-b stdin script error" "from stdin" 1
: >in

# a fault in a task: caught by pcall without -b; ends the job with -b
task='local ok = pcall(mp.exec, function() if mp.rank == mp.size - 1 then error("task fault") end end)
print("caught", ok)'
check "task fault caught without -b" 0 $'caught\tfalse\n' -e "$task"
check "task fault ends the job with -b" 1 "" -b -e "$task"
err_has "task fault with -b" "task fault" 1
echo "ok"
