-- ranks: 1 2 3 4 5 8 20  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's process topologies against a serial computation in MPI's
-- conventions (row-major grids, 0-based directions, PROC_NULL off the
-- edges, received values in the order of the rank's own lists):
-- Dims_create, Cart_create (and ranks beyond the grid), Cart_coords,
-- Cart_rank, Cart_shift, Cart_get, Cart_sub, Graph_create, Graph_neighbors,
-- Dist_graph_create_adjacent (weighted), Topo_test, Neighbor_allgather and
-- Neighbor_alltoall; bad input, inconsistent graphs, and a fault on one
-- rank while the others are in each blocking call.
package.path = "lib/?.lua;" .. package.path
local checks = require("mpi_checks")
local fails, same = checks.fails, checks.same

-- Dims_create is local: MPI's grids, the free extents non-increasing
do
  local mpi = mp.mpi
  assert(same(mpi.Dims_create(12, {0, 0}), {4, 3}))
  assert(same(mpi.Dims_create(6, {0, 3, 0}), {2, 3, 1}))
  assert(same(mpi.Dims_create(7, {0, 0}), {7, 1}))
  assert(same(mpi.Dims_create(24, {0, 0, 0}), {4, 3, 2}))
  local d = {0, 2}
  assert(mpi.Dims_create(8, d) == d and same(d, {4, 2}), "dims filled in place")
  for n = 1, 64 do
    local g = mpi.Dims_create(n, {0, 0, 0})
    assert(g[1] * g[2] * g[3] == n and g[1] >= g[2] and g[2] >= g[3])
  end
  fails("bad argument #2 to 'mp.mpi.Dims_create' %(%[rank 0/%d+%] the fixed extents %(product " ..
        "2%) do not divide nnodes 7%)", mpi.Dims_create, 7, {2, 0})
  fails("bad argument #1 to 'mp.mpi.Dims_create' %(%[rank 0/%d+%] nnodes 0 out of range",
        mpi.Dims_create, 0, {0})
end

local r = mp.exec(function()
  local mpi = mp.mpi
  local me, n = mpi.Comm_rank(), mpi.Comm_size()
  local R = "%[rank " .. me .. "/" .. n .. "%]"
  assert(mpi.Topo_test(mpi.COMM_WORLD) == mpi.UNDEFINED)

  -- a 2-D grid, periodic along dimension 0
  local dims = mpi.Dims_create(n, {0, 0})
  local p, q = dims[1], dims[2]
  local cart = mpi.Cart_create(mpi.COMM_WORLD, dims, {true, false})
  assert(mpi.Topo_test(cart) == mpi.CART and mpi.Cartdim_get(cart) == 2)
  local me2 = mpi.Comm_rank(cart)
  local x, y = me2 // q, me2 % q -- row-major: the last dimension fastest
  assert(same(mpi.Cart_coords(cart), {x, y}))
  for rr = 0, n - 1 do
    assert(same(mpi.Cart_coords(cart, rr), {rr // q, rr % q}))
    assert(mpi.Cart_rank(cart, {rr // q, rr % q}) == rr)
  end
  assert(mpi.Cart_rank(cart, {x + p, y}) == me2, "a periodic dimension wraps")
  local cd, cp, cc = mpi.Cart_get(cart)
  assert(same(cd, dims) and cp[1] == true and cp[2] == false and same(cc, {x, y}))
  local function at(i, j) -- the rank at (i, j), PROC_NULL off the non-periodic edge
    if j < 0 or j >= q then return mpi.PROC_NULL end
    return (i % p) * q + j
  end
  for _, disp in ipairs({1, -1, 2}) do
    local s0, d0 = mpi.Cart_shift(cart, 0, disp)
    assert(s0 == at(x - disp, y) and d0 == at(x + disp, y), "shift along 0")
    local s1, d1 = mpi.Cart_shift(cart, 1, disp)
    assert(s1 == at(x, y - disp) and d1 == at(x, y + disp), "shift along 1")
  end
  local nb = {at(x - 1, y), at(x + 1, y), at(x, y - 1), at(x, y + 1)}
  local got = mpi.Neighbor_allgather({r = me2}, cart)
  assert(#got == 4)
  for k = 1, 4 do
    if nb[k] == mpi.PROC_NULL then assert(got[k] == false)
    else assert(got[k].r == nb[k], "allgather slot " .. k) end
  end
  local sent = {}
  for k = 1, 4 do sent[k] = {from = me2, slot = k} end
  local back = mpi.Neighbor_alltoall(sent, cart)
  for k = 1, 4 do
    if nb[k] == mpi.PROC_NULL then assert(back[k] == false)
    else
      -- the neighbour below sends me its "up" item, the one above its "down" one
      local want = k % 2 == 1 and k + 1 or k - 1
      assert(back[k].from == nb[k] and back[k].slot == want, "alltoall slot " .. k)
    end
  end

  -- reorder: the grid placed on the machine by mp.reorder, still a grid of every rank
  local ro = mpi.Cart_create(mpi.COMM_WORLD, dims, {true, false}, true)
  local rx = mpi.Cart_coords(ro)
  assert(mpi.Cart_rank(ro, rx) == mpi.Comm_rank(ro) and mpi.Comm_size(ro) == n)
  assert(mpi.Allreduce(mpi.Comm_rank(ro), mpi.SUM, ro) == n * (n - 1) // 2)
  assert(#mpi.Neighbor_allgather(1, ro) == 4)

  -- a grid of fewer ranks than the communicator: the others get nil
  local line = mpi.Cart_create(mpi.COMM_WORLD, {math.max(n - 1, 1)}, false)
  assert((line == nil) == (n > 1 and me == n - 1))
  if line then
    local s, d = mpi.Cart_shift(line, 0, 1)
    assert(s == (me > 0 and me - 1 or mpi.PROC_NULL))
    assert(d == (me < mpi.Comm_size(line) - 1 and me + 1 or mpi.PROC_NULL))
  end

  -- Cart_sub of a 3-D grid: the rows along dimensions 0 and 2
  local d3 = mpi.Dims_create(n, {0, 0, 0})
  local c3 = mpi.Cart_create(mpi.COMM_WORLD, d3, {false, true, false})
  local xs = mpi.Cart_coords(c3)
  local sub = mpi.Cart_sub(c3, {true, false, true})
  assert(mpi.Comm_size(sub) == d3[1] * d3[3])
  assert(mpi.Comm_rank(sub) == xs[1] * d3[3] + xs[3])
  assert(same(mpi.Cart_coords(sub), {xs[1], xs[3]}))
  local sd, sp = mpi.Cart_get(sub)
  assert(same(sd, {d3[1], d3[3]}) and sp[1] == false and sp[2] == false)
  assert(mpi.Allreduce(1, mpi.SUM, sub) == d3[1] * d3[3])
  local mid = mpi.Cart_sub(c3, {false, true, false})
  local ms, md = mpi.Cart_shift(mid, 0, 1)
  assert(ms == (xs[2] - 1) % d3[2] and md == (xs[2] + 1) % d3[2], "periodic kept")
  local point = mpi.Cart_sub(c3, {false, false, false})
  assert(mpi.Comm_size(point) == 1 and mpi.Cartdim_get(point) == 0)
  assert(#mpi.Neighbor_allgather(me, point) == 0)

  -- Graph_create: a ring, each rank listing {right, left} (symmetric)
  local index, edges = {}, {}
  for rr = 0, n - 1 do
    edges[#edges + 1] = (rr + 1) % n
    edges[#edges + 1] = (rr - 1) % n
    index[#index + 1] = #edges
  end
  local g = mpi.Graph_create(mpi.COMM_WORLD, index, edges, false)
  assert(mpi.Topo_test(g) == mpi.GRAPH)
  local right, left = (me + 1) % n, (me - 1) % n
  assert(same(mpi.Graph_neighbors(g), {right, left}) and mpi.Graph_neighbors_count(g, 0) == 2)
  local nn, ne = mpi.Graphdims_get(g)
  assert(nn == n and ne == 2 * n)
  local gi, ge = mpi.Graph_get(g)
  assert(same(gi, index) and same(ge, edges))
  local gg = mpi.Neighbor_allgather(me, g)
  assert(gg[1] == right and gg[2] == left, "in Graph_neighbors' order")
  local ga = mpi.Neighbor_alltoall({"to right of " .. me, "to left of " .. me}, g)
  assert(n <= 2 or (ga[1] == "to left of " .. right and ga[2] == "to right of " .. left))
  -- a one-way ring is not symmetric: no neighbourhood collective on it
  if n >= 3 then
    local idx, one = {}, {}
    for rr = 0, n - 1 do one[rr + 1] = (rr + 1) % n; idx[rr + 1] = rr + 1 end
    local dg = mpi.Graph_create(mpi.COMM_WORLD, idx, one)
    fails("mp.mpi.Neighbor_allgather: " .. R .. " the graph is not symmetric at this rank",
          mpi.Neighbor_allgather, 1, dg)
  end

  -- Dist_graph_create_adjacent: sources {right, left} (not rank order), weighted
  local dgc = mpi.Dist_graph_create_adjacent(mpi.COMM_WORLD, {right, left}, {1, 2},
                                             {left, right}, {2, 1})
  assert(mpi.Topo_test(dgc) == mpi.DIST_GRAPH)
  local indeg, outdeg, weighted = mpi.Dist_graph_neighbors_count(dgc)
  assert(indeg == 2 and outdeg == 2 and weighted == true)
  local srcs, sw, dsts, dw = mpi.Dist_graph_neighbors(dgc)
  assert(same(srcs, {right, left}) and same(sw, {1, 2}) and same(dsts, {left, right}) and
         same(dw, {2, 1}))
  local dv = mpi.Neighbor_allgather(me * 10, dgc)
  assert(dv[1] == right * 10 and dv[2] == left * 10, "in the sources' order")
  local da = mpi.Neighbor_alltoall({"L" .. me, "R" .. me}, dgc)
  assert(n <= 2 or (da[1] == "L" .. right and da[2] == "R" .. left))

  -- bad input
  fails("bad argument #2 to 'mp.mpi.Cart_create' %(" .. R .. " dims%[1%] 0 out of range 1%.%.",
        mpi.Cart_create, mpi.COMM_WORLD, {0})
  fails("bad argument #2 to 'mp.mpi.Cart_create' %(" .. R .. " the grid has " .. (n + 1) ..
        " ranks, the communicator " .. n .. "%)", mpi.Cart_create, mpi.COMM_WORLD, {n + 1})
  fails("bad argument #3 to 'mp.mpi.Cart_create' %(" .. R .. " one boolean per dimension %(2%) " ..
        "expected, got 1%)", mpi.Cart_create, mpi.COMM_WORLD, dims, {true})
  fails("bad argument #2 to 'mp.mpi.Cart_shift' %(" .. R .. " direction 2 out of range 0%.%.1%)",
        mpi.Cart_shift, cart, 2, 1)
  fails("bad argument #2 to 'mp.mpi.Cart_rank' %(" .. R .. " coordinate %-1 of dimension 1 is " ..
        "off the grid", mpi.Cart_rank, cart, {0, -1})
  fails("bad argument #1 to 'mp.mpi.Cart_coords' %(" .. R .. " the communicator has no " ..
        "Cartesian topology %(make one with Cart_create%)%)", mpi.Cart_coords, g)
  fails("bad argument #2 to 'mp.mpi.Neighbor_allgather' %(" .. R .. " the communicator has no " ..
        "process topology", mpi.Neighbor_allgather, 1, mpi.COMM_WORLD)
  fails("bad argument #1 to 'mp.mpi.Neighbor_alltoall' %(" .. R .. " a list of 4 values %(one " ..
        "per out%-neighbour%) expected, got 3%)", mpi.Neighbor_alltoall, {1, 2, 3}, cart)
  fails("bad argument #3 to 'mp.mpi.Graph_create' %(" .. R .. " edges%[1%] " .. n ..
        " out of range", mpi.Graph_create, mpi.COMM_WORLD, {1}, {n})
  fails("bad argument #5 to 'mp.mpi.Dist_graph_create_adjacent' %(" .. R .. " 2 weights " ..
        "expected", mpi.Dist_graph_create_adjacent, mpi.COMM_WORLD, {}, nil, {0, 0}, {1})
  return "ok"
end)
assert(r == "ok")

-- sources that disagree with the others' destinations: an error naming them
local ok, err = pcall(mp.exec, function()
  local mpi = mp.mpi
  local n = mp.size
  local srcs = {(mp.rank - 1) % n}
  if mp.rank == 0 then srcs[2] = 0 end -- rank 0 claims a self-loop nobody sends
  return mpi.Dist_graph_create_adjacent(mpi.COMM_WORLD, srcs, nil, {(mp.rank + 1) % n}, nil)
end)
assert(not ok and tostring(err):find("bad argument #2 to 'mp.mpi.Dist_graph_create_adjacent' " ..
                                     "%(%[rank 0/%d+%] rank 0 lists this rank %d+ time%(s%) " ..
                                     "among its destinations, sources lists it %d time%(s%)"),
       tostring(err))

-- a fault on one rank while the others are in each blocking call; the next
-- task runs clean
local function body(bad, step)
  local mpi = mp.mpi
  local W, n, me = mpi.COMM_WORLD, mp.size, mp.rank
  local cart = step ~= "cart" and mpi.Cart_create(W, mpi.Dims_create(n, {0, 0}), {true, true})
  local ring = step == "gallgather" and
               mpi.Dist_graph_create_adjacent(W, {(me - 1) % n}, nil, {(me + 1) % n}, nil)
  if me == bad then error("fault at " .. bad .. " before " .. step) end
  if step == "cart" then mpi.Cart_create(W, {n}, {true})
  elseif step == "sub" then mpi.Cart_sub(cart, {true, false})
  elseif step == "graph" then
    local index = {}
    for r = 1, n do index[r] = r end
    local edges = {}
    for r = 0, n - 1 do edges[r + 1] = r end
    mpi.Graph_create(W, index, edges)
  elseif step == "dist" then
    mpi.Dist_graph_create_adjacent(W, {(me - 1) % n}, nil, {(me + 1) % n}, nil)
  elseif step == "allgather" then mpi.Neighbor_allgather(me, cart)
  elseif step == "alltoall" then mpi.Neighbor_alltoall({1, 2, 3, 4}, cart)
  elseif step == "gallgather" then mpi.Neighbor_allgather(me, ring)
  end
  return true
end
if mp.size >= 2 then
  for _, step in ipairs({"cart", "sub", "graph", "dist", "allgather", "alltoall",
                         "gallgather"}) do
    for _, bad in ipairs({0, mp.size - 1}) do
      ok, err = pcall(mp.exec, body, bad, step)
      assert(not ok and tostring(err):find("fault at " .. bad .. " before " .. step, 1, true),
             tostring(err))
      assert(mp.exec(function()
        local mpi = mp.mpi
        local c = mpi.Cart_create(mpi.COMM_WORLD, {mp.size}, {true})
        return #mpi.Neighbor_allgather(1, c)
      end) == 2)
    end
  end
end

-- a deadlock inside a call written over mp's (a rank that skips Cart_create)
-- is reported at the script's line, not inside mp.mpi's own Lua, and names
-- the MPI call, not mp's inside it
if mp.size >= 2 then
  local at = debug.getinfo(1, "l").currentline + 3
  ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    if mp.rank ~= 1 then mpi.Cart_create(mpi.COMM_WORLD, {mp.size}, {true}) end
  end)
  err = tostring(err) -- at 2 ranks: rank 0 would wait forever; more: a deadlock
  assert(not ok and (err:find("mpi%.Cart_create: %[rank 0/2%] would wait forever: rank 1 has " ..
                              "finished the task %(at [^ ]*mpi_topo%.lua:" .. at .. "%)") or
                     err:find("deadlock: ranks [%d,-]+ wait in mpi%.Cart_create from rank 1 " ..
                              "%(collective #%d+%) at [^ ]*mpi_topo%.lua:" .. at ..
                              ", rank 1 has finished the task")), err)
end
