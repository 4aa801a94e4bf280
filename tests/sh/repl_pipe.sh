# ranks: nompi 1 2
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

session "errors do not end the session" 0 \
'error("boom")
y = = 1
print("still here")
nosuchfunction()
1 + 1
' \
'> > > still here
> > 2
> 
'
err_has "runtime error" "boom"
err_has "syntax error" "stdin:1:"
err_has "call of nil" "nosuchfunction"
err_has "traceback" "stack traceback:"

session "unfinished chunk at end of input" 0 \
'for i = 1, 2 do
' \
'> >> > 
'
err_has "unfinished chunk" "<eof>"

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
