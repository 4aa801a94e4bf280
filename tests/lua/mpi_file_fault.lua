-- ranks: 1 2 3  quick: 2
-- SPDX-License-Identifier: MIT
-- A collective file call that fails on one rank only, at the step where the
-- others may already be in MPI: every rank comes back, rank 0 reports the
-- rank that failed and why, and the next task uses the file again. The test
-- knob mp.mpi._file_fault places the fault on one rank:
--   start: MPI's start of the collective I/O fails there (the others have
--          started theirs, which wait for every member's part);
--   wait:  an abort comes there while Write_ordered / Read_ordered wait for
--          their I/O, before they move the shared pointer (MPI's blocking
--          MPI_File_seek_shared, which every member must reach or none).
-- Every rank faults in turn; a hang is the runner's timeout.
local n = mp.size
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local path = dir .. "/fault.bin"

local function body(op, mode, k, path)
  local mpi = mp.mpi
  local f = mpi.File_open(nil, path, "w+")
  local a = mp.array("f64", 3):fill(mp.rank)
  if mp.rank == k then mpi._file_fault(mode) end
  if op == "Write_ordered" then
    f:Write_ordered(a)
  elseif op == "Read_ordered" then
    f:Read_ordered(3, "f64")
  elseif op == "Write_at_all" then
    f:Write_at_all(24 * mp.rank, a)
  elseif op == "Read_all" then
    f:Read_all(3, "f64")
  elseif op == "Iwrite_at_all" then
    mpi.Wait(f:Iwrite_at_all(24 * mp.rank, a))
  elseif op == "Iread_all" then
    mpi.Wait(f:Iread_all(3, "f64"))
  elseif op == "Write_all_begin" then
    f:Write_all_begin(a)
    f:Write_all_end()
  end
  f:Close()
  mp.probe() -- an injected fault that nothing raised before is raised here
  return true
end

-- the same file, no fault: the ordered calls and a collective request work
local function clean(path)
  local mpi = mp.mpi
  local f = mpi.File_open(nil, path, "w+")
  f:Write_ordered(mp.array("f64", 2):fill(mp.rank))
  f:Write_ordered(mp.array("f64", 1):fill(10 + mp.rank))
  assert(f:Get_position_shared() == 24 * mp.size)
  f:Seek_shared(0)
  local b = f:Read_ordered(2, "f64")
  assert(b[1] == mp.rank and b[2] == mp.rank, "rank " .. mp.rank .. ": " .. b[1])
  local c = mpi.Wait(f:Iread_at_all(16 * mp.size + 8 * mp.rank, 1, "f64"))
  assert(c[1] == 10 + mp.rank, "rank " .. mp.rank .. ": " .. c[1])
  f:Close()
  return true
end

local cases = {
  {"Write_ordered", "start", "cannot write"}, {"Write_ordered", "wait"},
  {"Read_ordered", "start", "cannot read"}, {"Read_ordered", "wait"},
  {"Write_at_all", "start", "cannot write"}, {"Read_all", "start", "cannot read"},
  {"Iwrite_at_all", "start", "cannot write"}, {"Iread_all", "start", "cannot read"},
  {"Write_all_begin", "start", "cannot write"},
}
-- MPLUA_FILE_FAULT_ONLY=TEXT runs the cases whose description holds TEXT;
-- MPLUA_FILE_FAULT_SAY names each case on stderr as it starts (which one hung)
local only = os.getenv("MPLUA_FILE_FAULT_ONLY")
local say = os.getenv("MPLUA_FILE_FAULT_SAY")
assert(mp.exec(clean, path) == true)
local ran = 0
for k = 0, n - 1 do
  for _, case in ipairs(cases) do
    local op, mode, want = case[1], case[2], case[3]
    local what = op .. " " .. mode .. " fault at rank " .. k
    if only and not what:find(only, 1, true) then goto next end
    if say then io.stderr:write(what, "\n") end
    local ok, err = pcall(mp.exec, body, op, mode, k, path)
    err = tostring(err)
    assert(not ok, what .. ": the fault was not reported")
    local rank = "[rank " .. k .. "/" .. n .. "] "
    want = mode == "start" and "mp.mpi.File." .. op .. ": " .. rank .. want
           or rank .. "mp.mpi._file_fault: a fault injected in mp.mpi.File." .. op
    assert(err:find("rank " .. k .. "/" .. n .. " faulted", 1, true), what .. ": " .. err)
    assert(err:find(want, 1, true), what .. ": " .. err)
    assert(mp.exec(clean, path) == true, what .. ": the next task failed")
    ran = ran + 1
    ::next::
  end
end
assert(ran == n * #cases or only)
os.remove(path)
os.execute("rm -rf " .. dir)
print("ok", ran)
