# ranks: 2 3 4  quick: 3  sanitize: 3
# SPDX-License-Identifier: MIT
# A rank short of memory receiving large messages: the last rank limits its
# own address space (prlimit on itself, once the job runs) to what it uses
# plus 64 MiB, then is sent 192 MiB as a string, an mp.Array, a table of
# strings (inline bytes: flat, one part), through mp.bcast (as a leaf, and at
# 4 ranks as a rank that forwards) and through an irecv. Each time its task
# fails with "mp.OP: [rank R/N] out of memory receiving a message of B bytes
# from rank S", its parts drained (the sender's send completes), and the
# next task works on every rank. A message whose buffer fits but whose values
# do not fit beside it fails with Lua's memory error, naming the message; a
# message that fits still arrives whole afterwards. ASan's allocator is told
# to return NULL as malloc does (its default is to end the process), and to
# keep little freed memory aside (its quarantine would hold the 64 MiB).
set -eu
N=${1:?usage: $0 ranks}
. "$(dirname "$0")/lib/common.bash"
command -v prlimit >/dev/null || { echo "FAIL: no prlimit (util-linux, which every Debian system has)" >&2; exit 1; }

cat >oom.lua <<'LUA'
local N, R = mp.size, mp.size - 1 -- rank R runs short of memory
local MiB = 1 << 20
local SIZE = 192 * MiB

mp.exec(function(r, margin)
  if mp.rank ~= r then return end
  local f = assert(io.open("/proc/self/status"))
  local vm = tonumber(f:read("a"):match("VmSize:%s*(%d+) kB"))
  f:close()
  f = assert(io.open("/proc/self/stat"))
  local pid = f:read("l"):match("^(%d+)")
  f:close()
  local cmd = ("prlimit --pid %s --as=%d"):format(pid, (vm + margin) * 1024)
  assert(os.execute(cmd), cmd)
end, R, 64 * 1024)

local function works()
  local sum = mp.exec(function()
    local n, me = mp.size, mp.rank
    mp.send((me + 1) % n, me) -- a ring of small messages too
    assert(mp.recv((me - 1) % n) == (me - 1) % n)
    return mp.allreduce(1, "sum")
  end)
  assert(sum == N, "the next task: " .. tostring(sum))
end

local function expect_oom(what, op, f)
  local ok, err = pcall(mp.exec, f, R, SIZE)
  assert(not ok, what .. ": the task did not fail")
  local text = tostring(err)
  local want = ("mp.%s: [rank %d/%d] out of memory receiving a message of "):format(op, R, N)
  assert(text:find(want, 1, true), what .. ": want '" .. want .. "...' in:\n" .. text)
  assert(text:find("%d+ bytes from rank %d+ %(the message was dropped%)"), what .. ":\n" .. text)
  assert(text:find(("rank %d/%d faulted"):format(R, N), 1, true), what .. ":\n" .. text)
  works()
  print(what .. ": ok")
end

expect_oom("string", "recv", function(r, size)
  if mp.rank == 0 then mp.send(r, string.rep("s", size))
  elseif mp.rank == r then mp.recv(0) end
end)
expect_oom("string again", "recv", function(r, size)
  if mp.rank == 0 then mp.send(r, "a header", string.rep("t", size))
  elseif mp.rank == r then mp.recv(0) end
end)
expect_oom("f64 array", "recv", function(r, size)
  if mp.rank == 0 then mp.send(r, mp.array("f64", size // 8))
  elseif mp.rank == r then mp.recv(0) end
end)
expect_oom("table of strings", "recv", function(r, size)
  if mp.rank == 0 then
    local t, s = {}, string.rep("u", 60000)
    for i = 1, size // 60000 do t[i] = s end
    mp.send(r, t)
  elseif mp.rank == r then
    mp.recv(0)
  end
end)
expect_oom("bcast", "bcast", function(r, size)
  mp.bcast(mp.rank == 0 and string.rep("b", size) or nil, 0)
end)
if N >= 4 then -- from root R-2, rank R forwards to R+1 in bcast's tree: it raises first
  expect_oom("bcast through a short rank", "bcast", function(r, size)
    local root = (r - 2) % mp.size
    mp.bcast(mp.rank == root and string.rep("c", size) or nil, root)
  end)
end
expect_oom("irecv", "wait", function(r, size)
  if mp.rank == 0 then mp.send(r, string.rep("i", size))
  elseif mp.rank == r then mp.irecv(0):wait() end
end)

-- a message whose buffer fits but whose values do not fit beside it (2^21
-- empty tables: 12 MiB on the wire, over 150 MiB as Lua tables): Lua's
-- memory error, said with the message it was decoding
do
  local ok, err = pcall(mp.exec, function(r)
    if mp.rank == 0 then
      local t = {}
      for i = 1, 1 << 21 do t[i] = {} end
      mp.send(r, t)
    elseif mp.rank == r then
      mp.recv(0)
    end
  end, R)
  local text = tostring(err)
  local want = ("mp.recv: [rank %d/%d] not enough memory for the values of a message of "):format(R, N)
  assert(not ok and text:find(want, 1, true), text)
  works()
  print("values of a message: ok")
end

-- what fits still arrives whole
assert(mp.exec(function(r)
  if mp.rank == 0 then mp.send(r, string.rep("f", 4 << 20)) end
  if mp.rank == r then return mp.handin(#mp.recv(0)) end
  return mp.handin(0)
end, R) == 4 << 20)
print("recv_oom ok")
LUA

# each step's line, the forwarding rank's bcast from 4 ranks on
want="string: ok
string again: ok
f64 array: ok
table of strings: ok
bcast: ok
"
[ "$N" -lt 4 ] || want="${want}bcast through a short rank: ok
"
want="${want}irecv: ok
values of a message: ok
recv_oom ok
"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:quarantine_size_mb=16" \
  check "a rank short of memory" 0 "$want" oom.lua
cat out
