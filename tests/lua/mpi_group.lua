-- ranks: 1 2 3 4 5 8 20  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's groups against a serial computation (Comm_group, Group_incl,
-- Group_excl, union, intersection, difference, Group_translate_ranks,
-- Group_compare, Group_rank), and the communicators made from them:
-- Comm_create (one group, disjoint groups, the empty group, members that
-- disagree), Comm_split_type (COMM_TYPE_SHARED), Comm_compare, Comm_free;
-- bad input names the function, the argument and the rank; a fault on one
-- rank while the others are in Comm_create or Comm_split_type.
package.path = "lib/?.lua;" .. package.path
local checks = require("mpi_checks")
local fails, same = checks.fails, checks.same

-- local calls, at rank 0 outside a task too
do
  local mpi = mp.mpi
  local g = mpi.Comm_group(mp.world)
  assert(mpi.Group_size(g) == mp.size and mpi.Group_rank(g) == 0)
  assert(mpi.Group_size(mpi.GROUP_EMPTY) == 0 and mpi.Group_rank(mpi.GROUP_EMPTY) == mpi.UNDEFINED)
end

local r = mp.exec(function()
  local mpi = mp.mpi
  local me, n = mpi.Comm_rank(), mpi.Comm_size()
  local R = "%[rank " .. me .. "/" .. n .. "%]"
  local world = mpi.Comm_group(mpi.COMM_WORLD)
  assert(mpi.Group_size(world) == n and mpi.Group_rank(world) == me)
  -- incl in a given order, excl keeping the group's order
  local rev = {}
  for q = n - 1, 0, -1 do rev[#rev + 1] = q end
  local gr = mpi.Group_incl(world, rev)
  assert(mpi.Group_rank(gr) == n - 1 - me)
  assert(mpi.Group_compare(gr, world) == (n == 1 and mpi.IDENT or mpi.SIMILAR))
  assert(mpi.Group_compare(world, mpi.Group_incl(world, {})) == (n == 0 and mpi.IDENT or
                                                                   mpi.UNEQUAL))
  local odd, even = {}, {}
  for q = 0, n - 1 do
    if q % 2 == 1 then odd[#odd + 1] = q else even[#even + 1] = q end
  end
  local godd = mpi.Group_excl(world, even)
  assert(mpi.Group_size(godd) == #odd)
  assert(mpi.Group_rank(godd) == (me % 2 == 1 and me // 2 or mpi.UNDEFINED))
  local geven = mpi.Group_incl(world, even)
  assert(mpi.Group_compare(mpi.Group_range_incl(world, {{0, n - 1, 2}}), geven) == mpi.IDENT)
  assert(mpi.Group_compare(mpi.Group_range_excl(world, {{0, n - 1, 2}}), godd) == mpi.IDENT)
  assert(mpi.Group_compare(mpi.Group_range_incl(world, {{n - 1, 0, -1}}), gr) == mpi.IDENT)
  -- translate: ranks of godd in world and in geven
  local tr = mpi.Group_translate_ranks(godd, (function()
    local t = {}
    for k = 0, #odd - 1 do t[#t + 1] = k end
    t[#t + 1] = mpi.PROC_NULL
    return t
  end)(), world)
  for k = 1, #odd do assert(tr[k] == odd[k]) end
  assert(tr[#odd + 1] == mpi.PROC_NULL)
  local none = mpi.Group_translate_ranks(geven, {0}, godd)
  assert(none[1] == mpi.UNDEFINED)
  -- union, intersection, difference: MPI's orders
  local u = mpi.Group_union(godd, geven)
  assert(mpi.Group_size(u) == n and mpi.Group_compare(u, world) ==
         ((n <= 1) and mpi.IDENT or mpi.SIMILAR))
  local ut = mpi.Group_translate_ranks(u, {0}, world)
  assert(ut[1] == (odd[1] or 0), "union starts with the first group's members")
  assert(mpi.Group_size(mpi.Group_intersection(godd, geven)) == 0)
  assert(mpi.Group_compare(mpi.Group_intersection(gr, godd), mpi.Group_incl(gr, (function()
    local t = {}
    for k = 0, n - 1 do if (n - 1 - k) % 2 == 1 then t[#t + 1] = k end end
    return t
  end)())) == mpi.IDENT, "intersection keeps the first group's order")
  assert(mpi.Group_compare(mpi.Group_difference(world, godd), geven) == mpi.IDENT)

  -- Comm_create: the even ranks, reversed; the others nil
  local grev = mpi.Group_incl(world, (function()
    local t = {}
    for k = #even, 1, -1 do t[#t + 1] = even[k] end
    return t
  end)())
  local c = mpi.Comm_create(mpi.COMM_WORLD, grev)
  assert((c ~= nil) == (me % 2 == 0))
  if c then
    assert(mpi.Comm_size(c) == #even and mpi.Comm_rank(c) == mpi.Group_rank(grev))
    assert(same(c:ranks(), (function()
      local t = {}
      for k = #even, 1, -1 do t[#t + 1] = even[k] end
      return t
    end)()))
    assert(mpi.Allreduce(me, mpi.SUM, c) == mpi.Allreduce(me % 2 == 0 and me or 0, mpi.SUM,
                                                          c))
    -- messages stay on the new communicator
    local right = (mpi.Comm_rank(c) + 1) % mpi.Comm_size(c)
    local left = (mpi.Comm_rank(c) - 1) % mpi.Comm_size(c)
    local v, st = mpi.Sendrecv(me, right, 5, left, 5, c)
    assert(v == c:ranks()[left + 1] and st.source == left)
    assert(mpi.Comm_compare(c, c) == mpi.IDENT)
    assert(mpi.Comm_compare(c, mpi.COMM_WORLD) == (n == 1 and mpi.CONGRUENT or mpi.UNEQUAL))
  end
  -- disjoint groups: each rank passes its parity's
  local mine = me % 2 == 0 and geven or godd
  local d = mpi.Comm_create(mpi.COMM_WORLD, mine)
  assert(d and mpi.Comm_size(d) == mpi.Group_size(mine) and mpi.Comm_rank(d) == me // 2)
  assert(mpi.Allreduce(1, mpi.SUM, d) == mpi.Group_size(mine))
  -- the empty group: nil everywhere
  assert(mpi.Comm_create(mpi.COMM_WORLD, mpi.GROUP_EMPTY) == nil)
  -- Comm_group of a communicator, Comm_create from a sub-communicator
  if c then
    local cg = mpi.Comm_group(c)
    assert(mpi.Group_compare(cg, grev) == mpi.IDENT)
    local first = mpi.Comm_create(c, mpi.Group_incl(cg, {0}))
    assert((first ~= nil) == (mpi.Comm_rank(c) == 0))
  end

  -- Comm_split_type: the ranks of this node (mp.machine's), by key
  local nodes = mp.machine().nodes
  local s = mpi.Comm_split_type(mpi.COMM_WORLD, mpi.COMM_TYPE_SHARED, -me)
  local want = {}
  for q = n - 1, 0, -1 do
    if nodes[q + 1] == nodes[me + 1] then want[#want + 1] = q end
  end
  assert(same(s:ranks(), want), "split_type: this node's ranks, ordered by key")
  assert(mpi.Comm_split_type(mpi.COMM_WORLD, mpi.UNDEFINED) == nil)
  local sd = mpi.Comm_split_type(mpi.COMM_WORLD, me == 0 and mpi.UNDEFINED or
                                 mpi.COMM_TYPE_SHARED)
  assert((sd == nil) == (me == 0))

  -- Comm_compare, Comm_free
  local dup = mpi.Comm_dup()
  assert(mpi.Comm_compare(mpi.COMM_WORLD, mpi.COMM_WORLD) == mpi.IDENT)
  assert(mpi.Comm_compare(mpi.COMM_WORLD, dup) == mpi.CONGRUENT)
  local back = mpi.Comm_split(mpi.COMM_WORLD, 0, -me)
  assert(mpi.Comm_compare(back, mpi.COMM_WORLD) == (n == 1 and mpi.CONGRUENT or mpi.SIMILAR))
  assert(mpi.Comm_free(dup) == nil)

  -- bad input
  fails("bad argument #2 to 'mp.mpi.Group_incl' %(" .. R .. " rank list item 1: rank " .. n ..
        " out of range 0%.%." .. (n - 1) .. "%)", mpi.Group_incl, world, {n})
  fails("bad argument #2 to 'mp.mpi.Group_excl' %(" .. R .. " rank list item 2: rank 0 listed " ..
        "twice%)", mpi.Group_excl, world, {0, 0})
  fails("bad argument #2 to 'mp.mpi.Group_incl' %(" .. R .. " rank list item 1 is not an " ..
        "integer %(a string%)%)", mpi.Group_incl, world, {"0"})
  fails("bad argument #2 to 'mp.mpi.Group_range_incl' %(" .. R .. " range 1: {first, last%[, " ..
        "stride%]} of integers expected, stride not 0%)", mpi.Group_range_incl, world, {{0, 0, 0}})
  fails("bad argument #2 to 'mp.mpi.Group_range_excl' %(" .. R .. " rank list item 1: rank " ..
        n .. " out of range", mpi.Group_range_excl, world, {{n, n}})
  fails("bad argument #1 to 'mp.mpi.Group_size' %(" .. R .. " group expected, got table%)",
        mpi.Group_size, {})
  fails("bad argument #3 to 'mp.mpi.Group_translate_ranks' %(" .. R .. " group expected",
        mpi.Group_translate_ranks, world, {0}, nil)
  fails("bad argument #2 to 'mp.mpi.Group_translate_ranks' %(" .. R .. " rank list item 1: " ..
        "%-5 is not a rank", mpi.Group_translate_ranks, world, {-5}, world)
  fails("bad argument #1 to 'mp.mpi.Comm_create' %(" .. R .. " communicator expected, got " ..
        "string%)", mpi.Comm_create, "world", world)
  fails("bad argument #2 to 'mp.mpi.Comm_create' %(" .. R .. " group expected, got nil%)",
        mpi.Comm_create, mpi.COMM_WORLD)
  fails("bad argument #2 to 'mp.mpi.Comm_split_type' %(" .. R .. " split type 7: " ..
        "COMM_TYPE_SHARED or UNDEFINED expected%)", mpi.Comm_split_type, mpi.COMM_WORLD, 7)
  fails("bad argument #1 to 'mp.mpi.Comm_free' %(" .. R .. " COMM_WORLD cannot be freed%)",
        mpi.Comm_free, mpi.COMM_WORLD)
  if c and mpi.Comm_size(c) < n then -- a group with a rank outside the communicator
    fails("bad argument #2 to 'mp.mpi.Comm_create' %(" .. R .. " world rank 1 of the group is " ..
          "not in the communicator%)", mpi.Comm_create, c, mpi.Group_incl(world, {1}))
  end
  return "ok"
end)
assert(r == "ok")

-- members that disagree on the group: an error (at a rank that notices),
-- and the next task runs clean
if mp.size >= 2 then
  local ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    local w = mpi.Comm_group(mpi.COMM_WORLD)
    -- rank 0 passes {0, 1}, the others {1, 0}
    local gg = mpi.Group_incl(w, mp.rank == 0 and {0, 1} or {1, 0})
    return mpi.Comm_create(mpi.COMM_WORLD, gg)
  end)
  assert(not ok and tostring(err):find("mp.mpi.Comm_create: %[rank %d+/%d+%] the members of " ..
                                       "the group did not all pass it"), tostring(err))
  assert(mp.exec(function() return mp.mpi.Allreduce(1, mp.mpi.SUM) end) == mp.size)
end

-- a fault on one rank while the others are in Comm_create or
-- Comm_split_type; the next task runs clean
if mp.size >= 2 then
  for _, step in ipairs({"create", "split_type"}) do
    for _, bad in ipairs({0, mp.size - 1}) do
      local ok, err = pcall(mp.exec, function(b, what)
        local mpi = mp.mpi
        if mp.rank == b then error("fault at " .. b .. " before " .. what) end
        if what == "create" then
          mpi.Comm_create(mpi.COMM_WORLD, mpi.Comm_group(mpi.COMM_WORLD))
        else
          mpi.Comm_split_type(mpi.COMM_WORLD, mpi.COMM_TYPE_SHARED)
        end
      end, bad, step)
      assert(not ok and tostring(err):find("fault at " .. bad .. " before " .. step, 1, true),
             tostring(err))
      assert(mp.exec(function()
        local mpi = mp.mpi
        local c = mpi.Comm_create(mpi.COMM_WORLD, mpi.Comm_group(mpi.COMM_WORLD))
        return mpi.Allreduce(1, mpi.SUM, c)
      end) == mp.size)
    end
  end
end
