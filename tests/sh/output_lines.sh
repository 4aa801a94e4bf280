# ranks: 2 3 4
# SPDX-License-Identifier: MIT
# Every rank's output reaches the terminal in whole lines (interp/lines.c):
# each rank prints many lines with print's several pieces, io.write pieces
# then a newline, and long lines (4000 bytes, under PIPE_BUF), while the
# others do the same; every line of the job's output must be one of those,
# whole, and each rank's lines all there, in its order. Run under mpiexec,
# in batch mode, under the front end (mplua -n N, piped), and with labels
# (MPLUA_LABELS=1 under mpiexec, --labels under the front end): then every
# line of stdout and stderr starts with "[rank] " naming the rank that wrote
# it.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
fail() { echo "FAIL ($N): $*" >&2; exit 1; }
K=300

cat >lines.lua <<LUA
local K = $K
mp.exec(function()
  local r = mp.rank
  for i = 1, K do
    print("rank", r, "line", i)
    io.write("w", r, " piece ")
    io.write(i)
    io.write("\n")
    if i % 10 == 0 then
      print(("long %d %d "):format(r, i) .. ("abcdefghij"):rep(400) .. " end")
      io.stderr:write(("e%d %d\n"):format(r, i))
    end
  end
end)
print("done")
LUA

# check.lua FILE...: every line whole and each rank's lines complete, in
# order; with LABELS=1, every line labelled by the rank it names
cat >check.lua <<'LUA'
local K, n, labels = tonumber(os.getenv("K")), tonumber(os.getenv("N")), os.getenv("LABELS") == "1"
local long = ("abcdefghij"):rep(400)
local next_of = {}
for r = 0, n - 1 do next_of[r] = {rank = 1, w = 1, long = 10, e = 10} end
local done, bad = 0, {}
local function take(r, kind, i, step)
  local nx = next_of[r]
  if not nx or nx[kind] ~= i then return false end
  nx[kind] = i + (step or 1)
  return true
end
for _, file in ipairs(arg) do
  for line in io.lines(file) do
    local body, from = line, nil
    if labels then
      local l, rest = line:match("^%[(%d+)%] (.*)$")
      body, from = rest, tonumber(l)
    end
    local ok = false
    if body then
      local r, i = body:match("^rank\t(%d+)\tline\t(%d+)$")
      if r then ok = take(tonumber(r), "rank", tonumber(i)) end
      if not r then
        r, i = body:match("^w(%d+) piece (%d+)$")
        if r then ok = take(tonumber(r), "w", tonumber(i)) end
      end
      if not r then
        local rest
        r, i, rest = body:match("^long (%d+) (%d+) (.*) end$")
        if r then ok = rest == long and take(tonumber(r), "long", tonumber(i), 10) end
      end
      if not r then
        r, i = body:match("^e(%d+) (%d+)$")
        if r then ok = take(tonumber(r), "e", tonumber(i), 10) end
      end
      if not r and body == "done" then r, ok, done = "0", true, done + 1 end
      if labels and r and tonumber(r) ~= from then ok = false end
    end
    if not ok then bad[#bad + 1] = #line > 100 and line:sub(1, 100) .. "..." or line end
  end
end
for r = 0, n - 1 do
  local nx = next_of[r]
  if nx.rank ~= K + 1 or nx.w ~= K + 1 or nx.long ~= K + 10 or nx.e ~= K + 10 then
    bad[#bad + 1] = ("rank %d: lines missing (next print %d, io.write %d, long %d, stderr %d)")
      :format(r, nx.rank, nx.w, nx.long, nx.e)
  end
end
if done ~= 1 then bad[#bad + 1] = "'done' " .. done .. " times" end
if #bad > 0 then
  print(#bad .. " bad lines, the first ones:")
  for j = 1, math.min(#bad, 10) do print("  " .. bad[j]) end
  os.exit(1)
end
LUA
check() { # DESC LABELS FILE...
  local desc=$1
  export K N LABELS=$2
  shift 2
  "$MPLUA" --nompi check.lua "$@" >verdict 2>&1 || { cat verdict >&2; fail "$desc"; }
}

"$MPIEXEC" -n "$N" "$MPLUA" lines.lua >out 2>err || fail "mpiexec: exit status $?"
check "mpiexec" 0 out err
"$MPIEXEC" -n "$N" "$MPLUA" -b lines.lua >out 2>err || fail "mpiexec -b: exit status $?"
check "mpiexec -b" 0 out err
MPLUA_LAUNCHER="$MPIEXEC -n" "$MPLUA" -n "$N" lines.lua </dev/null >out 2>err ||
  fail "front end: exit status $?"
check "front end" 0 out err
MPLUA_LABELS=1 "$MPIEXEC" -n "$N" "$MPLUA" lines.lua >out 2>err || fail "MPLUA_LABELS: exit status $?"
check "MPLUA_LABELS=1 under mpiexec" 1 out err
MPLUA_LAUNCHER="$MPIEXEC -n" "$MPLUA" -n "$N" --labels lines.lua </dev/null >out 2>err ||
  fail "front end --labels: exit status $?"
check "--labels under the front end" 1 out err
echo "ok ($N): whole lines"
