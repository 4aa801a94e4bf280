-- ranks: 1 2 3 4  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's nonblocking file calls as user requests (Iwrite_at, ... Iread_all):
-- every kind mixes with receives, sends and nonblocking collectives in
-- Wait/Waitall/Waitany/Waitsome/Test*; the files are the bytes string.pack
-- makes (numpy reads them); a read's Wait gives the array and a status with
-- the count; a request keeps its array; bad input names the function, the
-- argument and the rank; Close and Set_view refuse pending requests; requests
-- left unwaited complete with the task; a fault between a collective
-- request's start and its Wait aborts cleanly and the next task uses the
-- file; File_delete, Set_atomicity, Get_atomicity.
package.path = "lib/?.lua;" .. package.path
local checks = require("mpi_checks")
local fails, bad, slurp = checks.fails, checks.bad, checks.slurp
local n = mp.size
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local K = 5 -- f64s per rank and call

-- what the file of each kind holds: rank r's K values r*K .. r*K+K-1 (+ 0.5), in rank order
local function packed(nr)
  local t = {}
  for i = 0, nr * K - 1 do t[#t + 1] = string.pack("<d", i + 0.5) end
  return table.concat(t)
end

local kinds = {"at", "at_all", "ptr", "all", "shared"}
mp.exec(function(dir, K, kinds)
  local mpi = mp.mpi
  local me, n = mpi.Comm_rank(), mpi.Comm_size()
  local right, left = (me + 1) % n, (me - 1) % n
  local function mine() -- a new array each time: the request keeps it alive
    local a = mp.array("f64", K)
    for i = 1, K do a[i] = me * K + i - 1 + 0.5 end
    return a
  end
  local files, reqs = {}, {}
  for _, kind in ipairs(kinds) do
    local f = mpi.File_open(nil, dir .. "/" .. kind, "w+")
    f:Set_view(0, "f64")
    files[kind] = f
    if kind == "ptr" or kind == "all" then f:Seek(me * K) end
  end
  -- writes, mixed with a ring and an allreduce, in one Waitall
  reqs[1] = mpi.Irecv(left, 3)
  reqs[2] = files.at:Iwrite_at(me * K, mine())
  reqs[3] = files.at_all:Iwrite_at_all(me * K, mine())
  reqs[4] = mpi.Iallreduce(me, mpi.SUM)
  reqs[5] = files.ptr:Iwrite(mine())
  reqs[6] = files.all:Iwrite_all(mine())
  reqs[7] = mpi.Isend(me, right, 3)
  collectgarbage()                          -- nothing but the requests holds the arrays
  local vals, sts = mpi.Waitall(reqs)
  assert(vals[1] == left and sts[1].source == left and vals[4] == n * (n - 1) // 2)
  for i = 2, 7 do if i ~= 4 then assert(vals[i] == nil and sts[i] == nil, i) end end
  -- the shared pointer: in turn, so that the file is in rank order
  for r = 0, n - 1 do
    if r == me then assert(mpi.Wait(files.shared:Iwrite_shared(mine())) == nil) end
    mpi.Barrier()
  end
  assert(files.ptr:Get_position() == (me + 1) * K and files.shared:Get_position_shared() == n * K)
  -- reads: Waitany / Waitsome / Testall give each array and a status with its count
  local rq = {files.at:Iread_at(0, n * K), mpi.Irecv(left, 4), files.at_all:Iread_at_all(me * K, K),
              mpi.Isend(me, right, 4)}
  local got = {}
  for _ = 1, 4 do
    local i, v, st = mpi.Waitany(rq)
    got[i] = {v, st}
  end
  assert(mpi.Waitany(rq) == nil)
  assert(got[1][2].count == n * K and got[1][1][n * K] == n * K - 0.5 and got[2][1] == left)
  assert(got[3][2].count == K and got[3][1][1] == me * K + 0.5 and got[3][2].source == mpi.PROC_NULL)
  assert(got[4][1] == nil)
  files.ptr:Seek(me * K)
  files.all:Seek(0)
  local sq = {files.ptr:Iread(K), files.all:Iread_all(n * K), mpi.Ibarrier()}
  local seen = 0
  while seen < 2 do
    local idx, v, st = mpi.Waitsome(sq)
    for k, i in ipairs(idx) do
      if i == 1 then assert(st[k].count == K and v[k][K] == me * K + K - 0.5); seen = seen + 1 end
      if i == 2 then assert(st[k].count == n * K and v[k][1] == 0.5); seen = seen + 1 end
    end
  end
  if sq[3] then mpi.Waitall(sq) end         -- the barrier, if Waitsome left it
  files.shared:Seek_shared(0)
  local t = files.shared:Iread_shared(K)
  local ok, a, st = mpi.Test(t)
  while not ok do ok, a, st = mpi.Test(t) end
  assert(st.count == K)
  -- a read into an array given, past the end: the count says how many
  local into = mp.array("f64", 2 * K):fill(-1)
  local b, st2 = files.at:Iread_at(n * K - 1, into):Wait()
  assert(b == into and st2.count == 1 and into[1] == n * K - 0.5 and into[2] == -1)
  local c, st3 = files.at_all:Iread_at_all(n * K - 1, 3):Wait()
  assert(st3.count == 1 and c[2] == 0 and c[3] == 0)  -- collective: zeros past the end
  -- a strided view is copied when the call starts; external32 converts
  local m = mp.array("f64", 2 * K)
  for i = 1, 2 * K do m[i] = i end
  local s = m:view({1, 2 * K, 2})
  local e = mpi.File_open(mpi.Comm_split(mpi.COMM_WORLD, me), dir .. "/ext" .. me, "w+")
  e:Set_view(0, "f64", "f64", "external32")
  local w = e:Iwrite_at(0, s)
  m:fill(0)
  w:Wait()
  local r = e:Iread_at(0, K)
  local v = r:Wait()
  for i = 1, K do assert(v[i] == 2 * i - 1, v[i]) end
end, dir, K, kinds)
for _, kind in ipairs(kinds) do
  assert(slurp(dir .. "/" .. kind) == packed(n), kind .. ": the file differs from string.pack's")
end
local want = {}
for i = 1, K do want[i] = string.pack(">d", 2 * i - 1) end
assert(slurp(dir .. "/ext0") == table.concat(want), "external32 differs")
-- numpy reads what the requests wrote
local py = io.open("/usr/bin/python3") and "/usr/bin/python3" or "python3"
for _, kind in ipairs(kinds) do
  assert(os.execute(("%s -c 'import numpy as np, sys; a = np.fromfile(sys.argv[1]); " ..
    "sys.exit(0 if (a == np.arange(%d) + 0.5).all() else 1)' %s/%s"):format(py, n * K, dir, kind)),
    kind .. ": numpy reads other values")
end

-- bad input; Close and Set_view with a request pending; requests of a finished task
local old = mp.exec(function(dir)
  local mpi = mp.mpi
  local R = "%[rank " .. mp.rank .. "/" .. mp.size .. "%]"
  local f = mpi.File_open(nil, dir .. "/bad", "w+")
  f:Set_view(0, "f64")
  fails(bad(1, "File%.Iwrite_at", "offset %-1 is negative"), f.Iwrite_at, f, -1, mp.array("f64", 1))
  fails(bad(2, "File%.Iwrite_at", "mp.Array expected, got string"), f.Iwrite_at, f, 0, "x")
  fails(bad(1, "File%.Iwrite", "the array holds i32, the view's etype is f64"), f.Iwrite, f,
        mp.array("i32", 1))
  fails(bad(2, "File%.Iread_at", "count %-2 is not an integer >= 0"), f.Iread_at, f, 0, -2)
  fails(bad(2, "File%.Iread_all", "dtype expected %('f64', 'i32', %.%.%.%), got 'zz'"), f.Iread_all, f, 1,
        "zz")
  fails(bad(1, "File%.Iread_shared", "count or contiguous mp.Array expected, got a strided view"),
        f.Iread_shared, f, mp.array("f64", 4):view({1, 4, 2}))
  local q = f:Iwrite_at(0, mp.array("f64", 1000):fill(1))
  local r = f:Iread_at(0, 3)
  fails("bad argument #1 to 'mp.mpi.Cancel' %(" .. R .. " only receives can be cancelled",
        mpi.Cancel, q)
  assert(tostring(q):find("mp.mpi.Request (file I/O", 1, true))
  mpi.Waitall({q, r})
  fails("mp.mpi.Wait: " .. R .. " request is inactive", mpi.Wait, q)
  f:Close()
  local g = mpi.File_open(nil, dir .. "/bad", "r+")
  return g:Iread_at(0, 1)                   -- left pending: the task's end completes it
end, dir)
rawset(_G, "old_req", old)                  -- (rank 0's, in the same Lua state as its tasks)
mp.exec(function(fails)
  if mp.rank == 0 then
    fails("mp.mpi.Wait: %[rank 0/" .. mp.size .. "%] request from an earlier or aborted task",
          mp.mpi.Wait, rawget(_G, "old_req"))
  end
end, fails)
rawset(_G, "old_req", nil)

-- Close and Set_view refuse a request MPI has not completed: a collective
-- read's request is pending until every member drives it, so rank 0 calls
-- them before the others have started (they wait in a receive from it)
if n > 1 then
  mp.exec(function(dir)
    local mpi = mp.mpi
    local R = "%[rank 0/" .. mp.size .. "%]"
    local f = mpi.File_open(nil, dir .. "/pend", "w+")
    f:Set_view(0, "f64")
    f:Write_at_all(0, mp.array("f64", 4 * mp.size):fill(2))
    local q = f:Iread_at_all(0, 1 << 16)
    if mp.rank == 0 then
      local ok = mpi.Test(q)
      if not ok then  -- (ROMIO might complete it in the test: then nothing is pending)
        fails("mp.mpi.File.Close: " .. R .. " '" .. dir .. "/pend' has 1 nonblocking request " ..
              "pending %(MPI: complete them before closing%)", f.Close, f)
        fails("mp.mpi.File.Set_view: " .. R .. " '" .. dir .. "/pend' has 1 nonblocking request " ..
              "pending", f.Set_view, f, 0, "f64")
      end
      mpi.Send(1, 1, 7)
      if ok then return end
    elseif mp.rank == 1 then
      mpi.Recv(0, 7)
    end
    local a, st = mpi.Wait(q)
    assert(st.count == 4 * mp.size and a[1] == 2 and a[4 * mp.size + 1] == 0)
  end, dir)
end

-- requests left unwaited are complete at the task's end: their data is in the file
mp.exec(function(dir)
  local mpi = mp.mpi
  local f = mpi.File_open(nil, dir .. "/left", "w")
  f:Set_view(0, "f64")
  f:Iwrite_at_all(mp.rank, mp.array("f64", 1):fill(mp.rank + 1))
  f:Iwrite_at(mp.size + mp.rank, mp.array("f64", 1):fill(-mp.rank - 1))
end, dir)
mp.exec(function(dir)
  local a = mp.mpi.File_open(nil, dir .. "/left", "r"):Read_at(0, 2 * mp.size, "f64")
  for r = 1, mp.size do assert(a[r] == r and a[mp.size + r] == -r) end
end, dir)

-- a fault on rank i % n between a collective request's start and its Wait,
-- the others waiting for it (or a receive) or testing it: the task aborts,
-- the requests complete, the file closes, the next task reads what was written
local how = {
  function(mpi, q) mpi.Wait(q) end,
  function(mpi, q) mpi.Waitall({mpi.Irecv(mpi.ANY_SOURCE, 9), q}) end,
  function(mpi, q) while not mpi.Test(q) do end mpi.Recv(mpi.ANY_SOURCE, 9) end,
}
for i = 1, 3 do
  local ok, err = pcall(mp.exec, function(dir, bad, wait)
    local mpi = mp.mpi
    local f = mpi.File_open(nil, dir .. "/fault", "w")
    f:Set_view(0, "f64")
    local q = f:Iwrite_at_all(1000 * mp.rank, mp.array("f64", 1000):fill(mp.rank + 1))
    if mp.rank == bad then error("fault after Iwrite_at_all") end
    wait(mpi, q)
  end, dir, i % n, how[i])
  assert(not ok and tostring(err):find("fault after Iwrite_at_all", 1, true), tostring(err))
  mp.exec(function(dir)
    local f = mp.mpi.File_open(nil, dir .. "/fault", "r")
    local a = f:Read_at(0, 1000 * mp.size, "f64")
    for r = 0, mp.size - 1 do assert(a[1000 * r + 1] == r + 1 and a[1000 * r + 1000] == r + 1) end
    f:Close()
  end, dir)
end

-- members making another call on the file: an error on all, not a hang
if n > 1 then
  local ok, err = pcall(mp.exec, function(dir)
    local f = mp.mpi.File_open(nil, dir .. "/mis", "w")
    if mp.rank == 0 then f:Iwrite_all(mp.array("u8", 1)) else f:Iread_all(1) end
  end, dir)
  assert(not ok and tostring(err):find("with another call: mpi%.File%.I[rw][a-z]+_all"),
         tostring(err))
end

-- a rank that waits elsewhere while the others start a collective request: a deadlock naming it
if n > 1 then
  local ok, err = pcall(mp.exec, function(dir)
    local mpi = mp.mpi
    local f = mpi.File_open(nil, dir .. "/dl", "w")
    if mp.rank == 1 then mpi.Recv(0, 5) end
    mpi.Wait(f:Iwrite_all(mp.array("u8", 1)))
  end, dir)
  assert(not ok and tostring(err):find("deadlock", 1, true) and
         tostring(err):find("in mpi.File.Iwrite_all from rank 1", 1, true), tostring(err))
end

-- File_delete, atomicity
mp.exec(function(dir)
  local mpi = mp.mpi
  local R = "%[rank " .. mp.rank .. "/" .. mp.size .. "%]"
  local path = dir .. "/atom"
  local f = mpi.File_open(nil, path, "w+")
  assert(f:Get_atomicity() == false)
  f:Set_atomicity(true)
  assert(f:Get_atomicity() == true)
  fails("bad argument #1 to 'mp.mpi.File.Set_atomicity' %(" .. R .. " flag %(a boolean%) " ..
        "expected, got number", f.Set_atomicity, f, 1)
  if mp.size > 1 then
    fails("mp.mpi.File.Set_atomicity: " .. R .. " rank %d+ of the communicator calls it with " ..
          "another flag", f.Set_atomicity, f, mp.rank == 0)
  end
end, dir)
mp.exec(function(dir)
  local mpi = mp.mpi
  local R = "%[rank " .. mp.rank .. "/" .. mp.size .. "%]"
  local path = dir .. "/atom"
  mpi.Barrier()
  if mp.rank == 0 then mpi.File_delete(path) end
  mpi.Barrier()
  assert(io.open(path) == nil)
  fails("mp.mpi.File_delete: " .. R .. " cannot delete '" .. path .. "': No such file or directory",
        mpi.File_delete, path)
  fails("bad argument #1 to 'mp.mpi.File_delete' %(" .. R .. " path %(a string%) expected, got " ..
        "no value%)", mpi.File_delete)
end, dir)

os.execute("rm -rf " .. dir)
