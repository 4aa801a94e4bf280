-- ranks: 1 2 3 4 5 8  quick: 2
-- SPDX-License-Identifier: MIT
-- Agreements before MPI's blocking collectives (coll/agree.c): a fault that
-- reaches a member of mp.save, mpi.File_open, f:Write_at_all,
-- mpi.Win_create or win:Fence after it voted, while the other members may
-- already be inside the MPI call, is reported (nobody is left in MPI), and
-- the next task opens the same file and window again. The test knob
-- mp._agree_fault places the fault: "late", when every vote has come to
-- the faulting member (as if the last one were held until then), "early",
-- at once; "signal", an abort by rank 0, not a member, at that moment.
-- The job hangs without the agreement's protocol (the runner's timeout).
local n = mp.size
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local path = dir .. "/agree.bin"

local function body(op, mode, bad, path)
  local mpi = mp.mpi
  local comm = mp.world
  if mode == "signal" then
    comm = mp.world:split(mp.rank == 0 and 0 or 1)
    if mp.rank == 0 then
      mp.recv(bad) -- the member has every vote: the others are in MPI or about to be
      mp.abort("rank 0 aborts while the members agree")
    end
  end
  local a = mp.array("f64", 4):fill(comm.rank)
  local f, w
  if op == "Write_at_all" then f = mpi.File_open(comm, path, "w") end
  if op == "Fence" then w = mpi.Win_create(a, comm) end
  if mp.rank == bad then mp._agree_fault(mode) end
  if op == "save" then
    mp.save(path, a, mp.layout("f64[x=" .. 4 * comm.size .. "@1]", {nranks = comm.size}),
            {comm = comm})
  elseif op == "File_open" then
    f = mpi.File_open(comm, path, "w")
  elseif op == "Write_at_all" then
    f:Write_at_all(32 * comm.rank, a)
  elseif op == "Win_create" then
    w = mpi.Win_create(a, comm)
  elseif op == "Fence" then
    w:Fence()
  end
  mp.probe() -- the injected fault is raised here if nothing raised it before
  return true
end

-- the same file and window, no fault: all works and the data is right
local function clean(path)
  local mpi = mp.mpi
  local a = mp.array("f64", 4):fill(mp.rank)
  local w = mpi.Win_create(a)
  w:Fence()
  w:Put(mp.array("f64", 1):fill(100 + mp.rank), (mp.rank + 1) % mp.size, 0)
  w:Fence()
  w:Free()
  assert(a[1] == 100 + (mp.rank - 1) % mp.size, "rank " .. mp.rank .. ": " .. a[1])
  local f = mpi.File_open(nil, path, "w")
  f:Write_at_all(32 * mp.rank, mp.array("f64", 4):fill(mp.rank))
  f:Close()
  local lay = mp.layout("f64[x=" .. 4 * mp.size .. "@1]")
  mp.save(path, lay:alloc():fill(mp.rank))
  local d = mp.load(path, lay)
  assert(d:sum() == 4 * mp.size * (mp.size - 1) / 2, "rank " .. mp.rank .. ": " .. d:sum())
  return true
end

assert(mp.exec(clean, path) == true)
local ops = {"save", "File_open", "Write_at_all", "Win_create", "Fence"}
for _, mode in ipairs({"late", "early", "signal"}) do
  for _, op in ipairs(ops) do
    local bad = n - 1
    if mode ~= "signal" or n >= 3 then
      local ok, err = pcall(mp.exec, body, op, mode, bad, path)
      assert(not ok, op .. " " .. mode .. ": the fault was not reported")
      local want = mode == "signal" and "rank 0 aborts while the members agree"
                   or "a fault injected in mp." .. (op == "save" and "save" or "mpi.")
      assert(tostring(err):find(want, 1, true), op .. " " .. mode .. ": " .. tostring(err))
      assert(mp.exec(clean, path) == true, op .. " " .. mode .. ": the next task failed")
    end
  end
end
os.remove(path)
os.remove(path .. ".part")
os.execute("rmdir " .. dir)
print("ok")
