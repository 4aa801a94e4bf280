-- ranks: 1 2 3 4 5 8 20  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's v-collectives on arrays: Gatherv, Scatterv, Allgatherv,
-- Alltoallv, Reduce_scatter, at every root, packed and with displacements
-- (gaps, reversed order), zero counts, blocks small and large (both sides
-- of the 64 KiB size where messages go in parts), dtypes converted at the
-- receiver, n-D arrays taken flat; counts that disagree with the arrays,
-- or with each other, are errors naming the function, the argument and the
-- rank; the next task works after them.
local function fails(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok and tostring(err):find(pattern),
         "rank " .. mp.rank .. ": expected '" .. pattern .. "', got " .. tostring(err))
end

-- rank r's elements: r * 100000 + i
local function mine(dtype, r, k)
  local a = mp.array(dtype, k)
  for i = 1, k do a[i] = r * 100000 + i end
  return a
end

local function layouts(n, big)
  local packed, gappy = {}, {}
  local counts = {}
  for r = 0, n - 1 do counts[r + 1] = big and (r % 2 == 0 and 9000 or 0) or (r * 7) % 4 end
  -- displs: blocks in reverse rank order, one empty element between blocks
  local at = 0
  for r = n - 1, 0, -1 do gappy[r + 1] = at; at = at + counts[r + 1] + 1 end
  return counts, {nil, gappy}
end

mp.exec(function()
  local mpi = mp.mpi
  local me, n = mp.rank, mp.size
  for _, big in ipairs({false, true}) do
    local counts, displs_list = layouts(n, big)
    for d = 1, 2 do
      local displs = displs_list[d]
      local function at(r, i) -- where rank r's element i lands
        if displs then return displs[r + 1] + i end
        local k = 0
        for s = 0, r - 1 do k = k + counts[s + 1] end
        return k + i
      end
      local total = 0
      for r = 0, n - 1 do
        if at(r, counts[r + 1]) > total then total = at(r, counts[r + 1]) end
      end
      -- odd ranks send i32: converted to the root's (or receiver's) dtype
      local a = mine(me % 2 == 1 and "i32" or "f64", me, counts[me + 1])
      for root = 0, n - 1 do
        local g = mpi.Gatherv(a, me == root and counts or nil, displs, root)
        if me == root then
          assert(g.dtype == a.dtype and #g >= total)
          for r = 0, n - 1 do
            for i = 1, counts[r + 1] do assert(g[at(r, i)] == r * 100000 + i) end
          end
          if displs and n > 1 then assert(g[at(n - 1, counts[n] + 1)] == 0) end -- a gap
        else
          assert(g == nil)
        end
        -- Scatterv of the root's gathered array gives each rank its own block back
        local s = mpi.Scatterv(me == root and g or nil, counts, displs, root)
        assert(#s == counts[me + 1] and s.dtype == (root % 2 == 1 and "i32" or "f64"))
        for i = 1, #s do assert(s[i] == me * 100000 + i) end
      end
      local ag = mpi.Allgatherv(a, counts, displs)
      assert(ag.dtype == a.dtype)
      for r = 0, n - 1 do
        for i = 1, counts[r + 1] do assert(ag[at(r, i)] == r * 100000 + i) end
      end
    end
  end
  -- Alltoallv: rank p sends (p + q) % 3 elements to rank q (some zero),
  -- packed and with receive displacements in reverse order
  local sc, rc, rd = {}, {}, {}
  local stot = 0
  for q = 0, n - 1 do sc[q + 1] = (me + q) % 3 + (q == 1 and 9000 or 0); stot = stot + sc[q + 1] end
  for p = 0, n - 1 do rc[p + 1] = (p + me) % 3 + (me == 1 and 9000 or 0) end
  local at = 0
  for p = n - 1, 0, -1 do rd[p + 1] = at; at = at + rc[p + 1] end
  local x = mine("i64", me, stot)
  for _, rdispls in ipairs({false, true}) do
    local y = mpi.Alltoallv(x, sc, nil, rc, rdispls and rd or nil)
    local off = 0
    for p = 0, n - 1 do
      -- p's block for me starts after p's blocks for ranks 0..me-1
      local from = 0
      for q = 0, me - 1 do from = from + (p + q) % 3 + (q == 1 and 9000 or 0) end
      local base = rdispls and rd[p + 1] or off
      for i = 1, rc[p + 1] do assert(y[base + i] == p * 100000 + from + i) end
      off = off + rc[p + 1]
    end
  end
  -- Reduce_scatter: arrays (2-D, taken flat) and tables, counts with zeros
  local counts = {}
  local tot = 0
  for r = 0, n - 1 do counts[r + 1] = r % 3; tot = tot + r % 3 end
  local v = mp.array("f64", 1, tot)
  for i = 1, tot do v[i] = i + me end
  local t = {}
  for i = 1, tot do t[i] = i * (me + 1) end
  local mine_v, mine_t = mpi.Reduce_scatter(v, counts, mpi.SUM), mpi.Reduce_scatter(t, counts,
                                                                                    mpi.MAX)
  local lo = 0
  for r = 0, me - 1 do lo = lo + counts[r + 1] end
  assert(#mine_v == counts[me + 1] and #mine_t == counts[me + 1] and mine_v.dtype == "f64")
  for i = 1, counts[me + 1] do
    assert(mine_v[i] == n * (lo + i) + n * (n - 1) / 2)
    assert(mine_t[i] == (lo + i) * n)
  end
  -- everything empty
  local zeros = {}
  for r = 1, n do zeros[r] = 0 end
  assert(#mpi.Allgatherv(mp.array("u8", 0), zeros, nil) == 0)
  local twos = {} -- floats with integer values count as integers, as in Lua
  for r = 1, n do twos[r] = 2.0 end
  assert(#mpi.Allgatherv(mp.array("u8", 2), twos, nil) == 2 * n and math.type(twos[1]) == "float")
  assert(#mpi.Scatterv(mp.array("u8", 0), zeros, nil, n - 1) == 0)
  assert(#mpi.Alltoallv(mp.array("u8", 0), zeros, nil, zeros, nil) == 0)
end)

-- bad input: named by function, argument and rank
mp.exec(function()
  local mpi = mp.mpi
  local me, n = mp.rank, mp.size
  local R = "%[rank " .. me .. "/" .. n .. "%]"
  local ones = {}
  for r = 1, n do ones[r] = 1 end
  local one = mp.array("f64", 1)
  fails("bad argument #1 to 'mp.mpi.Gatherv' %(" .. R .. " mp.Array expected, got table",
        mpi.Gatherv, {1}, ones, nil, 0)
  fails("bad argument #2 to 'mp.mpi.Allgatherv' %(" .. R .. " counts must list " .. n ..
        " non%-negative integers %(one per rank%), got a list of " .. (n + 1), mpi.Allgatherv,
        one, {1, table.unpack(ones)}, nil)
  local neg = {table.unpack(ones)}
  neg[n] = -1
  fails("bad argument #2 to 'mp.mpi.Allgatherv' %(" .. R .. " counts%[" .. n .. "%] is %-1",
        mpi.Allgatherv, one, neg, nil)
  neg[n] = 1.5
  fails("counts%[" .. n .. "%] is 1.5: non%-negative integers expected", mpi.Allgatherv, one,
        neg, nil)
  fails("bad argument #2 to 'mp.mpi.Allgatherv' %(" .. R .. " counts%[" .. (me + 1) .. "%] is 1 " ..
        "but this rank's array has 2 elements", mpi.Allgatherv, mp.array("f64", 2), ones, nil)
  fails("bad argument #2 to 'mp.mpi.Gatherv' %(" .. R .. " counts%[" .. (me + 1) .. "%] is 1 " ..
        "but this rank's array has 0 elements", mpi.Gatherv, mp.array("f64", 0), ones, nil, 0)
  if n > 1 then
    local overlap = {}
    for r = 1, n do overlap[r] = 0 end
    fails("bad argument #3 to 'mp.mpi.Allgatherv' %(" .. R .. " the blocks of ranks 0 and 1 " ..
          "overlap", mpi.Allgatherv, one, ones, overlap)
  end
  fails("bad argument #3 to 'mp.mpi.Scatterv' %(" .. R .. " the blocks reach element " ..
        (n + 1) .. " of an array of " .. n, mpi.Scatterv, mp.array("f64", n), ones,
        (function() local d = {} for r = 1, n do d[r] = r end return d end)(), me)
  fails("bad argument #3 to 'mp.mpi.Alltoallv' %(" .. R .. " the blocks reach element " .. n ..
        " of an array of " .. (n - 1), mpi.Alltoallv, mp.array("f64", n - 1), ones, nil, ones,
        nil)
  fails("bad argument #2 to 'mp.mpi.Reduce_scatter' %(" .. R .. " counts sum to " .. n ..
        " but the array has " .. (n + 1) .. " elements", mpi.Reduce_scatter,
        mp.array("f64", n + 1), ones, mpi.SUM)
  fails("bad argument #1 to 'mp.mpi.Reduce_scatter' %(" .. R .. " mp.Array or table expected, " ..
        "got string", mpi.Reduce_scatter, "x", ones, mpi.SUM)
end)

-- counts that disagree between ranks: the receiver names the sender
if mp.size > 1 then
  local ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    local n = mp.size
    local counts = {}
    for r = 1, n do counts[r] = 2 end
    -- rank n - 1 sends 3 elements where the root expects 2
    mpi.Gatherv(mp.array("f64", mp.rank == n - 1 and 3 or 2), mp.rank == 0 and counts or nil, nil,
                0)
  end)
  assert(not ok and tostring(err):find("bad argument #2 to 'mp.mpi.Gatherv' %(%[rank 0/%d+%] " ..
         "counts%[" .. mp.size .. "%] is 2 but rank " .. (mp.size - 1) .. " sent 3 elements"),
         tostring(err))
  ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    local n, me = mp.size, mp.rank
    local sc, rc = {}, {}
    for r = 1, n do sc[r], rc[r] = 1, 1 end
    if me == 0 then sc[2] = 2 end -- rank 0 sends 2 to rank 1, which expects 1
    local tot = 0
    for r = 1, n do tot = tot + sc[r] end
    mpi.Alltoallv(mp.array("f64", tot), sc, nil, rc, nil)
  end)
  assert(not ok and tostring(err):find("bad argument #4 to 'mp.mpi.Alltoallv' %(%[rank 1/%d+%] " ..
         "recvcounts%[1%] is 1 but rank 0 sent 2 elements"), tostring(err))
end
assert(mp.exec(function()
  local ones = {}
  for r = 1, mp.size do ones[r] = 1 end
  return #mp.mpi.Allgatherv(mp.array("f64", 1), ones, nil) == mp.size
end))
print("mpi_vcoll ok", mp.size)
