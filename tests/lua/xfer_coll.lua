-- ranks: 1 2 3 4 8 20  quick: 1 2
-- SPDX-License-Identifier: MIT
-- The transport harness, collectives and trees: bcast from every root,
-- handout, gather, allgather, scatter and alltoall, for every value kind
-- and the sizes around every threshold (tests/lua/lib/xfer.lua), each rank
-- checking bit for bit what it received against what it computes the
-- sender sent. Reductions are in xfer_reduce.lua, the pool and the map in
-- xfer_pool.lua. MPLUA_XFER_SEED replays a failure (the seed is printed);
-- MPLUA_XFER_ROUNDS runs more rounds with fresh seeds.
package.path = "lib/?.lua;" .. package.path
local X = mp.require("xfer")
local seed0 = tonumber(os.getenv("MPLUA_XFER_SEED")) or 20261123
local rounds = tonumber(os.getenv("MPLUA_XFER_ROUNDS")) or 1
local n = mp.size
local limit = n <= 3 and X.BIG or n <= 5 and (1 << 20) or 300001

local roots = {}
if n <= 5 then for r = 0, n - 1 do roots[#roots + 1] = r end
else roots = {0, 1, n // 2, n - 1} end

local function plan(seed)
  local r = X.rng(seed)
  local kinds = X.kind_names()
  local cases = {}
  local function add(op, kind, size, root)
    cases[#cases + 1] = {op = op, kind = kind, size = size, root = root, seed = r()}
  end
  for _, kind in ipairs(kinds) do
    for _, size in ipairs(X.sizes(kind, limit)) do
      add("bcast", kind, size, roots[r(#roots) + 1]) -- every kind and size
      add("handout", kind, size, 0)
      if size <= (1 << 20) and r(2) == 0 then
        add(({"gather", "allgather", "scatter", "alltoall"})[r(4) + 1], kind, size,
            roots[r(#roots) + 1])
      end
    end
  end
  for _, root in ipairs(roots) do -- every root, with values that go in parts
    for _, op in ipairs({"bcast", "gather", "scatter"}) do add(op, "mixed", 70000, root) end
    add("bcast", "str", 100000, root)
  end
  return cases
end

local function run(batch)
  local X = require("xfer")
  local me, n = mp.rank, mp.size
  for _, c in ipairs(batch) do
    local what = ("%s of %s, %d bytes, root %d, case seed %d"):format(c.op, c.kind, c.size,
                                                                     c.root, c.seed)
    local function val(...) return X.gen(c.kind, c.size, X.seed(c.seed, ...)) end
    if c.op == "bcast" then
      local v = nil -- not `me == c.root and val() or nil`: the value may be false
      if me == c.root then v = val() end
      local got = mp.bcast(v, c.root)
      if me ~= c.root then X.check(val(), got, what) end
    elseif c.op == "handout" then
      if me == 0 then mp.handout(val(), "tail") else
        X.check_all(table.pack(val(), "tail"), table.pack(mp.handout()), what)
      end
    elseif c.op == "gather" then
      local t = mp.gather(val(me), c.root)
      if me == c.root then
        for r = 0, n - 1 do if r ~= me then X.check(val(r), t[r + 1], what .. " from rank " .. r) end end
      else
        assert(t == nil, what .. ": a result off the root")
      end
    elseif c.op == "allgather" then
      local t = mp.allgather(val(me))
      for r = 0, n - 1 do if r ~= me then X.check(val(r), t[r + 1], what .. " from rank " .. r) end end
    elseif c.op == "scatter" then
      local t
      if me == c.root then
        t = {}
        for r = 0, n - 1 do t[r + 1] = {val(r)} end
      end
      local got = mp.scatter(t, c.root)
      if me ~= c.root then X.check({val(me)}, got, what) end
    else -- alltoall
      local t = {}
      for r = 0, n - 1 do t[r + 1] = {val(me, r)} end
      local got = mp.alltoall(t)
      for r = 0, n - 1 do
        if r ~= me then X.check({val(r, me)}, got[r + 1], what .. " from rank " .. r) end
      end
    end
  end
  mp.barrier()
  assert(#mp.probe() == 0, "a message is left over after the batch")
  return mp.handin(#batch)
end

X.rounds("xfer_coll", seed0, rounds, plan, run, 12)
