-- ranks: 1 2 3 4  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's file pointers, split collectives, hints, datatypes and views:
-- bad input is an error naming the function, the argument and the rank;
-- members that make another call or give other arguments to a collective
-- one get an error, not a hang; a fault at each new collective step (and
-- between a split collective's begin and end) aborts the task, the abort
-- closes the files (no descriptor left, DELETE_ON_CLOSE files gone) and
-- frees the datatypes, and the next task uses the same file.
package.path = "lib/?.lua;" .. package.path
local checks = require("mpi_checks")
local fails, bad = checks.fails, checks.bad
local n = mp.size
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))

mp.exec(function(dir)
  local mpi = mp.mpi
  local R = "%[rank " .. mp.rank .. "/" .. mp.size .. "%]"
  local f = mpi.File_open(nil, dir .. "/b", "w+")
  f:Set_view(0, "f64")
  -- pointers
  fails(bad(1, "File%.Seek", "offset %-1 is negative"), f.Seek, f, -1)
  fails(bad(1, "File%.Seek", "offset %-1 from the position 0 is before the start of the view"),
        f.Seek, f, -1, mpi.SEEK_CUR)
  fails(bad(1, "File%.Seek", "offset %-1 from the end 0 is before the start of the view"),
        f.Seek, f, -1, mpi.SEEK_END)
  fails(bad(2, "File%.Seek", "whence 7 is not mpi%.SEEK_SET, SEEK_CUR or SEEK_END"), f.Seek, f, 0, 7)
  fails(bad(2, "File%.Seek", "whence table is not"), f.Seek, f, 0, {})
  fails(bad(1, "File%.Seek", "offset expected, got string"), f.Seek, f, "x")
  fails(bad(1, "File%.Seek_shared", "offset %-2 is negative"), f.Seek_shared, f, -2)
  fails(bad(1, "File%.Get_byte_offset", "offset %-1 is negative"), f.Get_byte_offset, f, -1)
  fails(bad(1, "File%.Set_size", "size %-1 is negative"), f.Set_size, f, -1)
  fails(bad(1, "File%.Preallocate", "size expected, got no value"), f.Preallocate, f)
  -- element types against the view's etype
  fails(bad(1, "File%.Write", "the array holds i32, the view's etype is f64"), f.Write, f,
        mp.array("i32", 2))
  fails(bad(1, "File%.Write_ordered", "mp%.Array expected, got table"), f.Write_ordered, f, {1})
  fails(bad(2, "File%.Read_all", "the array holds f32, the view's etype is f64"), f.Read_all, f, 1, "f32")
  fails(bad(1, "File%.Read_shared", "the array holds u8, the view's etype is f64"), f.Read_shared,
        f, mp.array("u8", 8))
  fails(bad(1, "File%.Read", "count %-1 is not an integer >= 0"), f.Read, f, -1)
  -- split collectives: one per file, an end needs its begin
  fails("mp%.mpi%.File%.Write_all_end: " .. R .. " no Write_all_begin on '.-/b' to end$", f.Write_all_end, f)
  f:Read_all_begin(1)
  fails("mp%.mpi%.File%.Write_at_all_begin: " .. R .. " '.-/b' has a split collective begun " ..
        "%(Read_all_begin%): MPI allows one per file", f.Write_at_all_begin, f, 0, mp.array("f64", 1))
  fails("mp%.mpi%.File%.Write_all_end: " .. R .. " no Write_all_begin on '.-/b' to end %(the split " ..
        "collective begun is Read_all_begin%)", f.Write_all_end, f)
  fails("mp%.mpi%.File%.Close: " .. R .. " '.-/b' has a split collective begun", f.Close, f)
  fails("mp%.mpi%.File%.Set_view: " .. R .. " '.-/b' has a split collective begun", f.Set_view, f, 0)
  local a, got = f:Read_all_end()
  assert(#a == 1 and a[1] == 0 and got == 0)
  fails(bad(1, "File%.Write_at_all_begin", "offset %-3 is negative"), f.Write_at_all_begin, f, -3,
        mp.array("f64", 1))
  -- views: datareps, datatypes of other elements
  fails(bad(4, "File%.Set_view", "datarep 'native', 'external32' or 'internal' expected, got 'xdr'"),
        f.Set_view, f, 0, "f64", nil, "xdr")
  fails(bad(3, "File%.Set_view", "the datatype is made of i32, not the etype"), f.Set_view, f, 0,
        "f64", mpi.Type_contiguous(2, "i32"))
  -- datatypes
  fails(bad(4, "Type_vector", "old type expected %(a dtype name 'f64', %.%.%. or an mp%.mpi%.Datatype%), " ..
        "got 'f65'"), mpi.Type_vector, 1, 1, 1, "f65")
  fails(bad(1, "Type_vector", "count %-1 is out of range"), mpi.Type_vector, -1, 1, 1, "f64")
  fails(bad(2, "Type_indexed", "2 displacements for 1 dimensions or blocks"), mpi.Type_indexed,
        {1}, {0, 1}, "f64")
  fails(bad(2, "Type_create_subarray", "dimension 2: subsize 3 from start 0 is beyond size 2"),
        mpi.Type_create_subarray, {2, 2}, {1, 3}, {0, 0}, mpi.ORDER_C, "f64")
  fails(bad(2, "Type_create_subarray", "subsizes 0 is out of range %(1%.%."),
        mpi.Type_create_subarray, {2, 2}, {0, 1}, {0, 0}, mpi.ORDER_C, "f64")
  fails(bad(4, "Type_create_subarray", "order is not mpi%.ORDER_C or mpi%.ORDER_FORTRAN"),
        mpi.Type_create_subarray, {2}, {1}, {0}, 3, "f64")
  local t = mpi.Type_vector(2, 1, 2, "f64")
  assert(t:Get_size() == 16 and select(2, t:Get_extent()) == 24 and mpi.Type_commit(t) == t)
  t:Free()
  fails(bad(1, "Type_size", "the datatype is freed"), mpi.Type_size, t)
  fails(bad(3, "File%.Set_view", "the datatype is freed"), f.Set_view, f, 0, "f64", t)
  -- hints
  fails(bad(4, "File_open", "hint keys are strings, got number"), mpi.File_open, nil, dir .. "/h",
        "w", {"x"})
  fails(bad(4, "File_open", "hint 'a' is not a string, number or boolean"), mpi.File_open, nil,
        dir .. "/h", "w", {a = {}})
  fails(bad(4, "File_open", "table of hints expected, got string"), mpi.File_open, nil,
        dir .. "/h", "w", "cb_nodes=1")
  fails(bad(1, "File%.Set_info", "table of hints expected, got nil"), f.Set_info, f)
  -- members that disagree
  if mp.size > 1 then
    local other = mp.rank == 0
    fails("mp%.mpi%.File%.Seek_shared: " .. R .. " rank %d+ of the communicator calls it with " ..
          "another offset or whence", f.Seek_shared, f, other and 1 or 2)
    fails("mp%.mpi%.File%.Set_size: " .. R .. " rank %d+ of the communicator calls it with " ..
          "another size", f.Set_size, f, other and 8 or 16)
    fails("mp%.mpi%.File%.Set_info: " .. R .. " rank %d+ of the communicator calls it with " ..
          "another set of hints", f.Set_info, f, {romio_cb_write = other and "enable" or "disable"})
    fails("mp%.mpi%.File_open: " .. R .. " rank %d+ of the communicator calls it with another " ..
          "path, mode or hints", mpi.File_open, nil, dir .. "/h", "w", {cb_nodes = other and 1 or 2})
    fails("mp%.mpi%.File%.Set_view: " .. R .. " rank %d+ of the communicator calls it with " ..
          "another call: mpi%.File%.Set_view, etype f64" .. (other and "" or ", datarep external32"),
          f.Set_view, f, 0, "f64", nil, other and "external32" or "native")
    if other then
      fails("mp%.mpi%.File%.Write_ordered: " .. R .. " rank %d+ of the communicator calls it with " ..
            "another call: mpi%.File%.Write_all_begin", f.Write_ordered, f, mp.array("f64", 1))
    else
      fails("mp%.mpi%.File%.Write_all_begin: " .. R .. " rank 0 of the communicator calls it with " ..
            "another call: mpi%.File%.Write_ordered", f.Write_all_begin, f, mp.array("f64", 1))
    end
  end
  f:Close()
end, dir)

-- the descriptors a rank has open on files under dir (the abort must leave none)
local function fds(dir)
  local st = assert(io.open("/proc/self/stat"))
  local pid = st:read("n")
  st:close()
  local p = io.popen("ls -l /proc/" .. pid .. "/fd 2>/dev/null")
  local list = p:read("a")
  p:close()
  local k = 0
  for line in list:gmatch("[^\n]+") do
    if line:find(dir, 1, true) then k = k + 1 end
  end
  return k, list
end
assert(mp.exec(function(dir, fds)   -- (the count sees an open file)
  local f = mp.mpi.File_open(nil, dir .. "/seen", "w")
  return mp.allreduce((fds(dir)), "min") >= 1
end, dir, fds))

-- a fault on one rank at each collective step (rank i % n at step i), the others in it
local steps = {
  {"open", function(mpi, dir) return mpi.File_open(nil, dir .. "/f", "r+", {cb_nodes = 1}) end},
  {"Write_all", function(mpi, dir, f) f:Write_all(mp.array("f64", 100):fill(1)) end},
  {"Read_all", function(mpi, dir, f) f:Read_all(10) end},
  {"Write_ordered", function(mpi, dir, f) f:Write_ordered(mp.array("f64", 100):fill(2)) end},
  {"Read_ordered", function(mpi, dir, f) f:Read_ordered(10) end},
  {"Seek_shared", function(mpi, dir, f) f:Seek_shared(0) end},
  {"Set_size", function(mpi, dir, f) f:Set_size(800) end},
  {"Preallocate", function(mpi, dir, f) f:Preallocate(1600) end},
  {"Set_info", function(mpi, dir, f) f:Set_info({romio_cb_write = "enable"}) end},
  {"Set_view", function(mpi, dir, f, t) f:Set_view(0, "f64", t, "external32") end},
  {"Write_at_all_begin", function(mpi, dir, f) f:Write_at_all_begin(8 * mp.rank, mp.array("f64", 1)) end},
  {"Write_all_end", function(mpi, dir, f) f:Write_all_end() end},        -- begun: the fault is between
  {"Read_at_all_end", function(mpi, dir, f) f:Read_at_all_end() end},
}
local split = {Write_all_end = "Write_all_begin", Read_at_all_end = "Read_at_all_begin"}
-- what the task after a fault checks first: the datatype of the faulted
-- task freed, no file of the test open, the file usable by every path again
local function clean(dir, fds, name)
  local mpi = mp.mpi
  local ok, err = pcall(mpi.Type_size, old_type)
  assert(not ok and tostring(err):find("the datatype is freed %(a datatype ends with the task"),
         name .. ": " .. tostring(err))
  assert(tostring(old_type) == "mp.mpi.Datatype of f64 (freed)", name .. ": " .. tostring(old_type))
  local k, list = fds(dir)
  assert(k == 0, name .. ": rank " .. mp.rank .. " has " .. k .. " files of the test open:\n" .. list)
  local f = mpi.File_open(nil, dir .. "/f", "w+")
  f:Set_view(0, "f64")
  f:Write_ordered(mp.array("f64", 1):fill(mp.rank))
  local a = f:Read_at_all(0, mp.size, "f64")
  for r = 1, mp.size do assert(a[r] == r - 1, name) end
  f:Close()
end
for i, step in ipairs(steps) do
  local ok, err = pcall(mp.exec, function(dir, bad, name, call, begin, clean, fds, last)
    local mpi = mp.mpi
    local me = mpi.Comm_rank()
    if last then clean(dir, fds, last) end  -- the task after the last fault
    -- (made before the first collective step: no rank is aborted before it)
    local t = mpi.Type_create_resized("f64", 0, 8 * mpi.Comm_size())
    rawset(_G, "old_type", t)
    local f = name ~= "open" and mpi.File_open(nil, dir .. "/f", mpi.MODE_RDWR | mpi.MODE_CREATE)
    local gone = mpi.File_open(nil, dir .. "/gone", mpi.MODE_WRONLY | mpi.MODE_CREATE |
                               mpi.MODE_DELETE_ON_CLOSE)
    if begin == "Write_all_begin" then f:Write_all_begin(mp.array("f64", 1000):fill(me))
    elseif begin then f:Read_at_all_begin(0, 1000) end
    if me == bad then error("fault at " .. name) end
    call(mpi, dir, f, t)
    mpi.Barrier()
  end, dir, i % n, step[1], step[2], split[step[1]], clean, fds, i > 1 and steps[i - 1][1])
  assert(not ok and tostring(err):find("fault at " .. step[1], 1, true), step[1] .. ": " .. tostring(err))
  assert(io.open(dir .. "/gone", "rb") == nil, step[1] .. ": a file stayed open")
end
mp.exec(clean, dir, fds, steps[#steps][1])
rawset(_G, "old_type", nil)

-- a split collective begun and not ended is ended with the task: its data is in the file
mp.exec(function(dir)
  local f = mp.mpi.File_open(nil, dir .. "/left", "w")
  f:Write_at_all_begin(8 * mp.rank, mp.array("f64", 1):fill(mp.rank + 1))
end, dir)
mp.exec(function(dir)
  local f = mp.mpi.File_open(nil, dir .. "/left", "r")
  local a = f:Read_at(0, mp.size, "f64")
  for r = 1, mp.size do assert(a[r] == r) end
end, dir)

-- a rank that waits elsewhere while the others end a split collective: a deadlock naming it
if n > 1 then
  local ok, err = pcall(mp.exec, function(dir)
    local mpi = mp.mpi
    local f = mpi.File_open(nil, dir .. "/dl", "w")
    f:Write_all_begin(mp.array("u8", 1))
    if mpi.Comm_rank() == 1 then mpi.Recv(0, 5) end
    f:Write_all_end()
  end, dir)
  assert(not ok and tostring(err):find("deadlock", 1, true) and
         tostring(err):find("in mpi.File.Write_all_end from rank 1", 1, true), tostring(err))
end

os.execute("rm -rf " .. dir)
