-- ranks: 1 2 4
-- SPDX-License-Identifier: MIT
-- mp.trace: one recording with p2p, requests, collectives, a map, a pool, an
-- aborted task and a task after it gives trace-event JSON that passes the
-- checker (pids named, X events nested, flows paired and attached to the
-- zero-length out/in events); the matrices of a ring, an all-to-all and a
-- binomial bcast are the expected ones, from mp.trace.matrix and the file.
local TJ = require "mplua.trace_json"
local n = mp.size
local file = os.tmpname()

local function ring(rounds)
  mp.exec(function(r)
    local c = mp.world
    for _ = 1, r do
      c:send((c.rank + 1) % c.size, "hi", c.rank)
      assert(c:recv((c.rank - 1) % c.size) == "hi")
    end
  end, rounds)
end

assert(not mp.trace.on())
mp.trace.start{events = 4096}
assert(mp.trace.on())
ring(3)
mp.exec(function()
  local c = mp.world
  local q = c:irecv((c.rank - 1) % c.size)
  local s = c:isend((c.rank + 1) % c.size, {1, 2, 3})
  s:wait()
  q:wait()
  c:bcast(c.rank == 0 and {1, 2, 3} or nil)
  local t = {}
  for j = 1, c.size do t[j] = c.rank * 10 + j end
  c:alltoall(t)
  assert(c:allreduce(1, "sum") == c.size)
  c:barrier()
  c:gather(c.rank)
  mp.trace.region("user work", function() mp.trace.mark("halfway") end)
end)
local m = mp.mapper(function(t) return t * 2 end, {{}, {}, {}, {}, {}})
assert(m({{1}, {2}, {3}, {4}, {5}})[5][1] == 10)
local reaped = 0
mp.pool{sow = function(k) if k <= 20 then return k end end, work = function(k) return k * k end,
        reap = function(k, r) assert(r == k * k) reaped = reaped + 1 end}
assert(reaped == 20)
local ok, err = pcall(mp.exec, function()
  local c = mp.world
  if c.rank == c.size - 1 then error("boom") end
  c:recv(c.size - 1) -- never comes: the abort takes every rank out
end)
assert(not ok and tostring(err):find("boom"), tostring(err))
ring(1)
local res = mp.trace.stop(file)
assert(not mp.trace.on())
assert(res.file == file and res.ranks == n and res.events > 0 and res.lost == 0)

local tr = TJ.load(file)
assert(tr.ranks == n)
local good, st = TJ.check(tr)
assert(good, st)
local bn = st.by_name
-- one send and one recv per rank and round; the aborted task's recvs (a
-- rank the abort stops before its recv has none)
assert(bn.send == 4 * n and bn.recv >= 4 * n and bn.recv <= 4 * n + n - 1,
       ("%s sends, %s recvs"):format(bn.send, bn.recv))
assert(bn.isend == n and bn.irecv == n and bn.wait == 2 * n)
assert(bn.bcast == n and bn.alltoall == n and bn.allreduce == n and bn.barrier == n and bn.gather == n)
assert(bn["map job"] == 5, "one span per map job")
assert((bn["pool batch"] or 0) + (bn["pool job"] or 0) >= 1)
assert(bn["abort resync"] == n, "every rank resynchronises once")
assert(bn["user work"] == n and st.marks == n)
-- every p2p message has its arrow: 4 ring rounds + 1 isend round, n per round
local p2p = 0
for _, e in ipairs(tr.events) do
  if e.ph == "X" and e.name == "out" and e.args.kind == "p2p" then p2p = p2p + 1 end
end
assert(p2p == 5 * n, p2p)
assert(st.flows >= 5 * n)
-- source lines: the ring's send is the line of c:send above
local line
for _, e in ipairs(tr.events) do
  if e.ph == "X" and e.name == "send" then line = e.args.src break end
end
local send_line -- where c:send is in ring() above
local i = 0
for l in io.lines(arg[0]) do
  i = i + 1
  if l:find("c:send((c.rank + 1)", 1, true) then send_line = i break end
end
assert(line and line:match("trace_events%.lua:" .. send_line .. "$"), line)
assert(tr.lines >= #tr.events, "one event per line")
os.remove(file)

-- matrices of known schemes
local function expect(kind, want, by)
  local a = mp.trace.matrix{kind = kind, by = by}
  local f = TJ.matrix(TJ.load(file), kind, by)
  for i = 1, n do
    for j = 1, n do
      local w = want(i - 1, j - 1)
      assert(a:get(i, j) == w and f[i][j] == w,
             ("%s matrix [%d][%d]: %s and %s, want %d"):format(kind, i, j, a:get(i, j), f[i][j], w))
    end
  end
end
mp.trace.start{file = file}
ring(2)
mp.trace.stop()
expect("p2p", function(i, j) return n > 1 and j == (i + 1) % n and 2 or (n == 1 and 2 or 0) end)
expect("coll", function() return 0 end)

mp.trace.start{file = file}
mp.exec(function() local t = {} for j = 1, mp.world.size do t[j] = j end mp.world:alltoall(t) end)
mp.trace.stop()
expect("alltoall", function(i, j) return i ~= j and 1 or 0 end)
expect("p2p", function() return 0 end)

mp.trace.start{file = file}
mp.exec(function() mp.world:bcast(mp.world.rank == 0 and "x" or nil) end)
mp.trace.stop()
-- binomial tree from 0: vr receives from vr minus its lowest set bit; and
-- the root check's ring (coll.c): each rank sends the next an empty message
expect("bcast", function(i, j)
  return (j ~= 0 and i == j - (j & -j) and 1 or 0) + (n > 1 and j == (i + 1) % n and 1 or 0)
end)
local ok2, e2 = pcall(mp.trace.matrix, {kind = "nope"})
assert(not ok2 and e2:find("unknown kind"))
os.remove(file)
print("trace_events ok", n)
