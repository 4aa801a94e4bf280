# ranks: 1 2
# SPDX-License-Identifier: MIT
# An array too large for memory is the user's error, naming the call, the
# rank and the bytes it wanted (not Lua's bare "not enough memory"), in a
# pcall and as a task's report; the next task works. (ASan's allocator must
# return NULL for a request beyond its maximum, as malloc does.)
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"

cat >alloc.lua <<'LUA'
local function check(e, rank)
  e = tostring(e)
  assert(e:find("mp.array: [rank " .. rank .. "/" .. mp.size .. "] cannot allocate " .. (8 << 40)
                .. " bytes (f64, 1099511627776 elements)", 1, true), e)
end
local ok, e = pcall(mp.array, "f64", 1 << 40)
assert(not ok)
check(e, 0)
local last = mp.size - 1
ok, e = pcall(mp.exec, function(r)
  if mp.rank == r then return mp.array("f64", 1 << 40) end
  mp.barrier()
end, last)
assert(not ok)
check(e, last)
assert(mp.exec(function() return #mp.array("f64", 1 << 10) end) == 1024)
print("array_alloc ok")
LUA

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1" \
  check "an array too large" 0 "array_alloc ok
" alloc.lua
echo ok
