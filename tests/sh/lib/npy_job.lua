-- SPDX-License-Identifier: MIT
-- The mplua side of tests/sh/file_npy.sh: mplua npy_job.lua MODE DIR [ARGS]
--   write DIR TAG     writes TAG_<kind>.npy for each kind below (its own layouts)
--   read DIR TAG      reads every TAG_<kind>.npy into other layouts and checks each element
--   numpy DIR         reads the files NumPy wrote (Fortran and C order)
--   fault DIR         a fault while the others save over an existing file, then a save
-- Values are a function of the 1-based global indices, so every side checks alone.
local mode, dir, tag = arg[1], arg[2], arg[3]
local n = mp.size
local kinds = {
  -- name, spec of the writer's layout, the reader's (other splits), dtype
  {"f64", "f64[x=7@1, y=5, z=4@2]", "f64[x=7, y=5@1, z=4]"},
  {"f64b", "f64[x=7, y=5@1, z=4]", "f64[x=7@1, y=5, z=4]"},   -- same array, other splits
  {"c128", "c128[x=6, y=5@1]", "c128[x=6@1, y=5]"},
  {"i32", "i32[x=9@1, y=2]", "i32[x=9, y=2@1]"},
  {"f32", "f32[x=3@1, y=4, z=2@2]", "f32[x=3, y=4, z=2@1]"},
}

local function value(dt, g)
  local v = 0
  for k = #g, 1, -1 do v = v * 16 + g[k] end
  if dt == "c128" then return mp.complex(v, -v / 4) end
  if dt == "i32" then return v - 100 end
  return v + 0.5
end

local function fill(lay, d, check)
  local rg, sh = lay:range(), lay:local_shape()
  local nd, bad = #sh, 0
  for i = 1, #d do
    local g, rem = {}, i - 1
    for k = 1, nd do g[k] = rg[k][1] + rem % sh[k]; rem = rem // sh[k] end
    local want = value(lay.dtype, g)
    if check then
      if d[i] ~= want then bad = bad + 1 end
    else
      d[i] = want
    end
  end
  return bad
end

local function lay_of(spec)
  return mp.layout(spec, {balanced = true, nranks = n})
end

if mode == "write" then
  mp.exec(function(kinds, dir, tag)
    for _, k in ipairs(kinds) do
      local lay = lay_of(k[2])
      local d = lay:alloc()
      fill(lay, d)
      mp.save(dir .. "/" .. tag .. "_" .. k[1] .. ".npy", d)
    end
  end, kinds, dir, tag)
elseif mode == "read" then
  local bad = mp.exec(function(kinds, dir, tag)
    local bad = 0
    for _, k in ipairs(kinds) do
      for _, spec in ipairs({k[3], k[2]}) do
        local lay = lay_of(spec)
        local d = mp.load(dir .. "/" .. tag .. "_" .. k[1] .. ".npy", lay)
        assert(d.layout == lay)
        bad = bad + fill(lay, d, true)
      end
    end
    return mp.allreduce(bad, "sum")
  end, kinds, dir, tag)
  assert(bad == 0, bad .. " wrong elements")
elseif mode == "numpy" then
  local bad = mp.exec(function(dir)
    local bad = 0
    -- NumPy's Fortran-order (4, 3) f64 and C-order (3, 4) f64 of the same values
    for _, name in ipairs({"np_fortran", "np_c"}) do
      local lay = lay_of("f64[x=4@1, y=3]")
      local d = mp.load(dir .. "/" .. name .. ".npy", lay)
      bad = bad + fill(lay, d, true)
    end
    local ok, e = pcall(mp.load, dir .. "/np_c.npy", lay_of("f64[x=3@1, y=4]"))
    assert(not ok and e:find("holds an array of shape (3, 4) in C order, which is not the layout's", 1, true), e)
    ok, e = pcall(mp.load, dir .. "/np_fortran.npy", lay_of("i32[x=4@1, y=3]"))
    assert(not ok and e:find("holds f64, the layout is i32", 1, true), e)
    ok, e = pcall(mp.load, dir .. "/missing.npy", lay_of("f64[x=4@1, y=3]"))
    assert(not ok and e:find("cannot open", 1, true), e)
    return mp.allreduce(bad, "sum")
  end, dir)
  assert(bad == 0, bad .. " wrong elements")
elseif mode == "fault" then
  local path = dir .. "/fault.npy"
  local spec = "f64[x=8@1, y=3]" -- layouts do not travel: each task makes its own
  mp.exec(function(path, spec)
    mp.save(path, lay_of(spec):alloc():fill(1))
  end, path, spec)
  local function size() local f = io.open(path, "rb"); local s = f:seek("end"); f:close(); return s end
  local before = size()
  for bad = 0, n - 1 do
    local ok, e = pcall(mp.exec, function(path, spec, bad)
      local d = lay_of(spec):alloc():fill(2)
      if mp.rank == bad then error("fault in the middle of a collective write") end
      mp.save(path, d)
    end, path, spec, bad)
    assert(not ok and tostring(e):find("fault in the middle", 1, true), tostring(e))
    -- the old file is whole and unchanged
    local got = mp.exec(function(path, spec) return mp.load(path, lay_of(spec)):sum() end, path, spec)
    assert(got == 24 and size() == before, "the file changed")
  end
  -- the ranks disagree on the path: every rank says so, nothing is written
  local ok, e = pcall(mp.exec, function(path, spec)
    mp.save(mp.rank == 0 and path or path .. ".other", lay_of(spec):alloc():fill(3))
  end, path, spec)
  assert(n == 1 or (not ok and tostring(e):find("calls it with another path", 1, true)), tostring(e))
  -- and the next task works: a save and a load
  local got = mp.exec(function(path, spec)
    mp.save(path, lay_of(spec):alloc():fill(5))
    return mp.load(path, lay_of(spec)):sum()
  end, path, spec)
  assert(got == 120, "the next save")
end
print("npy_job " .. mode .. " ok")
