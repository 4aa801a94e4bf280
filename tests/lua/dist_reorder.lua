-- ranks: 1 2 4 8
-- SPDX-License-Identifier: MIT
-- Reordering as a function: mp.reorder maps a topology or a traffic matrix onto a
-- machine model (explicit nodes / NUMA lists, or mp.machine()), reports the bytes
-- crossing nodes and NUMA domains before and after (equal to optima worked out by
-- hand), returns a permutation, keeps the identity when it is already optimal, is
-- the same on every rank, takes a traced run's matrix, and comm:reorder applies
-- it as a real relabelling (rank k of the new communicator is the process the
-- mapping names; neighbours measured over it cross nodes as reported). Errors
-- name the function, the argument and the rank.
local P = mp.size

local function is_perm(r, n)
  assert(#r.ranks == n and #r.new_rank == n)
  local seen = {}
  for k = 1, n do
    local p = r.ranks[k]
    assert(math.type(p) == "integer" and p >= 0 and p < n and not seen[p], "a permutation")
    seen[p] = true
    assert(r.new_rank[p + 1] == k - 1, "new_rank is the inverse of ranks")
  end
end

-- the crossing bytes of a placement, recomputed here from the slots' neighbours
local function crossing(t, r, nodes, per)
  local c = 0
  for k = 0, t.nranks - 1 do
    for s, q in ipairs(t:neighbors(k)) do
      if q and nodes[r.ranks[k + 1] + 1] ~= nodes[r.ranks[q + 1] + 1] then
        c = c + (per and per[(s + 1) // 2] or 1)
      end
    end
  end
  return c
end

local alt8 = {0, 1, 0, 1, 0, 1, 0, 1}

-- a ring of 8 on two nodes, identity alternating: every edge crosses (16 bytes);
-- two blocks of 4 consecutive slots cut 2 edges, 2 bytes each: 4, the optimum
local ring = mp.cart({8}, {periodic = true})
local r = mp.reorder(ring, {nodes = alt8})
is_perm(r, 8)
assert(r.changed and r.before.cross_node == 16 and r.after.cross_node == 4, tostring(r))
assert(r.before.total == 16 and r.after.total == 16 and r.after.cross_numa == 0)
assert(crossing(ring, r, alt8) == 4)
assert(r.moved == 4 and r.metric:find("crossing nodes", 1, true))
local big_labels = {}   -- node labels are any integers 0 or more: the same mapping
for k = 1, 8 do big_labels[k] = alt8[k] == 0 and 7 or 1000000000 end
assert(table.concat(mp.reorder(ring, {nodes = big_labels}).ranks, " ") == table.concat(r.ranks, " "))
local text = tostring(r)
assert(text:find("mp.reorder: mp.Cart 8 (periodic: yes) onto 8 ranks on 2 nodes (4 each)", 1, true), text)
assert(text:find("crossing nodes%s+16%s+4"), text)

-- a 2x4 grid: the identity cuts the 4 edges of axis 1 (8 bytes); two 2x2 blocks cut
-- 2 edges (4 bytes), the least any cut into 4 + 4 can do
local grid = mp.cart({2, 4})
r = mp.reorder(grid, {nodes = alt8})
is_perm(r, 8)
assert(r.before.cross_node == 8 and r.after.cross_node == 4 and r.before.total == 20, tostring(r))
assert(crossing(grid, r, alt8) == 4)
-- weighted by axis: 10 bytes along axis 1, 1 along axis 2: 80 before, 4 after
r = mp.reorder(grid, {nodes = alt8, bytes = {10, 1}})
assert(r.before.cross_node == 80 and r.after.cross_node == 4, tostring(r))
assert(crossing(grid, r, alt8, {10, 1}) == 4)

-- the same ring as a graph topology: the same crossings; weights times opts.bytes
local adj, wadj = {}, {}
for k = 0, 7 do
  adj[k] = {(k + 1) % 8, (k - 1) % 8}
  wadj[k] = {{to = (k + 1) % 8, w = 10}}
end
r = mp.reorder(mp.graph(adj), {nodes = alt8})
is_perm(r, 8)
assert(r.before.cross_node == 16 and r.after.cross_node == 4, tostring(r))
r = mp.reorder(mp.graph(wadj), {nodes = alt8, bytes = 2})
assert(r.before.cross_node == 160 and r.after.cross_node == 40, tostring(r))

-- identity kept when it is already optimal (and when nothing can be better)
r = mp.reorder(ring, {nodes = {0, 0, 0, 0, 1, 1, 1, 1}})
assert(not r.changed and r.moved == 0 and r.before.cross_node == 4 and r.after.cross_node == 4)
for k = 1, 8 do assert(r.ranks[k] == k - 1) end
assert(tostring(r):find("identity kept", 1, true))
r = mp.reorder(mp.cart({2}, {periodic = true}), {nodes = {0, 1}})
assert(not r.changed and r.after.cross_node == 4)

-- NUMA domains inside nodes: a chain of 8, nodes {0,0,0,0,1,1,1,1}, domains alternating:
-- the node cut (one edge, 2 bytes) stays, the NUMA cuts go from 3 + 3 edges to 1 + 1
local chain = mp.cart({8})
r = mp.reorder(chain, {nodes = {0, 0, 0, 0, 1, 1, 1, 1}, numa = alt8})
assert(r.before.cross_node == 2 and r.after.cross_node == 2, tostring(r))
assert(r.before.cross_numa == 12 and r.after.cross_numa == 4, tostring(r))
assert(tostring(r):find("NUMA domains per node: 2", 1, true))
-- one node, two domains: the 2x4 grid as above, on the NUMA line
r = mp.reorder(grid, {nodes = {0, 0, 0, 0, 0, 0, 0, 0}, numa = alt8})
assert(r.before.cross_numa == 8 and r.after.cross_numa == 4 and r.after.cross_node == 0)
-- the machine as one value (mp.machine's shape)
r = mp.reorder(grid, {machine = {nodes = alt8}})
assert(r.after.cross_node == 4)

-- a matrix: a table of tables and an mp.Array give the same mapping; heavy pairs
-- (i, i+4) on different nodes under the identity go together (0 bytes cross)
local m, a = {}, mp.array("f64", 8, 8)
for i = 1, 8 do
  m[i] = {}
  for j = 1, 8 do
    local b = (math.abs(i - j) == 4) and 1000 or ((i % 8) + 1 == j and 1 or 0)
    m[i][j] = b
    a:set(i, j, b)
  end
end
local rt, ra = mp.reorder(m, {nodes = {0, 0, 0, 0, 1, 1, 1, 1}}), mp.reorder(a, {nodes = {0, 0, 0, 0, 1, 1, 1, 1}})
assert(rt.before.cross_node == 8002 and rt.after.cross_node < 8002, tostring(rt))
assert(rt.after.cross_node <= 4, tostring(rt)) -- pairs together: at most the ring's 2 cuts
for k = 1, 8 do assert(rt.ranks[k] == ra.ranks[k]) end
assert(tostring(ra):find("traffic matrix 8x8", 1, true))

-- a bigger case finds the optimum: 64x64 on 16 nodes of 256, the identity dealing
-- ranks round robin; 16 blocks of 16x16 cut 384 edges (768 bytes), the least any
-- placement can (a grid's blocks are one of the starts tried). How long it takes is
-- scripts/bench/reorder.lua's measure.
local big, bn = mp.cart({64, 64}), {}
for p = 0, 4095 do bn[p + 1] = p % 16 end
r = mp.reorder(big, {nodes = bn})
is_perm(r, 4096)
assert(r.before.cross_node == 8064 and r.after.cross_node == 768, tostring(r))

-- the machine this job runs on (ctest: one host)
local mc = mp.machine()
assert(mc.size == P and #mc.nodes == P and #mc.numa == P and #mc.cpus == P)
assert(mc.nnodes == 1 and mc.nodes[P] == 0, tostring(mc))
for i = 1, P do assert(mc.numa[i] >= -1 and mc.cpus[i] >= -1) end
assert(tostring(mc):find("^mp.machine: " .. P .. " ranks? on 1 node"), tostring(mc))
r = mp.reorder(mp.cart({P}, {periodic = true}))   -- default: mp.machine()
assert(not r.changed and r.after.cross_node == 0)

-- errors name the function, the argument and the rank
local function err(pat, f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok and e:find(pat, 1, true), tostring(e))
end
local pre = "bad argument #%d to 'mp.reorder' ([rank 0/" .. P .. "] "
err(pre:format(1) .. "traffic expected", mp.reorder, "x")
err(pre:format(2) .. "nodes has 3 entries, the traffic 8 slots", mp.reorder, ring, {nodes = {0, 1, 0}})
err(pre:format(2) .. "nodes[2] must be an integer 0 or more", mp.reorder, grid, {nodes = {0, -1, 0, 1, 0, 1, 0, 1}})
err(pre:format(1) .. "an n x n traffic matrix expected", mp.reorder, mp.array("f64", 2, 3), {nodes = {0, 1}})
err(pre:format(1) .. "traffic[1][2] must be a finite number 0 or more", mp.reorder, {{0, -1}, {0, 0}}, {nodes = {0, 1}})
err(pre:format(1) .. "row 2 of the traffic matrix", mp.reorder, {{0, 1}, {0}}, {nodes = {0, 1}})
err(pre:format(1) .. "the traffic has " .. (P + 1) .. " slots but the machine " .. P .. " ranks",
    mp.reorder, mp.cart({P + 1}))
err(pre:format(2) .. "bytes is for a topology", mp.reorder, m, {nodes = alt8, bytes = 2})
err(pre:format(2) .. "bytes must be a finite number", mp.reorder, ring, {nodes = alt8, bytes = -1})
err(pre:format(2) .. "numa goes with nodes", mp.reorder, ring, {numa = alt8})
err(pre:format(1) .. "an n x n traffic matrix expected", mp.reorder, mp.array("f64", 0, 0), {nodes = {}})

-- on every rank, the same mapping from the same inputs; applied, the relabelled
-- communicator's rank k is the process the mapping names, and neighbours over it
-- cross nodes as reported (the model's nodes; the crossing is measured by a
-- neighbourhood collective on the new communicator)
local palt = {}
for p = 1, P do palt[p] = (p - 1) % 2 end
local R = mp.reorder(mp.cart({P}, {periodic = true}), {nodes = palt})
mp.exec(function()
  local t = mp.cart({P}, {periodic = true})   -- a topology is a userdata: made on each rank
  local mine = mp.reorder(t, {nodes = palt})
  local all = mp.allgather(table.concat(mine.ranks, " "))
  for i = 2, #all do assert(all[i] == all[1], "the same mapping on every rank") end
  assert(all[1] == table.concat(R.ranks, " "))
  local function measured(comm)
    local nb = t:neighbor_allgather(mp.rank, comm)
    local c = 0
    for _, w in ipairs(nb) do
      if w and palt[w + 1] ~= palt[mp.rank + 1] then c = c + 1 end
    end
    return comm:allreduce(c, "sum")
  end
  local c = mp.world:reorder(R)             -- R travelled as an upvalue, metatable too
  assert(c.size == P and c.rank == R.new_rank[mp.rank + 1])
  local who = c:allgather(mp.rank)
  for k = 1, P do assert(who[k] == R.ranks[k], "rank k of the new communicator") end
  local wr = c:ranks()
  for k = 1, P do assert(wr[k] == R.ranks[k]) end
  assert(measured(mp.world) == R.before.cross_node and measured(c) == R.after.cross_node)
  local c2 = R:apply()                      -- the same through the result
  assert(c2.rank == c.rank)
  local c3 = mp.world:reorder(R.ranks)      -- a plain list of ranks
  assert(c3.rank == c.rank)
  -- a sub-communicator: reorder its own ranks
  local half = mp.world:split(mp.rank % 2)
  local rev = {}
  for k = 1, half.size do rev[k] = half.size - k end
  local h = half:reorder(rev)
  assert(h.rank == half.size - 1 - half.rank and h:allgather(mp.rank)[1] == half:allgather(mp.rank)[half.size])
  -- errors
  local ok, e = pcall(mp.world.reorder, mp.world, {0, 0})
  assert(not ok and e:find("bad argument #1 to 'mp.Comm.reorder' ([rank " .. mp.rank .. "/" .. P .. "]", 1, true), e)
  if P >= 2 then
    ok, e = pcall(mp.world.reorder, mp.world, {ranks = {0}})
    assert(not ok and e:find("the mapping is for 1 ranks, the communicator has " .. P, 1, true), e)
  end
end)
if P >= 4 then assert(R.changed and R.after.cross_node < R.before.cross_node, tostring(R)) end

-- traffic from a trace: each rank sends 4000 bytes to rank (r + P/2) mod P; with the
-- first half of the ranks on node 0 and the rest on node 1 all of it crosses; the
-- reordering puts each pair on one node (at 4 and 8 ranks; at 2 the pair cannot)
if P % 2 == 0 then
  local file = os.tmpname()
  mp.trace.start{file = file}
  mp.exec(function()
    local to, from = (mp.rank + P // 2) % P, (mp.rank - P // 2) % P
    mp.send(to, string.rep("x", 4000))
    mp.recv(from)
  end)
  mp.trace.stop()
  os.remove(file)
  local M = mp.trace.matrix{by = "bytes", kind = "p2p"}
  local halves = {}
  for p = 1, P do halves[p] = p <= P // 2 and 0 or 1 end
  local T = mp.reorder(M, {nodes = halves})
  is_perm(T, P)
  assert(T.before.cross_node == T.before.total and T.before.total > 4000 * P, tostring(T))
  if P >= 4 then
    assert(T.after.cross_node == 0 and T.changed, tostring(T))
  else
    assert(not T.changed)
  end
  mp.exec(function()
    local c = mp.world:reorder(T)
    assert(c:allgather(mp.rank)[1] == T.ranks[1])
  end)
end
-- a distributed graph knows only its own rank's edges: an argument error
mp.exec(function()
  local dg = mp.dist_graph({(mp.rank + 1) % mp.size})
  local ok, e = pcall(mp.reorder, dg)
  assert(not ok and e:find("bad argument #1 to 'mp.reorder' ([rank " .. mp.rank, 1, true)
         and e:find("a distributed graph knows only rank " .. mp.rank .. "'s edges", 1, true),
         tostring(e))
end)
print("dist_reorder ok")

