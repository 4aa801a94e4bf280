-- ranks: 1 2 3 4 5  quick: 3
-- SPDX-License-Identifier: MIT
-- A trace of a task using mp.mpi records MPI's names: the calls in C name
-- their spans with their words (mpi.Send(tag 7), mpi.Recv(ANY_SOURCE, tag
-- 7), mpi.Wait(...), mpi.Waitall, mpi.Ssend, mpi.Sendrecv, mpi.Probe),
-- with the peer's rank; the calls in Lua (collectives, topologies) are
-- regions named as MPI's around mp's spans; every span is placed at the
-- script's line, not inside mp.mpi's own Lua; mp's own calls keep their
-- names. Read back with python3's json module.
local file = os.tmpname()
mp.trace.start{file = file}
local line = {} -- what each call's line is
mp.exec(function()
  local mpi = mp.mpi
  local me, n = mp.rank, mp.size
  local right, left = (me + 1) % n, (me - 1) % n
  if me ~= 0 then mpi.Send(me, 0, 7)                                    -- line A
  else for _ = 1, n - 1 do mpi.Recv(mpi.ANY_SOURCE, 7) end end          -- line B
  local r = mpi.Irecv(mpi.ANY_SOURCE, 3)
  mpi.Send("x", right, 3)
  mpi.Wait(r)
  mpi.Waitall({mpi.Irecv(left, 4), mpi.Isend(1, right, 4)})
  mpi.Sendrecv(me, right, 5, left, 5)
  if n > 1 then
    if me == 0 then mpi.Ssend(1, 1, 6) elseif me == 1 then mpi.Probe(0, 6); mpi.Recv(0, 6) end
  end
  mpi.Allreduce(mpi.Comm_rank(), mpi.SUM)                              -- line C
  local c = mpi.Cart_create(mpi.COMM_WORLD, {n}, {true})
  mpi.Neighbor_allgather(me, c)
  mp.send(right, "mp's")
  mp.recv(left)
end)
mp.trace.stop()
do -- the lines of the calls checked below, from this file
  local k = 0
  for l in io.lines(arg and arg[0] or "mpi_trace.lua") do
    k = k + 1
    if l:find("%-%- line A$") then line.A = k end
    if l:find("%-%- line B$") then line.B = k end
    if l:find("%-%- line C$") then line.C = k end
  end
end

local py = os.tmpname()
local f = assert(io.open(py, "w"))
f:write([[
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))
for e in d["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") in ("p2p", "coll", "region", "neighbor_allgather"):
        a = e["args"]
        print("%d|%s|%s|%s|%s" % (e["pid"], e["cat"], e["name"], a.get("peer", ""), a.get("src", "")))
]])
f:close()
local p = assert(io.popen("python3 " .. py .. " " .. file .. " 2>&1"))
local spans = {} -- spans[rank] = list of {cat, name, peer, src}
for l in p:lines() do
  local pid, cat, name, peer, src = l:match("^(%d+)|([^|]*)|([^|]*)|([^|]*)|(.*)$")
  assert(pid, "python3: " .. l)
  local t = spans[tonumber(pid)] or {}
  spans[tonumber(pid)] = t
  t[#t + 1] = {cat = cat, name = name, peer = tonumber(peer), src = src}
end
assert(p:close(), "python3 could not read the trace")
os.remove(py)
os.remove(file)

local function find(r, name)
  local out = {}
  for _, s in ipairs(spans[r] or {}) do
    if s.name == name then out[#out + 1] = s end
  end
  return out
end
local function one(r, name)
  local s = find(r, name)
  assert(#s >= 1, ("rank %d: no span %q"):format(r, name))
  return s[1]
end

local n = mp.size
for r = 0, n - 1 do
  local right, left = (r + 1) % n, (r - 1) % n
  if r ~= 0 then
    local s = one(r, "mpi.Send(tag 7)")
    assert(s.peer == 0 and s.src:match("mpi_trace%.lua:(%d+)$") == tostring(line.A), s.src)
  else
    local got = find(0, "mpi.Recv(ANY_SOURCE, tag 7)")
    assert(#got == n - 1)
    for _, s in ipairs(got) do
      assert(s.src:match(":(%d+)$") == tostring(line.B) and s.peer >= 1 and s.peer < n)
    end
  end
  one(r, "mpi.Irecv(ANY_SOURCE, tag 3)")
  assert(one(r, "mpi.Send(tag 3)").peer == right)
  local w = one(r, "mpi.Wait(ANY_SOURCE, tag 3)").peer -- none when the Irecv had matched
  assert(w == nil or w == left)
  assert(one(r, "mpi.Irecv(tag 4)").peer == left and one(r, "mpi.Isend(tag 4)").peer == right)
  one(r, "mpi.Waitall")
  local sr = one(r, "mpi.Sendrecv(tag 5)").peer -- "several" (nil) when it sent to another
  assert(sr == left or (sr == nil and right ~= left))
  if n > 1 and r == 0 then assert(one(0, "mpi.Ssend(tag 6)").peer == 1) end
  if n > 1 and r == 1 then assert(one(1, "mpi.Probe(tag 6)").peer == 0) end
  local reg = one(r, "mpi.Allreduce")
  assert(reg.cat == "region" and reg.src:match(":(%d+)$") == tostring(line.C), reg.src)
  local red = one(r, "allreduce") -- mp's span inside, at the user's line too
  assert(red.cat == "coll" and red.src:match(":(%d+)$") == tostring(line.C), red.src)
  one(r, "mpi.Cart_create")
  one(r, "mpi.Neighbor_allgather")
  -- mp's own calls keep their names; no mp.mpi call shows as mp's
  assert(#find(r, "send") == 1 and #find(r, "recv") == 1, "mp's send and recv")
  assert(#find(r, "irecv") == 0 and #find(r, "wait") == 0 and #find(r, "waitall") == 0)
  assert(#find(r, "mpi.Comm_rank") == 0, "local calls record nothing")
end
