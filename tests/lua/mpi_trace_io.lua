-- ranks: 1 2 3 4  quick: 2
-- SPDX-License-Identifier: MIT
-- A trace of a task using mp.mpi's files and windows lists their calls
-- under MPI's names, in the order each rank made them (regions around the
-- spans of what they do): the names of mpbuiltins/mpi/README.md's "Traces".
local file, path = os.tmpname(), os.tmpname()
mp.trace.start{file = file}
mp.exec(function(p)
  local mpi = mp.mpi
  local f = mpi.File_open(mpi.COMM_WORLD, p, "w+")
  f:Set_view(0, "f64")
  f:Write_at(mp.rank, mp.array("f64", {mp.rank}))
  f:Write_at_all(mp.size + mp.rank, mp.array("f64", {mp.rank}))
  f:Read_at(mp.rank, 1)
  f:Read_at_all(mp.rank, 1)
  f:Close()
  local a = mp.array("f64", 2)
  local win = mpi.Win_create(a)
  win:Fence()
  win:Put(mp.array("f64", {mp.rank}), (mp.rank + 1) % mp.size, 0)
  win:Get((mp.rank + 1) % mp.size, 1, 1)
  win:Accumulate(mp.array("f64", {1}), mp.rank, 1, mpi.SUM)
  win:Fence()
  win:Free()
  win = mpi.Win_create(a)                 -- fences and locks do not mix on one window
  win:Lock(0, "shared")
  win:Flush(0)
  win:Unlock(0)
  win:Free()
  mpi.Allreduce(1, mpi.SUM)
end, path)
mp.trace.stop()
os.remove(path)

local py = os.tmpname()
local f = assert(io.open(py, "w"))
f:write([[
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))
ev = [e for e in d["traceEvents"] if e.get("ph") == "X" and e["name"].startswith("mpi.")]
ev.sort(key=lambda e: (e["pid"], e["ts"], -e.get("dur", 0)))
for e in ev:
    print("%d|%s" % (e["pid"], e["name"]))
]])
f:close()
local p = assert(io.popen("python3 " .. py .. " " .. file .. " 2>&1"))
local names = {}
for l in p:lines() do
  local pid, name = l:match("^(%d+)|(.*)$")
  assert(pid, "python3: " .. l)
  local t = names[tonumber(pid)] or {}
  names[tonumber(pid)] = t
  t[#t + 1] = name
end
assert(p:close(), "python3 could not read the trace")
os.remove(py)
os.remove(file)

local want = {"mpi.File_open", "mpi.File.Set_view", "mpi.File.Write_at", "mpi.File.Write_at_all",
              "mpi.File.Read_at", "mpi.File.Read_at_all", "mpi.File.Close", "mpi.Win_create",
              "mpi.Win_fence", "mpi.Put", "mpi.Get", "mpi.Accumulate", "mpi.Win_fence",
              "mpi.Win_free", "mpi.Win_create", "mpi.Win_lock", "mpi.Win_flush", "mpi.Win_unlock", "mpi.Win_free", "mpi.Allreduce"}
for r = 0, mp.size - 1 do
  local got = {}
  for _, name in ipairs(names[r] or {}) do
    if name:find("^mpi%.File") or name:find("^mpi%.Win") or name:find("^mpi%.Put") or
       name:find("^mpi%.Get") or name:find("^mpi%.Acc") or name == "mpi.Allreduce" then
      got[#got + 1] = name
    end
  end
  assert(table.concat(got, " ") == table.concat(want, " "),
         ("rank %d: %s"):format(r, table.concat(got, " ")))
end
print("mpi_trace_io ok", mp.size)
