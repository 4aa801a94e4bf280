-- ranks: 1 2 3 4 8  quick: 2
-- SPDX-License-Identifier: MIT
-- Agreements before MPI's blocking collectives (coll/agree.c) decide alike on
-- every member when an abort comes in between: all members make the MPI call
-- or none does, so no member is left alone in MPI (the job would hang: the
-- runner's timeout). Each case is reported, and the next task opens the same
-- file and window again. The test knob mp._agree_fault places the abort:
--   early: a member faults right after its vote, before any other member
--          votes (they wait for its word): each asks or is asked;
--   late:  a member faults after its vote while another member keeps its
--          vote from it (as a slow network may) and holds every vote: every
--          other member is in MPI, or would be;
--   outside: rank 0, not a member, aborts (mp.abort, or SIGINT to rank 0)
--          while member 1 misses a vote the others hold;
--   sigint: SIGINT reaches rank 0, a member, while it misses a vote: sent by
--          the member that holds every vote, or raised by rank 0 itself at
--          the worst instant of its wait (after the wait's look for the
--          votes and an interrupt, before its abort check: mode "sigint").
-- The late, outside and sigint cases hang with an agreement that unwinds on
-- an abort once voted (the member that holds every vote is in MPI for ever).
-- The faulting member is the last rank, a middle one, rank 1 when it is an
-- inner node of the fan-out tree, and rank 0; every case runs with a fan-out
-- of 2 and of 16 (the default), so that ranks below a member in MPI depend on
-- it for the ABORT.
local n = mp.size
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local path = dir .. "/agree.bin"
local pid0 = tonumber(io.open("/proc/self/stat"):read("a"):match("^(%d+)"))

-- k: fault (a rank), mode ("early"/"late"), hold = {by, from, pid}, outside
local function body(op, k, path)
  local mpi = mp.mpi
  local comm = mp.world
  if k.outside then
    comm = mp.world:split(mp.rank == 0 and 0 or 1)
    if mp.rank == 0 then
      mp.recv(k.hold.by) -- the holder's word: member 1 has voted (a SIGINT ends it first)
      mp.abort("rank 0 aborts while the members agree")
    end
  end
  local a = mp.array("f64", 4):fill(comm.rank)
  local f, w
  if op == "Write_at_all" then f = mpi.File_open(comm, path, "w") end
  if op == "Win_free" then w = mpi.Win_create(a, comm) end
  if mp.rank == k.fault then mp._agree_fault(k.mode, k.hold and k.hold.by) end
  if k.hold and mp.rank == k.hold.by then mp._agree_fault("hold", k.hold.from, k.hold.pid) end
  if k.mode == "early" and mp.rank ~= k.fault then mp.recv(k.fault) end
  if op == "save" then
    mp.save(path, a, mp.layout("f64[x=" .. 4 * comm.size .. "@1]", {nranks = comm.size}),
            {comm = comm})
  elseif op == "File_open" then
    f = mpi.File_open(comm, path, "w")
  elseif op == "Write_at_all" then
    f:Write_at_all(32 * comm.rank, a)
  elseif op == "Win_create" then
    w = mpi.Win_create(a, comm)
  elseif op == "Win_free" then
    w:Free()
  end
  mp.probe() -- the injected fault or the interrupt is raised here if nothing raised it before
  return true
end

-- the same file and window, no fault: all works and the data is right (the
-- part that op uses, or all)
local function clean(path, op)
  local mpi = mp.mpi
  local all = op == nil
  if all or op == "Win_create" or op == "Fence" or op == "Win_free" then
    local a = mp.array("f64", 4):fill(mp.rank)
    local w = mpi.Win_create(a)
    w:Fence()
    w:Put(mp.array("f64", 1):fill(100 + mp.rank), (mp.rank + 1) % mp.size, 0)
    w:Fence()
    w:Free()
    assert(a[1] == 100 + (mp.rank - 1) % mp.size, "rank " .. mp.rank .. ": " .. a[1])
  end
  if all or op == "File_open" or op == "Write_at_all" then
    local f = mpi.File_open(nil, path, "w+")
    f:Write_at_all(32 * mp.rank, mp.array("f64", 4):fill(mp.rank))
    local b = f:Read_at_all(32 * ((mp.rank + 1) % mp.size), mp.array("f64", 4))
    f:Close()
    assert(b[4] == (mp.rank + 1) % mp.size, "rank " .. mp.rank .. ": " .. b[4])
  end
  if all or op == "save" then
    local lay = mp.layout("f64[x=" .. 4 * mp.size .. "@1]")
    mp.save(path, lay:alloc():fill(mp.rank))
    local d = mp.load(path, lay)
    assert(d:sum() == 4 * mp.size * (mp.size - 1) / 2, "rank " .. mp.rank .. ": " .. d:sum())
  end
  return true
end

-- the cases at fan-out fan
local function cases(fan)
  local list, seen = {}, {}
  local function place(r)
    if r and not seen[r] then seen[r] = true; return true end
  end
  local inner = n > fan + 1 and 1 or 0 -- rank 1 has children in the tree
  for _, r in ipairs({n - 1, n // 2, inner, 0}) do
    if place(r) then
      list[#list + 1] = {fault = r, mode = "early", want = "a fault injected in mp."}
      local by = r == n - 1 and 0 or n - 1
      list[#list + 1] = {fault = r, mode = "late", want = "a fault injected in mp.",
                         hold = n > 1 and {by = by, from = r} or nil}
    end
  end
  if n >= 2 then
    list[#list + 1] = {hold = {by = n - 1, from = 0, pid = pid0}, want = "interrupted!"}
    list[#list + 1] = {fault = 0, mode = "sigint", hold = {by = n - 1, from = 0},
                       want = "interrupted!"}
  end
  if n >= 3 then
    list[#list + 1] = {outside = true, hold = {by = n - 1, from = 1, pid = 0},
                       want = "rank 0 aborts while the members agree"}
    list[#list + 1] = {outside = true, hold = {by = n - 1, from = 1, pid = pid0},
                       want = "interrupted!"}
  end
  return list
end

local function describe(k)
  local t = {}
  if k.outside then t[#t + 1] = "outside" end
  if k.mode then t[#t + 1] = k.mode .. " fault at rank " .. k.fault end
  if k.hold then
    t[#t + 1] = "hold " .. k.hold.by .. "->" .. k.hold.from
    if k.hold.pid then t[#t + 1] = k.hold.pid == 0 and "abort" or "sigint" end
  end
  return table.concat(t, " ")
end

-- Each case runs with two of the calls (one from 8 ranks on), in turn, so that
-- every call meets every kind of case, or with all of them when
-- MPLUA_AGREE_ALL is set;
-- MPLUA_AGREE_ONLY=TEXT runs the cases whose description holds TEXT
-- ("Win_free, fan-out 2: late fault at rank 3"), each with every call;
-- MPLUA_AGREE_SAY names each case on stderr as it starts (which one hung).
-- (a Fence is an mplua barrier, no MPI collective: it needs no agreement)
local ops = {"save", "File_open", "Write_at_all", "Win_create", "Win_free"}
local only = os.getenv("MPLUA_AGREE_ONLY")
local every = os.getenv("MPLUA_AGREE_ALL") ~= nil or only ~= nil
assert(mp.exec(clean, path) == true)
local ran, turn, stride = 0, 0, n >= 8 and #ops or 3
-- from 8 ranks on, the fan-out of 2 alone: its tree has a third level there,
-- while the default's is as flat as at 4 ranks (which run both)
for _, fan in ipairs(n >= 8 and {2} or {2, 16}) do
  mp.nfan(fan)
  for _, k in ipairs(cases(fan)) do
    for i, op in ipairs(ops) do
      local what = op .. ", fan-out " .. fan .. ": " .. describe(k)
      if (every or (i - 1 - turn) % stride == 0) and (not only or what:find(only, 1, true)) then
        if only or os.getenv("MPLUA_AGREE_SAY") then io.stderr:write(what, "\n") end
        local ok, err = pcall(mp.exec, body, op, k, path)
        assert(not ok, what .. ": the fault was not reported")
        assert(tostring(err):find(k.want, 1, true), what .. ": " .. tostring(err))
        assert(mp.exec(clean, path, op) == true, what .. ": the next task failed")
        ran = ran + 1
      end
    end
    turn = turn + 1
  end
end
assert(mp.exec(clean, path) == true)
assert(ran > 0 or only)
os.remove(path)
os.remove(path .. ".part")
os.execute("rmdir " .. dir)
print("ok", ran)
