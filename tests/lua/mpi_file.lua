-- ranks: 1 2 3 4 6  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's MPI-IO: a distributed array written by every rank (Write_at_all
-- under a view of its layout box) is byte-identical to the same array
-- written by one rank, for several dtypes, sizes on both sides of ROMIO's
-- buffers (512 KiB) and of the contiguous-run shortcut, and empty blocks;
-- independent reads and writes, modes, bad input; files close at the end of
-- their task and after an abort; a fault around a collective write recovers.
package.path = "lib/?.lua;" .. package.path
local fails = require("mpi_checks").fails
local n = mp.size
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))

-- the value of the element of global (0-based, Fortran order) index g
local function value(dt, g)
  if dt == "c128" or dt == "c64" then return mp.complex(g, -g / 4) end
  if dt == "i32" or dt == "i64" then return g - 100 end
  if dt == "u8" then return g % 251 end
  return g + 0.5
end

local specs = {
  "f64[x=7@1, y=5, z=4@2]",       -- subarray views, two split dimensions
  "f32[x=6, y=9@1]",               -- split of the last dimension: one run per rank
  "i32[x=3@1, y=2]",               -- empty blocks from 4 ranks on
  "u8[x=1001@1]",                  -- odd byte counts
  "c128[x=6@1, y=5]",
  "i64[x=2, y=3@1, z=2]",
  "f64[x=300@1, y=300]",           -- 720 KB: above ROMIO's 512 KiB buffers, subarrays
  "f64[x=300, y=300@1]",           -- the same as runs
}

local function extents(spec)
  local ex = {}
  for e in spec:gmatch("=(%d+)") do ex[#ex + 1] = tonumber(e) end
  return ex
end

local ok_all = mp.exec(function(specs, dir, value, extents)
  local mpi = mp.mpi
  local me = mpi.Comm_rank()
  local one = mpi.Comm_split(mpi.COMM_WORLD, me == 0 and 0 or mpi.UNDEFINED)
  for i, spec in ipairs(specs) do
    local lay = mp.layout(spec, {balanced = true})
    local dt, ex = lay.dtype, extents(spec)
    -- this rank's block, by global index
    local d = lay:alloc()
    local rg, sh = lay:range(), lay:local_shape()
    for j = 1, #d do
      local rem, g, stride = j - 1, 0, 1
      for k = 1, #sh do
        g = g + (rg[k][1] - 1 + rem % sh[k]) * stride
        rem = rem // sh[k]
        stride = stride * ex[k]
      end
      d[j] = value(dt, g)
    end
    local par, ref = dir .. "/par" .. i, dir .. "/ref" .. i
    local f = mpi.File_open(mpi.COMM_WORLD, par, "w")
    f:Set_view(0, dt, lay)
    f:Write_at_all(0, d)
    f:Close()
    -- read back under the same view, collectively
    f = mpi.File_open(nil, par, "r")
    f:Set_view(0, dt, lay)
    local e, got = f:Read_at_all(0, #d)
    assert(got == #d and e.dtype == dt, spec .. ": read " .. got .. " of " .. #d)
    for j = 1, #d do assert(e[j] == d[j], spec .. ": element " .. j) end
    f:Close()
    if one then -- the same array from one rank, with the default view
      local total = 1
      for k = 1, #ex do total = total * ex[k] end
      local a = mp.array(dt, total)
      for g = 0, total - 1 do a[g + 1] = value(dt, g) end
      local r = mpi.File_open(one, ref, "w")
      r:Write_at(0, a)
      local esize = ({f64 = 8, f32 = 4, i64 = 8, i32 = 4, u8 = 1, c128 = 16})[dt]
      assert(r:Get_size() == total * esize)
      r:Close()
      local p1, p2 = io.open(par, "rb"), io.open(ref, "rb")
      local s1, s2 = p1:read("a"), p2:read("a")
      p1:close(); p2:close()
      assert(#s2 > 0 or total == 0)
      assert(s1 == s2, spec .. ": the file written by " .. mp.size .. " ranks differs")
    end
  end
  return true
end, specs, dir, value, extents)
assert(ok_all)

-- independent calls, modes, counts at the end of the file
mp.exec(function(dir)
  local mpi = mp.mpi
  local me, size = mpi.Comm_rank(), mpi.Comm_size()
  local path = dir .. "/ind"
  local f = mpi.File_open(nil, path, mpi.MODE_WRONLY | mpi.MODE_CREATE)
  local a = mp.array("i64", 2)
  a[1], a[2] = me, -me
  f:Write_at(16 * me, a)
  f:Close()
  f = mpi.File_open(nil, path, "r+")
  assert(f:Get_size() == 16 * size)
  local b, got = f:Read_at(0, 2 * size + 3, "i64")   -- past the end: what is there
  assert(got == 2 * size and #b == 2 * size + 3)
  for r = 0, size - 1 do assert(b[2 * r + 1] == r and b[2 * r + 2] == -r) end
  local bytes = f:Read_at(8, 8)                     -- the default view counts bytes
  assert(bytes.dtype == "u8" and #bytes == 8)
  f:Set_view(16 * me, "i64")                        -- etype units under a view
  local c = f:Read_at(1, 1)
  assert(c.dtype == "i64" and c[1] == -me)
  local into = mp.array("i64", 1)
  assert(select(2, f:Read_at(0, into)) == 1 and into[1] == me)
  f:Close()
  -- "w" truncates; MODE_EXCL refuses an existing file
  f = mpi.File_open(nil, path, "w+")
  assert(f:Get_size() == 0)
  f:Sync()
  f:Close()
  local ok, err = pcall(mpi.File_open, nil, path, mpi.MODE_RDWR | mpi.MODE_CREATE | mpi.MODE_EXCL)
  assert(not ok and tostring(err):find("mp.mpi.File_open: [rank " .. mp.rank .. "/" .. mp.size ..
         "] cannot open '" .. path .. "': File exists", 1, true), tostring(err))
end, dir)

-- bad input names the function, the argument, the rank (and the path)
mp.exec(function(dir)
  local mpi = mp.mpi
  local R = "%[rank " .. mp.rank .. "/" .. mp.size .. "%]"
  fails("mp.mpi.File_open: " .. R .. " cannot open '" .. dir .. "/none': No such file or directory",
        mpi.File_open, nil, dir .. "/none", "r")
  fails("bad argument #3 to 'mp.mpi.File_open' %(" .. R .. " mode 'r', 'r%+', 'w', 'w%+' or an " ..
        "amode expected, got 'x'%)", mpi.File_open, nil, dir .. "/b", "x")
  fails("bad argument #3 to 'mp.mpi.File_open' %(" .. R .. " mode %-1 is not an amode",
        mpi.File_open, nil, dir .. "/b", -1)
  fails("mp.mpi.File_open", mpi.File_open, "comm", dir .. "/b", "r")
  local f = mpi.File_open(nil, dir .. "/b", "w")
  fails("bad argument #1 to 'mp.mpi.File.Write_at' %(" .. R .. " offset %-1 is negative",
        f.Write_at, f, -1, mp.array("f64", 1))
  fails("bad argument #1 to 'mp.mpi.File.Write_at' %(" .. R .. " offset expected, got string",
        f.Write_at, f, "x", mp.array("f64", 1))
  fails("bad argument #2 to 'mp.mpi.File.Write_at' %(" .. R .. " mp.Array expected, got table",
        f.Write_at, f, 0, {1, 2})
  fails("bad argument #3 to 'mp.mpi.File.Read_at' %(" .. R .. " dtype expected %('f64', 'i32', " ..
        "%.%.%.%), got 'f65'", f.Read_at, f, 0, 1, "f65")
  fails("bad argument #2 to 'mp.mpi.File.Read_at' %(" .. R .. " count %-2 is not an integer",
        f.Read_at, f, 0, -2)
  fails("bad argument #3 to 'mp.mpi.File.Set_view' %(" .. R .. " the layout holds f32, not the etype",
        f.Set_view, f, 0, "f64", mp.layout("f32[x=4@1]", {balanced = true}))
  fails("mp.mpi.File.Read_at: " .. R .. " cannot read '" .. dir .. "/b'", f.Read_at, f, 0, 1)
  f:Close()
  fails("mp.mpi.File.Write_at: " .. R .. " '" .. dir .. "/b' is closed", f.Write_at, f, 0,
        mp.array("f64", 1))
  fails("mp.mpi.File.Close: " .. R .. " '" .. dir .. "/b' is closed", f.Close, f)
  -- ranks that disagree
  if mp.size > 1 then
    fails("mp.mpi.File_open: " .. R .. " rank %d+ of the communicator calls it with another " ..
          "path, mode or hints", mpi.File_open, nil, dir .. "/p" .. (mp.rank == 0 and 0 or 1), "w")
    local g = mpi.File_open(nil, dir .. "/b", "w")
    if mp.rank == 0 then
      fails("mp.mpi.File.Write_at_all: " .. R .. " rank %d+ of the communicator calls it with " ..
            "another call: mpi.File.Read_at_all", g.Write_at_all, g, 0, mp.array("f64", 1))
      fails("mp.mpi.File.Set_view: " .. R .. " rank %d+ of the communicator calls it with " ..
            "another call: mpi.File.Set_view, etype i32", g.Set_view, g, 0, "f64")
    else
      fails("mp.mpi.File.Read_at_all: " .. R .. " rank 0 of the communicator calls it with " ..
            "another call: mpi.File.Write_at_all", g.Read_at_all, g, 0, 1)
      fails("mp.mpi.File.Set_view: " .. R .. " rank 0 of the communicator calls it with " ..
            "another call: mpi.File.Set_view, etype f64", g.Set_view, g, 0, "i32")
    end
    g:Close()
  end
  return mpi.File_open(nil, dir .. "/b", "r") -- left open: the task's end closes it
end, dir)
local ok, err = pcall(function() mp.exec(function(dir)
  return mp.mpi.File_open(nil, dir .. "/b", "r")
end, dir):Get_size() end)
assert(not ok and tostring(err):find("not inside a parallel task"), tostring(err))

-- a file left open at a task's end is closed there: its data is in the file
mp.exec(function(dir)
  local f = mp.mpi.File_open(nil, dir .. "/open", "w")
  f:Write_at(8 * mp.rank, mp.array("f64", 1):fill(mp.rank + 1))
  rawset(_G, "kept_file", f)
end, dir)
mp.exec(function(dir)
  local f = kept_file
  local ok, err = pcall(f.Get_size, f)
  assert(not ok and tostring(err):find("is closed %(a file ends with the task that opened it%)"),
         tostring(err))
  rawset(_G, "kept_file", nil)
  f = mp.mpi.File_open(nil, dir .. "/open", "r")
  local a = f:Read_at(0, mp.size, "f64")
  for r = 1, mp.size do assert(a[r] == r) end
end, dir)

-- faults: before, inside and after a collective write; the abort closes the
-- files (DELETE_ON_CLOSE shows it), and the next task writes the same file
local mpi = mp.mpi
for round = 1, 2 do
  for _, mode in ipairs({"before", "after", "open"}) do
    local bad = round % n
    local ok, err = pcall(mp.exec, function(dir, bad, mode)
      local mpi = mp.mpi
      local me = mpi.Comm_rank()
      if mode == "open" and me == bad then error("fault") end
      local f = mpi.File_open(nil, dir .. "/fault", mpi.MODE_RDWR | mpi.MODE_CREATE)
      local t = mpi.File_open(nil, dir .. "/gone", mpi.MODE_WRONLY | mpi.MODE_CREATE |
                              mpi.MODE_DELETE_ON_CLOSE)
      local a = mp.array("f64", 1000):fill(-1)
      if mode == "before" and me == bad then error("fault") end
      f:Write_at_all(8000 * me, a)
      if mode == "after" and me == bad then error("fault") end
      f:Close()
    end, dir, bad, mode)
    assert(not ok and tostring(err):find("fault", 1, true), mode .. ": " .. tostring(err))
    assert(io.open(dir .. "/gone", "rb") == nil or mode == "open", mode .. ": a file stayed open")
    assert(mp.exec(function(dir)
      local mpi = mp.mpi
      local me = mpi.Comm_rank()
      local f = mpi.File_open(nil, dir .. "/fault", "w")
      f:Write_at_all(8 * me, mp.array("f64", 1):fill(me))
      f:Close()
      f = mpi.File_open(nil, dir .. "/fault", "r")
      local a = f:Read_at_all(0, mpi.Comm_size(), "f64")
      for r = 1, #a do assert(a[r] == r - 1) end
      return true
    end, dir))
  end
end

-- a member that ends its task closes the file there: a mismatch for the
-- others; one that waits elsewhere: a deadlock naming the file call
if n > 1 then
  local ok, err = pcall(mp.exec, function(dir)
    local mpi = mp.mpi
    local f = mpi.File_open(nil, dir .. "/dl", "w")
    if mpi.Comm_rank() == 1 then return end
    f:Write_at_all(0, mp.array("u8", 1))
  end, dir)
  -- (whoever sees it first reports it: rank 1 in its end's Close, or another in Write_at_all)
  assert(not ok and (tostring(err):find("mp%.mpi%.File%.Write_at_all: %[rank %d+/" .. n .. "%] " ..
         "rank 1 of the communicator calls it with another call: mpi%.File%.Close %(or it ended " ..
         "its task, which closes the file%)") or tostring(err):find("mp%.mpi%.File%.Close: %[rank " ..
         "1/" .. n .. "%] rank %d+ of the communicator calls it with another call: " ..
         "mpi%.File%.Write_at_all")), tostring(err))
  ok, err = pcall(mp.exec, function(dir)
    local mpi = mp.mpi
    local f = mpi.File_open(nil, dir .. "/dl", "w")
    if mpi.Comm_rank() == 1 then mpi.Recv(0, 5) end
    f:Write_at_all(0, mp.array("u8", 1))
  end, dir)
  assert(not ok and tostring(err):find("deadlock: ", 1, true) and
         tostring(err):find("wait in mpi.File.Write_at_all from rank 1 (collective #2)", 1, true)
         or tostring(err):find("waits in mpi.File.Write_at_all from rank 1 (collective #2)", 1, true),
         tostring(err))
end

os.execute("rm -rf " .. dir)
