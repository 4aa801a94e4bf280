-- ranks: 1 2 3 4 6
-- SPDX-License-Identifier: MIT
-- Cartesian topologies (coordinates, shifts, neighbours, distances, weighted
-- factorisation) and halo exchanges on arrays with a layout: 2-D and 3-D, widths 1
-- and 2, periodic and not, even and balanced: every halo cell (corners included) is
-- checked against the global array, and cells beyond a non-periodic edge are untouched.
mp.exec(function()
  local P = mp.size
  -- topology values
  local t = mp.cart(P, {periodic = {true, false}})
  assert(t.nranks == P and t.ndim == 2 and t.periodic[1] and not t.periodic[2])
  local d1, d2 = t.dims[1], t.dims[2]
  assert(d1 * d2 == P and d1 >= d2)
  for r = 0, P - 1 do
    local c = t:coords(r)
    assert(t:rank(c) == r and t:rank(c[1], c[2]) == r)
    local src, dst = t:shift(1, 1, r)
    assert(dst == t:rank((c[1] + 1) % d1, c[2]) and src == t:rank((c[1] - 1) % d1, c[2]))
    local s2, t2 = t:shift(2, 1, r)
    assert(s2 == (c[2] > 0 and t:rank(c[1], c[2] - 1) or nil))
    assert(t2 == (c[2] < d2 - 1 and t:rank(c[1], c[2] + 1) or nil))
    local nb = t:neighbors(r)
    assert(#nb == 4 and nb[1] == src and nb[2] == dst and nb[3] == (s2 or false))
    assert(t:distance(r, r) == 0)
  end
  assert(t:rank(-1, 0) == t:rank(d1 - 1, 0) and t:rank(0, -1) == nil)
  local w = mp.dims(8, {1000, 10})
  assert(w[1] == 8 and w[2] == 1, "a 1000x10 domain on 8 ranks is cut 8x1")
  assert(mp.cart(8, {extents = {1000, 10}}).dims[1] == 8)
  assert(tostring(mp.cart({2, 3}, {periodic = true})) == "mp.Cart 2x3 (periodic: yes, yes)")

  local bad = 0
  local function gval(g) -- global 0-based indices -> a value unique per cell
    local v, m = 1, 1
    for k = 1, #g do v = v + g[k] * m; m = m * 1000 end
    return v
  end
  -- the block as a strided view inside a larger array: one spare cell before
  -- and after each dimension (rev: the first dimension walked backwards)
  local function strided(lay, width, rev)
    local fs, d = {lay:alloc(width):dims()}, {}
    for k = 1, #fs do d[k] = fs[k] + 2 end
    local big = mp.array("f64", table.unpack(d))
    big:fill(-7)
    local r = {}
    for k = 1, #fs do r[k] = {2, fs[k] + 1} end
    if rev then r[1] = {fs[1] + 1, 2, -1} end
    local v = big:view(table.unpack(r))
    assert(not v.contiguous)
    return v, big
  end
  local function run(spec, opts, width, periodic, msgs, view)
    local lay = mp.layout(spec, opts)
    -- periodicity from a topology (split dimensions) or per dimension
    local h = lay.ndim == 2 and lay.split.y and mp.halo(lay, width, mp.cart(lay.grid, {periodic = periodic}))
              or mp.halo(lay, width, {periodic = periodic})
    local wd = h.width
    -- two ranks: one neighbour, whose slabs (both sides when periodic) share a
    -- message unless that takes a small pair past the rendezvous threshold
    if mp.size == 2 then
      local info = h:info()
      local want = periodic and msgs or 1
      assert(info.messages == want and info.peers == 1,
             ("%s: %d messages to %d peers (want %d)"):format(spec, info.messages, info.peers, want))
    end
    local a, big = lay:alloc(width), nil
    if view then a, big = strided(lay, width, view == "rev") end
    local shape, rg, ext = lay:local_shape(), lay:range(), lay.dims
    local nd = #shape
    local full = {}
    for k = 1, nd do full[k] = shape[k] + 2 * wd[k] end
    -- interior from the global array, halo -1
    local function cell(i, f)
      local rem, g, inner, off = i - 1, {}, true, false
      for k = 1, nd do
        local j = rem % full[k]; rem = rem // full[k]
        local gi = rg[k][1] - 1 + j - wd[k]
        if j < wd[k] or j >= wd[k] + shape[k] then inner = false end
        if gi < 0 or gi >= ext[k] then
          if periodic then gi = gi % ext[k] else off = true end
        end
        g[k] = gi
      end
      return f(g, inner, off)
    end
    for i = 1, #a do a[i] = cell(i, function(g, inner) return inner and gval(g) or -1 end) end
    local r = h:exchange(a)
    assert(r == a)
    for i = 1, #a do
      local want = cell(i, function(g, _, off) return off and -1 or gval(g) end)
      if a[i] ~= want then bad = bad + 1 end
    end
    -- again, nonblocking, after changing the interior
    local inner = a:interior(wd)
    inner:mul_(2)
    local req = h:iexchange(a)
    assert(req:wait() == a)
    for i = 1, #a do
      local want = cell(i, function(g, _, off) return off and -1 or 2 * gval(g) end)
      if a[i] ~= want then bad = bad + 1 end
    end
    -- a view's exchange writes nothing outside the view
    if big then
      local spare = 0
      for i = 1, #big do if big[i] == -7 then spare = spare + 1 end end
      bad = bad + (#big - #a) - spare
    end
  end
  for _, periodic in ipairs({false, true}) do
    run("f64[x=12@1, y=10@2]", {grid = t.dims, balanced = true}, 1, periodic)
    run("f64[x=13@1, y=11@2]", {grid = t.dims, balanced = true}, 2, periodic)
    run("f64[x=6@1, y=5, z=4@2]", {grid = t.dims, balanced = true}, {1, 1, 1}, periodic)
    run("f64[x=" .. 4 * P .. "@1, y=3]", nil, {2, 1}, periodic)
    run("f64[x=12@1, y=10@2]", {grid = t.dims, balanced = true}, 1, periodic, nil, "view")
    run("f64[x=6@1, y=5, z=4@2]", {grid = t.dims, balanced = true}, {1, 2, 1}, periodic, nil, "rev")
    if P == 2 then -- slabs of 4000, 4800 and 8800 bytes: 8000 + 24 stay eager (below
      -- 8256 bytes), 9600 would not (two messages), two large ones share one
      run("f64[x=8@1, y=500]", nil, {1, 0}, periodic, 1)
      run("f64[x=8@1, y=600]", nil, {1, 0}, periodic, 2)
      run("f64[x=8@1, y=1100]", nil, {1, 0}, periodic, 1)
    end
  end
  -- errors
  local lay = mp.layout("f64[x=12@1, y=10@2]", {grid = t.dims, balanced = true})
  local h = mp.halo(lay, 1)
  local ok, e = pcall(h.exchange, h, lay:alloc())
  assert(not ok and e:find("bad argument #2 to 'mp.Halo.exchange'", 1, true)
         and e:find("rank " .. mp.rank, 1, true), e)
  ok, e = pcall(mp.halo, lay, 7)
  assert(not ok and e:find("'mp.halo'", 1, true) and e:find("exceeds its smallest block", 1, true) or P < 2, e)
  ok, e = pcall(mp.cart, {2, 0})
  assert(not ok and e:find("bad argument #1 to 'mp.cart'", 1, true), e)

  local all = mp.world:allreduce(bad, "sum")
  assert(all == 0, all .. " wrong halo cells")
end)

-- neighbourhood collectives on the topologies
mp.exec(function()
  for _, periodic in ipairs({false, true}) do
    local t = mp.cart(mp.size, {ndim = 2, periodic = periodic})
    local nb = t:neighbors()
    local g = t:neighbor_allgather({mp.rank, "r" .. mp.rank})
    assert(#g == 4)
    for s = 1, 4 do
      if nb[s] then assert(g[s][1] == nb[s] and g[s][2] == "r" .. nb[s])
      else assert(g[s] == false) end
    end
    -- each slot's value names sender and slot; slot s arrives in the neighbour's opposite slot
    local send = {}
    for s = 1, 4 do send[s] = mp.rank * 10 + s end
    local got = t:neighbor_alltoall(send)
    for s = 1, 4 do
      local opposite = s % 2 == 1 and s + 1 or s - 1
      if nb[s] then assert(got[s] == nb[s] * 10 + opposite, "alltoall slot " .. s)
      else assert(got[s] == false) end
    end
  end
  local ok, e = pcall(mp.cart({mp.size}).neighbor_alltoall, mp.cart({mp.size}), {1})
  assert(not ok and e:find("bad argument #2 to 'mp.Cart.neighbor_alltoall'", 1, true), e)
end)
