-- ranks: 2 8 20  quick: 2
-- SPDX-License-Identifier: MIT
-- A communicator's memory is its members', not the job's: a communicator of one rank
-- costs 8 bytes per member (its ranks both ways) less than a duplicate of mp.world, so
-- 8 (P - 1) bytes less, where a table sized by the job in every communicator would make
-- the gap 4 (P - 1). Counted with Lua's own count of its memory (userdata counted at
-- their size), after full collections, to within a few bytes of the calls' other
-- bookkeeping; the communicators work afterwards.
local P = mp.size
local gap = mp.exec(function()
  local N = 32
  local function cost(make)
    local keep = {}
    for i = 1, N do keep[i] = false end
    collectgarbage(); collectgarbage()
    local m0 = collectgarbage("count")
    for i = 1, N do keep[i] = make() end
    collectgarbage(); collectgarbage()
    local per = (collectgarbage("count") - m0) * 1024 / N
    return per, keep
  end
  local one, singles = cost(function() return mp.world:split(mp.rank) end)
  local all, dups = cost(function() return mp.world:dup() end)
  -- they work: the singletons see themselves, the duplicates everyone
  for i = 1, N do
    assert(singles[i].size == 1 and singles[i].rank == 0)
    assert(dups[i].size == P and dups[i].rank == mp.rank)
  end
  assert(dups[N]:allreduce(1, "sum") == P)
  local perm = mp.world:split(0, -mp.rank) -- members in reverse order
  assert(perm.rank == P - 1 - mp.rank and perm:allreduce(mp.rank, "max") == P - 1)
  if P > 1 then
    local right = (perm.rank + 1) % P
    perm:send(right, mp.rank)
    local src, v = perm:recv()
    assert(src == (perm.rank - 1) % P and v == perm:ranks()[src + 1], "any-source receive names the comm rank")
  end
  return mp.gather(all - one)
end)
for r, g in ipairs(gap) do
  assert(math.abs(g - 8 * (P - 1)) <= 4, ("rank %d: a communicator of all ranks costs %g bytes more than one of "
         .. "one rank, not %d"):format(r - 1, g, 8 * (P - 1)))
end
print(("%d ranks: a communicator costs 8 bytes per member (%d bytes apart)"):format(P, gap[1]))
print("comm_memory ok")
