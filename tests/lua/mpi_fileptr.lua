-- ranks: 1 2 3 4  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's files through file pointers, split collectives, hints, datatypes
-- and external32: the file each path writes from every rank is byte-identical
-- to the array packed by plain Lua (string.pack), for sizes on both sides of
-- ROMIO's buffers (512 KiB) and ranks with nothing to write; each path reads
-- back what it wrote. Seeks on both sides of the start and the end.
local n = mp.size
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))

local function value(g) return g + 0.5 end

-- the bytes of values 0..N-1 packed by plain Lua, native (little-endian) or external32
local function packed(N, fmt)
  local t = {}
  for g = 0, N - 1 do t[#t + 1] = string.pack(fmt or "<d", value(g)) end
  return table.concat(t)
end

local function slurp(path)
  local p = assert(io.open(path, "rb"))
  local s = p:read("a")
  p:close()
  return s
end

-- each path writes values 0..N-1 (f64) into its own file from every rank
local paths = {
  "seek_write", "seek_write_all", "shared", "ordered", "split_at", "split_all",
  "vector", "cyclic", "indexed", "subarray_f", "subarray_c", "external32",
}
for _, N in ipairs({1, 7, 3 * n + 1, 70001}) do   -- 70001 f64: 560 KB, above ROMIO's buffers
  mp.exec(function(dir, N, paths, value)
    local mpi = mp.mpi
    local me, size = mpi.Comm_rank(), mpi.Comm_size()
    local lo, hi = N * me // size, N * (me + 1) // size  -- my block [lo, hi): empty when N < size
    local function block(a, b)
      local x = mp.array("f64", b - a)
      for j = 1, b - a do x[j] = value(a + j - 1) end
      return x
    end
    local mine = block(lo, hi)
    -- the elements g with pick(g) true, in order
    local function picked(pick)
      local t = {}
      for g = 0, N - 1 do if pick(g) then t[#t + 1] = value(g) end end
      local a = mp.array("f64", #t)
      for j = 1, #t do a[j] = t[j] end
      return a
    end
    local function check(a, want, what)
      assert(#a == #want, what .. ": " .. #a .. " elements, not " .. #want)
      for j = 1, #a do assert(a[j] == want[j], what .. ": element " .. j) end
    end
    for _, path in ipairs(paths) do
      local f = mpi.File_open(nil, dir .. "/" .. path .. N, "w+")
      local function view(...) f:Set_view(...) end
      if path == "seek_write" then
        view(0, "f64")
        f:Seek(lo)
        f:Write(mine)
        assert(f:Get_position() == hi)
        f:Seek(-(hi - lo), mpi.SEEK_CUR)
        local back, got = f:Read(hi - lo)
        assert(got == hi - lo)
        check(back, mine, path)
      elseif path == "seek_write_all" then
        view(0, "f64")
        f:Seek(lo)
        f:Write_all(mine)
        f:Seek(lo)
        check(f:Read_all(hi - lo), mine, path)
      elseif path == "shared" then  -- rank order enforced by a token
        view(0, "f64")
        if me > 0 then mpi.Recv(me - 1, 1) end
        assert(f:Get_position_shared() == lo)
        f:Write_shared(mine)
        if me < size - 1 then mpi.Send(true, me + 1, 1) end
        mpi.Barrier()
        assert(f:Get_position_shared() == N)
        f:Seek_shared(0)
        if me > 0 then mpi.Recv(me - 1, 2) end
        local back = f:Read_shared(hi - lo)
        if me < size - 1 then mpi.Send(true, me + 1, 2) end
        check(back, mine, path)
      elseif path == "ordered" then
        view(0, "f64")
        f:Write_ordered(mine)
        assert(f:Get_position_shared() == N)
        f:Seek_shared(-N, mpi.SEEK_CUR)
        assert(f:Get_position_shared() == 0)
        local back, got = f:Read_ordered(hi - lo)
        assert(got == hi - lo and f:Get_position_shared() == N)
        check(back, mine, path)
      elseif path == "split_at" then
        view(0, "f64")
        f:Write_at_all_begin(lo, mine)
        f:Write_at_all_end()
        f:Read_at_all_begin(lo, hi - lo)
        local back, got = f:Read_at_all_end()
        assert(got == hi - lo)
        check(back, mine, path)
      elseif path == "split_all" then
        view(8 * lo, "f64")  -- the view from my block: the individual pointer at 0
        f:Write_all_begin(mine)
        f:Write_all_end()
        assert(f:Get_position() == hi - lo)
        f:Seek(0)
        local into = mp.array("f64", hi - lo)
        f:Read_all_begin(into)
        local back = f:Read_all_end()
        assert(rawequal(back, into))
        check(into, mine, path)
      elseif path == "vector" or path == "cyclic" or path == "indexed" then
        local t, disp, pick
        if path == "vector" then      -- blocks of 2, dealt round the ranks
          local k = (N + 2 * size - 1) // (2 * size)
          t = mpi.Type_vector(k, 2, 2 * size, "f64")
          disp, pick = 16 * me, function(g) return (g // 2) % size == me end
        elseif path == "cyclic" then  -- one f64 every size elements
          t = mpi.Type_create_resized("f64", 0, 8 * size)
          disp, pick = 8 * me, function(g) return g % size == me end
        else                          -- two per period of 2 * size, mirrored
          t = mpi.Type_create_resized(mpi.Type_indexed({1, 1}, {me, 2 * size - 1 - me}, "f64"),
                                      0, 16 * size)
          disp, pick = 0, function(g) local p = g % (2 * size); return p == me or p == 2 * size - 1 - me end
        end
        local want = picked(pick)
        view(disp, "f64", t)
        f:Write_all(want)
        f:Seek(0)
        check(f:Read_all(#want), want, path)
        t:Free()
      elseif path == "subarray_f" or path == "subarray_c" then
        -- an X x Y array, Y split: Fortran order (x fastest: runs of X), or C order
        -- (y fastest: X runs each)
        local X = 3
        local Y = N // X
        local ylo, yhi = Y * me // size, Y * (me + 1) // size
        local fort = path == "subarray_f"
        local want = picked(function(g)
          if g >= X * Y then return false end
          local y = fort and g // X or g % Y
          return y >= ylo and y < yhi
        end)
        if yhi > ylo then
          view(0, "f64", mpi.Type_create_subarray({X, Y}, {X, yhi - ylo}, {0, ylo},
               fort and mpi.ORDER_FORTRAN or mpi.ORDER_C, "f64"))
        else
          view(0, "f64")  -- nothing to write: any view
        end
        f:Write_all(want)
        f:Seek(0)
        check(f:Read_all(#want), want, path)
        -- the rest (N not a multiple of X) written by the last rank
        view(0, "f64")
        if me == size - 1 then f:Write_at(X * Y, block(X * Y, N)) end
      elseif path == "external32" then
        view(0, "f64", nil, "external32")
        assert(select(3, f:Get_view()) == "external32")
        f:Write_at_all(lo, mine)
        check(f:Read_at_all(lo, hi - lo), mine, path)
        f:Seek(lo)
        check(f:Read(hi - lo), mine, path .. " (Read)")
      end
      f:Close()
    end
  end, dir, N, paths, value)
  for _, path in ipairs(paths) do
    local s = slurp(dir .. "/" .. path .. N)
    local want = packed(N, path == "external32" and ">d" or "<d")
    assert(#s == #want, path .. N .. ": " .. #s .. " bytes, not " .. #want)
    assert(s == want, path .. N .. ": the file written by " .. n .. " ranks differs")
  end
end

-- numpy (Debian's python3-numpy, scripts/setup.sh) reads what the pointers
-- wrote (native) and external32 as big-endian
local py = io.open("/usr/bin/python3") and "/usr/bin/python3" or "python3"
for _, c in ipairs({{"ordered", "<f8"}, {"external32", ">f8"}}) do
  local ok = os.execute(("%s -c 'import numpy as np, sys; a = np.fromfile(sys.argv[1], " ..
    "dtype=sys.argv[2]); sys.exit(0 if (a == np.arange(70001) + 0.5).all() else 1)' %s/%s70001 '%s'")
    :format(py, dir, c[1], c[2]))
  assert(ok, c[1] .. ": numpy reads other values (or is not installed)")
end

-- seeks, positions and sizes on both sides of the start and the end
mp.exec(function(dir)
  local mpi = mp.mpi
  local f = mpi.File_open(nil, dir .. "/seek", "w+")
  f:Set_view(0, "i32")
  f:Set_size(40)                         -- bytes: 10 i32
  assert(f:Get_size() == 40)
  f:Write_at(0, mp.array("i32", 10):fill(7))
  -- collective reads across the end: the count and zeros past it
  local c, k = f:Read_at_all(8, 4)
  assert(k == 2 and c[2] == 7 and c[3] == 0 and c[4] == 0, k)
  f:Seek(9)
  c, k = f:Read_all(3)
  assert(k == 1 and c[1] == 7 and c[2] == 0 and c[3] == 0, k)
  f:Seek_shared(10)
  c, k = f:Read_ordered(1)
  assert(k == 0 and c[1] == 0, k)
  f:Read_at_all_begin(9, 2)
  c, k = f:Read_at_all_end()
  assert(k == 1 and c[1] == 7 and c[2] == 0, k)
  f:Seek(0, mpi.SEEK_END)
  assert(f:Get_position() == 10)
  f:Seek(-10, mpi.SEEK_END)
  assert(f:Get_position() == 0)
  f:Seek(3)
  f:Seek(-3, mpi.SEEK_CUR)
  assert(f:Get_position() == 0)
  f:Seek(9)
  local a, got = f:Read(2)                -- one left before the end
  assert(got == 1 and #a == 2 and f:Get_position() == 11)
  a, got = f:Read(1)                      -- past the end: nothing
  assert(got == 0)
  f:Seek(12)                              -- past the end is allowed (MPI)
  assert(f:Get_position() == 12 and f:Get_byte_offset(12) == 48)
  f:Preallocate(80)
  assert(f:Get_size() == 80)
  f:Preallocate(8)                        -- never shrinks
  assert(f:Get_size() == 80)
  f:Set_size(4)
  assert(f:Get_size() == 4)
  f:Seek_shared(1)
  f:Seek_shared(-1, mpi.SEEK_CUR)
  f:Seek_shared(0, mpi.SEEK_END)
  assert(f:Get_position_shared() == 1)
  f:Close()
end, dir)

-- hints: given at File_open, read back, changed by Set_info
mp.exec(function(dir)
  local mpi = mp.mpi
  local f = mpi.File_open(nil, dir .. "/hints", "w", {cb_buffer_size = 1048576,
                          romio_cb_write = "enable", striping_unit = "65536"})
  local info = f:Get_info()
  assert(info.cb_buffer_size == "1048576" and info.romio_cb_write == "enable", tostring(info.cb_buffer_size))
  f:Set_info({romio_cb_write = "disable"})
  assert(f:Get_info().romio_cb_write == "disable")
  f:Seek(3 * mp.rank)
  f:Write_all(mp.array("u8", 3):fill(mp.rank))
  f:Close()
  f = mpi.File_open(nil, dir .. "/hints", "r", {})
  assert(f:Get_size() == 3 * mp.size)
end, dir)

os.execute("rm -rf " .. dir)
