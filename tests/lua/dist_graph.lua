-- ranks: 1 2 3 4 5 8 20
-- SPDX-License-Identifier: MIT
-- Graph topologies (mp.graph, mp.dist_graph) and topologies attached to communicators:
-- rings, stars, random graphs (fixed seed), a rank that is the neighbour in two slots,
-- self-loops, weights. Neighbours and sources agree with the edge list (and the two
-- constructors with each other), distances with a BFS / Floyd-Warshall done here,
-- in-neighbour discovery with the global graph, neighbourhood collectives value by value
-- (tables, strings, booleans, mp.Array), on mp.world and on a sub-communicator, through
-- t:neighbor_X(v, comm) and comm:with_topology(t):neighbor_X(v); argument errors; a fault
-- inside a neighbour collective and inside discovery aborts the task, and the next works.

-- the edge lists, as {from, to [, w]}, the same on every rank
local function graphs(n)
  local ring, star, double, self, rnd, wtd = {}, {}, {}, {}, {}, {}
  for r = 0, n - 1 do ring[#ring + 1] = {r, (r + 1) % n} end
  for r = 1, n - 1 do star[#star + 1] = {0, r}; star[#star + 1] = {r, 0} end
  for r = 0, n - 1 do -- r sends twice to r+1 and once to r-1: r+1 is in two slots
    double[#double + 1] = {r, (r + 1) % n}
    double[#double + 1] = {r, (r - 1) % n}
    double[#double + 1] = {r, (r + 1) % n}
  end
  for r = 0, n - 1 do self[#self + 1] = {r, r}; self[#self + 1] = {r, (r * 7 + 3) % n}; self[#self + 1] = {r, r} end
  local seed = 12345 -- an LCG: the same graph on every rank and every Lua
  local function rand(k) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % k end
  for r = 0, n - 1 do
    for _ = 1, rand(4) do rnd[#rnd + 1] = {r, rand(n)} end
  end
  for r = 0, n - 1 do
    for _ = 1, 1 + rand(3) do wtd[#wtd + 1] = {r, rand(n), rand(10)} end
  end
  -- a list, not a table by name: pairs' order may differ from rank to rank
  local mixed = {} -- only rank 0 gives weights: the graph is weighted, the others weigh 1
  for r = 0, n - 1 do mixed[#mixed + 1] = {r, (r + 1) % n, r == 0 and 5 or nil} end
  return {{"mixed", mixed}, {"ring", ring}, {"star", star}, {"double", double}, {"self", self}, {"random", rnd},
          {"weighted", wtd}}
end

-- out-lists and in-lists from an edge list, as mp.graph documents them
local function lists(n, edges)
  local out, outw, inn, inw = {}, {}, {}, {}
  for r = 0, n - 1 do out[r], outw[r], inn[r], inw[r] = {}, {}, {}, {} end
  for _, e in ipairs(edges) do
    table.insert(out[e[1]], e[2]); table.insert(outw[e[1]], e[3] or 1)
  end
  for s = 0, n - 1 do
    for k, d in ipairs(out[s]) do table.insert(inn[d], s); table.insert(inw[d], outw[s][k]) end
  end
  return out, outw, inn, inw
end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

local function adjacency(n, edges) -- {[0] = {...}, ...}, with {to =, w =} when weighted
  local adj = {}
  for _, e in ipairs(edges) do
    adj[e[1]] = adj[e[1]] or {}
    table.insert(adj[e[1]], e[3] and {to = e[2], w = e[3]} or e[2])
  end
  return adj
end

local function check_values(n, edges)
  local g = mp.graph(n, edges)
  local g2 = mp.graph(adjacency(n, edges), {nranks = n})
  local out, outw, inn, inw = lists(n, edges)
  assert(g.nranks == n and g.nedges == #edges and not g.distributed)
  local weighted = false
  for _, e in ipairs(edges) do if e[3] then weighted = true end end
  assert(g.weighted == weighted and g2.weighted == weighted)
  for r = 0, n - 1 do
    for _, t in ipairs({g, g2}) do
      assert(same(t:neighbors(r), out[r]) and same(t:sources(r), inn[r]))
      local o, i = t:degree(r)
      assert(o == #out[r] and i == #inn[r])
      local ow, iw = t:weights(r)
      assert(same(ow, outw[r]) and same(iw, inw[r]))
    end
  end
  -- distances: Floyd-Warshall here (hops, or weights)
  local D = {}
  for a = 0, n - 1 do D[a] = {}; for b = 0, n - 1 do D[a][b] = a == b and 0 or math.huge end end
  for a = 0, n - 1 do
    for k, b in ipairs(out[a]) do
      local w = weighted and outw[a][k] or 1
      if w < D[a][b] then D[a][b] = w end
    end
  end
  for k = 0, n - 1 do for a = 0, n - 1 do for b = 0, n - 1 do
    if D[a][k] + D[k][b] < D[a][b] then D[a][b] = D[a][k] + D[k][b] end
  end end end
  for a = 0, n - 1 do for b = 0, n - 1 do
    local d = g:distance(a, b)
    if D[a][b] == math.huge then assert(d == nil, "no path")
    else assert(d == D[a][b], ("distance %d -> %d: %s, want %s"):format(a, b, tostring(d), D[a][b])) end
  end end
  return g, out, inn
end

-- neighbourhood collectives over comm with graph g; the expected values from the lists
local function check_colls(g, comm, out, inn, via_attach)
  local me = comm.rank
  local c = via_attach and comm:with_topology(g) or nil
  if c then assert(c:topology() == g and c.size == comm.size and c.rank == me) end
  local function ag(v) if c then return c:neighbor_allgather(v) end return g:neighbor_allgather(v, comm) end
  local function a2a(l) if c then return c:neighbor_alltoall(l) end return g:neighbor_alltoall(l, comm) end
  -- allgather: a table, a string, a boolean, an array
  local got = ag({rank = me, s = "r" .. me, nested = {me, {me * 2}}})
  assert(#got == #inn[me])
  for j, s in ipairs(inn[me]) do
    local v = got[j]
    assert(v.rank == s and v.s == "r" .. s and v.nested[1] == s and v.nested[2][1] == 2 * s)
  end
  local a = mp.array("f64", 5)
  for i = 1, 5 do a[i] = me * 100 + i end
  got = ag(a)
  for j, s in ipairs(inn[me]) do
    for i = 1, 5 do assert(got[j][i] == s * 100 + i) end
  end
  got = ag(me % 2 == 0)
  for j, s in ipairs(inn[me]) do assert(got[j] == (s % 2 == 0)) end
  -- alltoall: slot k of s goes to out[s][k]; my j-th in-slot from s is s's i-th slot to me
  local list = {}
  for k, d in ipairs(out[me]) do list[k] = {from = me, slot = k, to = d, arr = mp.array("i32", {k, me})} end
  got = a2a(list)
  assert(#got == #inn[me])
  local seen = {}
  for j, s in ipairs(inn[me]) do
    seen[s] = (seen[s] or 0) + 1
    local i, want = 0, nil
    for k, d in ipairs(out[s]) do
      if d == me then i = i + 1; if i == seen[s] then want = k; break end end
    end
    local v = got[j]
    assert(v.from == s and v.to == me and v.slot == want,
           ("slot %d: from %s slot %s, want %d slot %d"):format(j, tostring(v.from), tostring(v.slot), s, want))
    assert(v.arr[1] == want and v.arr[2] == s)
  end
end

local function body()
  local n = mp.size
  for _, ne in ipairs(graphs(n)) do
    local name, edges = ne[1], ne[2]
    local g, out, inn = check_values(n, edges)
    -- discovery: each rank gives its destinations only
    local mine = {}
    for _, e in ipairs(edges) do
      if e[1] == mp.rank then mine[#mine + 1] = e[3] and {to = e[2], w = e[3]} or e[2] end
    end
    local d = mp.dist_graph(mine)
    assert(d.distributed and d.rank == mp.rank and d.nranks == n and d.weighted == g.weighted, name)
    assert(same(d:neighbors(), g:neighbors()), name .. ": neighbours")
    assert(same(d:sources(), g:sources()), name .. ": sources " .. table.concat(d:sources(), ",") ..
           " want " .. table.concat(g:sources(), ","))
    local o1, i1 = d:degree()
    local o2, i2 = g:degree()
    assert(o1 == o2 and i1 == i2)
    local dw1, dw2 = d:weights()
    local gw1, gw2 = g:weights()
    assert(same(dw1, gw1) and same(dw2, gw2), name .. ": weights")
    check_colls(g, mp.world, out, inn, false)
    check_colls(g, mp.world, out, inn, true)
    check_colls(d, mp.world, out, inn, true)
  end
  -- a sub-communicator: graphs over its ranks
  local sub = mp.world:split(mp.rank % 2)
  for _, ne in ipairs(graphs(sub.size)) do
    local g, out, inn = check_values(sub.size, ne[2])
    check_colls(g, sub, out, inn, false)
    check_colls(g, sub, out, inn, true)
  end
  -- a Cartesian topology attached gives what t:neighbor_X(v, comm) gives
  local t = mp.cart(n, {ndim = 1, periodic = true})
  local c = mp.world:with_topology(t)
  local a, b = c:neighbor_allgather(mp.rank), t:neighbor_allgather(mp.rank)
  assert(same(a, b) and a[1] == (mp.rank - 1) % n and a[2] == (mp.rank + 1) % n)
  a = c:neighbor_alltoall({"down" .. mp.rank, "up" .. mp.rank})
  b = t:neighbor_alltoall({"down" .. mp.rank, "up" .. mp.rank})
  assert(same(a, b))
  local c2 = t:attach(mp.world)
  assert(c2:topology() == t and same(c2:neighbor_allgather(mp.rank), b and a and c:neighbor_allgather(mp.rank)))
  -- other traffic on an attached communicator is its own
  assert(c:allreduce(1, "sum") == n)
  return true
end

local function errs()
  local n = mp.size
  local function fails(want, f, ...)
    local ok, e = pcall(f, ...)
    assert(not ok, "no error, want " .. want)
    assert(tostring(e):find(want, 1, true), tostring(e) .. "\n  want: " .. want)
  end
  fails("bad argument #2 to 'mp.graph' ([rank " .. mp.rank .. "/" .. n .. "] edge destination: rank " .. n ..
        " out of range 0..", mp.graph, n, {{0, n}})
  fails("bad argument #1 to 'mp.graph'", mp.graph, {[0] = {-1}})
  fails("a weight must be a finite number >= 0", mp.graph, {[0] = {{to = 0, w = -1}}})
  fails("adjacency keys are ranks 0..n-1, got x", mp.graph, {x = {0}})
  fails("rank 3 has a list but nranks is 2", mp.graph, {[3] = {0}}, {nranks = 2})
  local g = mp.graph(n + 1, {})
  fails("bad argument #3 to 'mp.Graph.neighbor_allgather' ([rank " .. mp.rank .. "/" .. n ..
        "] the communicator has " .. n .. " ranks, the topology " .. (n + 1) .. ")", g.neighbor_allgather, g, 1)
  fails("bad argument #1 to 'mp.Comm.with_topology' ([rank " .. mp.rank .. "/" .. n .. "] the topology has " ..
        (n + 1) .. " ranks, the communicator " .. n .. ")", mp.world.with_topology, mp.world, g)
  fails("topology (mp.cart, mp.graph) expected, got number", mp.world.with_topology, mp.world, 3)
  fails("the communicator has no topology", mp.world.neighbor_allgather, mp.world, 1)
  local ring = mp.graph(n, {})
  fails("bad argument #2 to 'mp.Graph.neighbor_alltoall' ([rank " .. mp.rank .. "/" .. n ..
        "] a list of 0 values (one per destination slot) expected, got number)", ring.neighbor_alltoall, ring, 5)
  local c = mp.world:with_topology(mp.graph(n, {{0, 0}}))
  fails("bad argument #1 to 'mp.Comm.neighbor_alltoall'", c.neighbor_alltoall, c, {1, 2})
  fails("number of ranks 0 out of range", mp.graph, 0, {})
  local d = mp.dist_graph({})
  if n > 1 then
    fails("a distributed graph knows only rank " .. mp.rank .. "'s neighbourhood",
          d.neighbors, d, (mp.rank + 1) % n)
    -- ranks attaching different graphs: every rank raises, naming one that differs
    local e = {}
    if mp.rank == 0 then e = {{0, 1}} end
    fails("attaches another graph", mp.world.with_topology, mp.world, mp.graph(n, e))
    -- and the communicator still works
    assert(mp.allreduce(1, "sum") == n)
  end
  fails("a distributed graph knows only", d.distance, d, 0, 0)
  fails("bad argument #1 to 'mp.dist_graph'", mp.dist_graph, {n})
  return true
end

local function fault(b, mode)
  local n = mp.size
  local ring = mp.graph(n, (function() local e = {} for r = 0, n - 1 do e[#e + 1] = {r, (r + 1) % n} end return e end)())
  if mode == "collective" then
    if mp.rank == b then error("fault in a neighbour collective") end
    ring:neighbor_alltoall({mp.rank})
  elseif mode == "discovery" then
    if mp.rank == b then error("fault in discovery") end
    mp.dist_graph({(mp.rank + 1) % n, (mp.rank + 2) % n})
  elseif mode == "attached" then
    local c = mp.world:with_topology(ring)
    if mp.rank == b then error("fault on an attached communicator") end
    c:neighbor_allgather(mp.rank)
  end
  -- a clean run
  local d = mp.dist_graph({(mp.rank + 1) % n})
  local c = d:attach(mp.world)
  local got = c:neighbor_allgather(mp.rank)
  assert(#got == 1 and got[1] == (mp.rank - 1) % n)
  return true
end

assert(mp.exec(body) == true)
assert(mp.exec(errs) == true)
for k = 1, 3 do
  for _, mode in ipairs({"collective", "discovery", "attached"}) do
    local b = k % mp.size
    local ok, err = pcall(mp.exec, fault, b, mode)
    assert(not ok, mode .. ": the fault was not reported")
    assert(tostring(err):find("fault", 1, true), mode .. ": " .. tostring(err))
    assert(mp.exec(fault, -1, "none") == true)
  end
end
print(("dist_graph ok (%d ranks)"):format(mp.size))
