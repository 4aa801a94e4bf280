-- ranks: 1 2 3 4 5 8 20  quick: 1 2
-- SPDX-License-Identifier: MIT
-- comm:split orders the members of a color by key, then by their rank in the
-- parent (MPI_Comm_split's rule), whatever order the keys come in: reversed,
-- tied, scrambled, at the ends of the integers, and on a split of a split.
mp.exec(function()
  local function expect(parent, color, key)
    -- the definition: members of my color, sorted by (key, parent rank)
    local mine = color(parent.rank)
    local want = {}
    for r = 0, parent.size - 1 do
      if color(r) == mine then want[#want + 1] = r end
    end
    table.sort(want, function(a, b)
      local ka, kb = key(a), key(b)
      if ka ~= kb then return ka < kb end
      return a < b
    end)
    local c = parent:split(mine, key(parent.rank))
    assert(c.size == #want, ("size %d, want %d"):format(c.size, #want))
    local pr = parent:ranks()
    local cr = c:ranks()
    for i, r in ipairs(want) do
      assert(cr[i] == pr[r + 1], ("rank %d of %d in the split: world rank %d, want %d")
             :format(i - 1, #want, cr[i], pr[r + 1]))
      if r == parent.rank then assert(c.rank == i - 1) end
    end
    -- the new order works for messages: each sends its new rank to the next
    if c.size > 1 then
      c:send((c.rank + 1) % c.size, c.rank)
      assert(c:recv((c.rank - 1) % c.size) == (c.rank - 1) % c.size)
    end
    assert(c:allreduce(1, "sum") == c.size)
    return c
  end
  local n = mp.size
  local one = function() return 0 end
  expect(mp.world, one, function(r) return n - r end)                 -- reversed
  expect(mp.world, one, function(r) return r % 3 end)                 -- ties: parent rank
  expect(mp.world, one, function(r) return (r * 7919) % 13 - 6 end)   -- scrambled
  expect(mp.world, one, function(r)                                   -- the integers' ends
    return r % 3 == 0 and math.maxinteger or r % 3 == 1 and math.mininteger or r end)
  expect(mp.world, function(r) return r % 2 end, function(r) return -r end)
  local c = expect(mp.world, function(r) return r % 3 end, function(r) return (r * 5) % 7 end)
  expect(c, function(r) return r % 2 end, function(r) return -r end)  -- a split of a split
  -- no key: the parent's order
  expect(mp.world, one, function(r) return r end)
end)
print("comm_split_order ok")
