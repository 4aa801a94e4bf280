-- ranks: 1 4
-- SPDX-License-Identifier: MIT
-- Layouts as values: printing (the printed form is the constructor), fields, :with,
-- owner/range/local_shape agreeing on every global index (even and balanced, empty
-- blocks), coords/rank, alloc/wrap of existing arrays, describe, and argument errors.
mp.exec(function()
  local P = mp.size
  local l = mp.layout("f64[sp=2, vpar=8@1, mu=4@2, r=4, theta=16]", {grid = {P, 1}})
  assert(tostring(l) == "f64[sp=2, vpar=8@1, mu=4@2, r=4, theta=16]")
  assert(l.spec == "f64[sp=2, vpar=8@1, mu=4@2, r=4, theta=16] over " .. P .. "x1")
  assert(mp.layout(l.spec) == l, "the printed form makes the same layout")
  assert(l.ndim == 5 and l.nranks == P and l.dtype == "f64" and not l.balanced)
  assert(l.names[2] == "vpar" and l.dims[5] == 16 and l.split.vpar == 1 and l.split.mu == 2)
  local w = l:with{order = {"theta", "r", "mu", "vpar", "sp"}}
  assert(tostring(w) == "f64[theta=16, r=4, mu=4@2, vpar=8@1, sp=2]")
  local t = mp.layout{dtype = "i32", dims = {{"i", 7}, {"j", 3}}, split = {"i"}, balanced = true}
  assert(t.dtype == "i32" and t.balanced and t.split.i == 1)
  -- every global index: one owner, inside its range, at the right local index
  for _, lay in ipairs({t, mp.layout("u8[a=5@1, b=3@2]", {balanced = true, grid = mp.dims(P, 2)}),
                        mp.layout("f32[x=2@1, y=6]", {balanced = true})}) do
    local count = {}
    local n1, n2 = lay.dims[1], lay.dims[2]
    for j = 1, n2 do
      for i = 1, n1 do
        local r, li, lj = lay:owner(i, j)
        local rg = lay:range(r)
        assert(rg[1][1] <= i and i <= rg[1][2] and rg[2][1] <= j and j <= rg[2][2])
        assert(li == i - rg[1][1] + 1 and lj == j - rg[2][1] + 1)
        count[r] = (count[r] or 0) + 1
      end
    end
    for r = 0, P - 1 do
      local s = lay:local_shape(r)
      assert((count[r] or 0) == s[1] * s[2], "blocks tile the domain")
      assert(lay:rank(lay:coords(r)) == r)
    end
  end
  -- alloc and wrap: an existing array of the right shape is this rank's block
  local s = t:local_shape()
  local a = mp.array("i32", s[1], s[2])
  assert(t:wrap(a) == a)
  assert(#t:alloc(1) == (s[1] + 2) * s[2])
  local ok, e = pcall(t.wrap, t, mp.array("f64", s[1], s[2]))
  assert(not ok and e:find("bad argument #2 to 'mp.Layout.wrap'", 1, true) and e:find("rank " .. mp.rank, 1, true), e)
  assert(t:describe():find("rank " .. (P - 1) .. " (", 1, true))
  ok, e = pcall(mp.layout, "f64[x=4@1, x=5]")
  assert(not ok)
  ok, e = pcall(l.owner, l, 3, 1, 1, 1, 1)
  assert(not ok and e:find("bad argument #2 to 'mp.Layout.owner'", 1, true) and e:find("out of range 1..2", 1, true), e)
  -- an even split of a zero extent: every block empty (the grid is chosen for it too)
  local z = mp.layout("f64[x=0@1, y=4]")
  assert(z.nranks == P and z:local_shape()[1] == 0 and #z:alloc() == 0)
  local z2 = mp.layout("c128[x=0@1, y=6@2]", {nranks = P})
  assert(z2.nranks == P and z2:local_shape()[2] * z2.grid[2] == 6)
  assert(#mp.transpose(z, mp.layout("f64[x=0, y=4@1]", {balanced = true})):forward(z:alloc()) == 0)
  ok, e = pcall(mp.layout, "q64[x=4@1]")
  assert(not ok and e:find("unknown dtype", 1, true), e)
end)
