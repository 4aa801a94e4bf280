-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- Distributed arrays: layout:alloc() and mp.darray carry their layout; element-wise
-- math, copies and transposes/FFTs keep it (views do not); sum, prod, min, max, mean,
-- norm and dot over the whole array against the gathered array (ranks with empty
-- blocks, halos left out, NaN, integers exact, complex values); gather to any root,
-- scatter from any root (converting the dtype), redistribute and back; printing; errors.
local function fails(pattern, f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(msg):find(pattern, 1, true), "wrong message: " .. tostring(msg))
end

mp.exec(function(fails)
  local n, me = mp.size, mp.rank
  -- x = 3 over up to 4 ranks: some blocks are empty
  for _, spec in ipairs({"f64[x=7@1, y=5]", "f64[x=3@1, y=4]", "i64[x=6, y=5@1]", "c128[x=4@1, y=3]"}) do
    local lay = mp.layout(spec, {balanced = true})
    local d = lay:alloc()
    assert(d.layout == lay and tostring(d):find("mp.DArray(" .. lay.dtype, 1, true))
    local rg, sh = lay:range(), lay:local_shape()
    local function val(i, j)
      if lay.dtype == "c128" then return mp.complex(i - j, i * j) end
      return lay.dtype == "i64" and i * 100 + j or (i - 2.5) * (j + 0.25)
    end
    for j = 1, sh[2] do
      for i = 1, sh[1] do d:set(i, j, val(rg[1][1] + i - 1, rg[2][1] + j - 1)) end
    end
    -- the whole array, at a root other than 0, and its plain reductions
    local root = n - 1
    local g = d:gather(root)
    assert((g ~= nil) == (me == root))
    local whole = mp.bcast(g, root)
    assert(getmetatable(whole) == getmetatable(d) and whole.layout == nil, "plain on arrival")
    local X, Y = lay.dims[1], lay.dims[2]
    for j = 1, Y do for i = 1, X do assert(whole:get(i, j) == val(i, j)) end end
    local function close(a, b)
      if type(a) == "userdata" then return (a - b):abs() <= 1e-12 * (1 + b:abs()) end
      return math.abs(a - b) <= 1e-12 * (1 + math.abs(b))
    end
    assert(close(d:sum(), whole:sum()), spec .. " sum")
    if lay.dtype ~= "i64" then assert(close(d:mean(), whole:mean()), spec .. " mean") end
    assert(close(d:norm(), whole:norm()) and close(d:norm(1), whole:norm(1)))
    assert(d:norm(math.huge) == whole:norm(math.huge))
    if lay.dtype == "i64" then assert(d:sum() == whole:sum() and math.type(d:sum()) == "integer") end
    if lay.dtype ~= "c128" then
      assert(d:max() == whole:max() and d:min() == whole:min(), spec .. " min/max")
      assert(close(d:prod(), whole:prod()))
    else
      fails("not defined on complex arrays", d.max, d)
    end
    assert(close(d:dot(d), mp.Array.dot(whole, whole)))
    -- element-wise results keep the layout, views do not
    local e = d * 2 + d
    assert(e.layout == lay and (-d).layout == lay and d:copy().layout == lay)
    assert(d:zeros_like().layout == lay and mp.array_like(d).layout == lay)
    assert(d:view(":", ":").layout == nil and d:block().layout == nil)
    assert(close(e:sum(), 3 * whole:sum()))
    -- scatter from another root, and back
    local s = lay:scatter(me == 0 and whole or nil, 0)
    for i = 1, #d do assert(s[i] == d[i]) end
    assert(s.layout == lay)
    -- redistribute to other splits and back
    local other = mp.layout(spec:gsub("@1", ""):gsub("y=(%d+)", "y=%1@1"):gsub("x=(%d+)", "x=%1"),
                            {balanced = true})
    local r = d:redistribute(other)
    assert(r.layout == other or tostring(r.layout) == tostring(other))
    assert(close(r:sum(), whole:sum()))
    local back = r:redistribute(lay)
    for i = 1, #d do assert(back[i] == d[i]) end
    -- a transpose of a distributed array gives one
    local out = mp.transpose(lay, other):forward(d)
    assert(tostring(out.layout) == tostring(other) and tostring(out):find("mp.DArray", 1, true))
  end
  -- NaN wins min and max; halos are not counted; a scatter converts the dtype
  local lay = mp.layout("f64[x=9@1, y=2]", {balanced = true})
  local d = mp.darray(lay, {halo = 1})
  assert(#d == (lay:local_shape()[1] + 2) * 2 and d.halo[1] == 1)
  d:fill(1e300) -- halo cells too
  d:block():fill(1)
  assert(d:sum() == 18 and d:max() == 1 and d:norm(math.huge) == 1)
  if me == n - 1 then d:block()[1] = 0 / 0 end
  local mx, mn = d:max(), d:min()
  assert(mx ~= mx and mn ~= mn, "NaN")
  local f32 = me == 1 % n and mp.array("f32", 9, 2):fill(2.5) or nil
  local c = lay:scatter(f32, 1 % n)
  assert(c:sum() == 45 and c.dtype == "f64")
  -- a view of an existing block, distributed
  local plain = mp.array("f64", table.unpack(lay:local_shape())):fill(2)
  local v = mp.darray(lay, plain)
  assert(v:sum() == 36 and plain.layout == nil)
  v[1] = 7
  assert(plain[1] == 7 or #plain == 0)
  -- the norm does not overflow where the result does not
  local big = lay:alloc():fill(1e200)
  assert(math.abs(big:norm() / (1e200 * math.sqrt(18)) - 1) < 1e-12)
  -- FFT of a distributed array gives one of the output layout
  local cl = mp.layout("c128[x=4@1, y=6]", {balanced = true})
  local plan = mp.fft(cl)
  local z = cl:alloc():fill(1)
  local zz = plan:forward(z)
  assert(tostring(zz.layout) == tostring(plan.output))
  assert(zz:sum() == mp.complex(24, 0))
  -- errors
  fails("distributed array expected, got a plain mp.Array", lay.alloc(lay).redistribute, plain, lay)
  fails("the global array expected at the root", lay.scatter, lay, nil, me)
  local self = mp.world:split(me)
  local one = mp.layout("f64[x=4, y=4]") -- one rank's layout on n ranks
  fails("the global array has 1 dimensions", one.scatter, one, mp.array("f64", 16), 0, self)
  fails("root must be a rank 0..", d.gather, d, n)
  if n > 1 then fails("the layout has 1 ranks, the communicator " .. n, one.alloc(one, 0, 0).sum, one:alloc(0, 0)) end
  assert(mp.darray(one, {comm = self}):fill(1):sum() == 16)
end, fails)
print("darray ok")
