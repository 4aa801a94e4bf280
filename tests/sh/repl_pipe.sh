# ranks: nompi 1 2
# SPDX-License-Identifier: MIT
# The prompt with stdin a pipe (as always under mpiexec): it still runs, with
# "> " and ">> " on stdout and nothing echoed; expressions print their values
# (also with a leading '='); multi-line chunks continue; an error is reported
# and the session goes on; end of input ends it with status 0; os.exit(3)
# ends it with status 3.
set -eu
N=${1:?usage: $0 nompi|RANKS}
. "$(dirname "$0")/lib/common.bash"
err_empty() {
  if [ -s err ]; then echo "FAIL ($N): $1: unexpected stderr:" >&2; cat err >&2; exit 1; fi
}

session "expressions" 0 \
'1 + 1
"a", nil, 3
=2 * 5
= "eq", 1
print("hi")
local x = 1
x
nil
' \
'> 2
> a	nil	3
> 10
> eq	1
> hi
> > nil
> nil
> 
'
err_empty "expressions"

session "multi-line chunks" 0 \
'function f(x)
  return x * 2
end
f(21)
t = {1,
2,
3}
#t
for i = 1, 2 do
  print(i)
end
' \
'> >> >> > 42
> >> >> > 3
> >> >> 1
2
> 
'
err_empty "multi-line chunks"

# Errors come out where they happened (under mpiexec too, where rank 0's
# stdout and stderr are two pipes), with lua's wording at the prompt: no
# program name; one traceback each.
joined "errors do not end the session" 0 \
'error("boom")
y = = 1
print("still here")
nosuchfunction()
1 + 1
'
in_order "errors in order" out \
  "> stdin:1: boom" "stack traceback:" \
  "> stdin:1: unexpected symbol near '='" \
  "> still here" \
  "> stdin:1: attempt to call a nil value (global 'nosuchfunction')" "stack traceback:" \
  "> 2" "> "
count_lines "one traceback per runtime error" out "stack traceback:" 2
count_lines "no program name at the prompt" out "[^ ]*mplua:" 0

joined "unfinished chunk at end of input" 0 \
'for i = 1, 2 do
'
in_order "unfinished chunk" out "> >> stdin:1: 'end' expected near <eof>" "> "

# error objects: __tostring is used wherever the prompt reports one
joined "error objects" 0 \
'error(setmetatable({}, {__tostring = function() return "custom E" end}))
print = function() error(setmetatable({}, {__tostring = function() return "P!" end})) end
1
'
in_order "error objects" out "> custom E" "> > error calling 'print' (P!)"

session "empty input" 0 '' '> 
'
session "last line without newline" 0 '6 * 7' '> 42
> 
'

session "os.exit(3)" 3 \
'print(1)
os.exit(3)
print(2)
' \
'> 1
> '

session "io.read shares stdin with the prompt" 0 \
'line = io.read()
some text
line
' \
'> > some text
> 
'
echo "ok"
