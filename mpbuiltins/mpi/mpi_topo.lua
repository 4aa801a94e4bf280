-- SPDX-License-Identifier: MIT
-- mp.mpi's process topologies under MPI's names (compiled in), over mp's
-- (topo/: mp.cart, mp.graph, mp.dist_graph, comm:with_topology and the
-- neighbourhood collectives): Cart_create, Cart_coords, Cart_rank,
-- Cart_shift, Cart_sub, Cart_get, Cartdim_get, Dims_create, Graph_create,
-- Graph_neighbors(_count), Graphdims_get, Dist_graph_create_adjacent,
-- Dist_graph_neighbors(_count), Topo_test, Neighbor_allgather,
-- Neighbor_alltoall.
--
-- MPI numbers a grid's ranks row-major (the last dimension fastest), mp's
-- first axis fastest: a Cartesian communicator carries the mp.Cart of the
-- reversed dimensions, whose coordinates reversed are MPI's. MPI orders a
-- graph's received values by the rank's own list (Graph_neighbors' order,
-- the sources given); mp by source rank: the calls below permute.
local mpi, mp, shared = ...
local argerr, fail, comm_of = shared.argerr, shared.fail, shared.comm_of

mpi.GRAPH, mpi.CART, mpi.DIST_GRAPH = 1, 2, 3 -- MPICH's values

-- what each topology communicator is, in MPI's terms (the communicator
-- keeps its mp topology itself; this table forgets it with it)
local topo = setmetatable({}, {__mode = "k"})

local function int(v, fname, arg, what, lo, hi)
  if math.type(v) ~= "integer" then
    argerr(fname, arg, "%s must be an integer, got %s", what,
           math.type(v) == "float" and "a float" or type(v))
  elseif v < lo or (hi and v > hi) then
    argerr(fname, arg, "%s %d out of range %d..%s", what, v, lo, hi or "")
  end
  return v
end

local function list(t, fname, arg, what)
  if type(t) ~= "table" then argerr(fname, arg, "%s expected (a list), got %s", what, type(t)) end
  return t
end

local function reversed(t, n)
  local r = {}
  for i = 1, n do r[i] = t[n + 1 - i] end
  return r
end

-- the communicator's topology of kind (nil: any), or an error
local function info_of(comm, fname, arg, kind)
  comm = comm_of(comm, fname, arg)
  local i = topo[comm]
  if not i or (kind and i.kind ~= kind) then
    argerr(fname, arg, "the communicator has no %s topology (make one with %s)",
           kind == "cart" and "Cartesian" or kind or "process",
           kind == "cart" and "Cart_create" or kind == "graph" and "Graph_create" or
           kind == "dist_graph" and "Dist_graph_create_adjacent" or
           "Cart_create, Graph_create or Dist_graph_create_adjacent")
  end
  return i, comm
end

-- the first n ranks of comm (nil on the others), comm itself when n is its size
local function first(comm, n, fname, what)
  if n > comm.size then
    argerr(fname, 2, "the %s has %d ranks, the communicator %d", what, n, comm.size)
  end
  if n == comm.size then return comm end
  return comm:split(comm.rank < n and 0 or nil)
end

-- perm[k]: the slot of mp's list b holding the k-th entry of a (the same
-- ranks, each as often: the i-th occurrence of a rank in a is its i-th in b)
local function permutation(a, b)
  local where, perm = {}, {}
  for j = 1, #b do
    local q = where[b[j]] or {}
    where[b[j]] = q
    q[#q + 1] = j
  end
  local used = {}
  for k = 1, #a do
    local q, u = where[a[k]], (used[a[k]] or 0) + 1
    if not q or not q[u] then return nil end
    used[a[k]], perm[k] = u, q[u]
  end
  if #a ~= #b then return nil end
  return perm
end

-- ---------------------------------------------------------------- Cartesian
-- MPI_Dims_create(nnodes, dims): dims' zeros filled (in place, and returned)
-- with mp.dims's grid, the free extents in non-increasing order as MPI's
function mpi.Dims_create(nnodes, dims)
  int(nnodes, "Dims_create", 1, "nnodes", 1)
  list(dims, "Dims_create", 2, "dims")
  local nd, fixed, free = #dims, 1, {}
  if nd < 1 or nd > 8 then argerr("Dims_create", 2, "1 to 8 dimensions expected, got %d", nd) end
  for i = 1, nd do
    int(dims[i], "Dims_create", 2, ("dims[%d]"):format(i), 0)
    if dims[i] > 0 then fixed = fixed * dims[i] else free[#free + 1] = i end
  end
  if nnodes % fixed ~= 0 then
    argerr("Dims_create", 2, "the fixed extents (product %d) do not divide nnodes %d", fixed,
           nnodes)
  end
  local got = mp.dims(nnodes, nd, dims)
  local ext = {}
  for k, i in ipairs(free) do ext[k] = got[i] end
  table.sort(ext, function(x, y) return x > y end)
  for k, i in ipairs(free) do dims[i] = ext[k] end
  return dims
end

-- MPI_Cart_create(comm, dims, periods[, reorder]): collective over comm;
-- ranks beyond the grid get nil (MPI_COMM_NULL). reorder true places the
-- grid on the machine with mp.reorder (rank k of the result is then the
-- process that mp.reorder gives slot k).
function mpi.Cart_create(comm, dims, periods, reorder)
  comm = comm_of(comm, "Cart_create", 1)
  list(dims, "Cart_create", 2, "dims")
  local nd, n = #dims, 1
  if nd < 1 or nd > 8 then argerr("Cart_create", 2, "1 to 8 dimensions expected, got %d", nd) end
  for i = 1, nd do n = n * int(dims[i], "Cart_create", 2, ("dims[%d]"):format(i), 1) end
  local per = {}
  if type(periods) == "boolean" or periods == nil then
    for i = 1, nd do per[i] = periods or false end
  else
    list(periods, "Cart_create", 3, "periods")
    if #periods ~= nd then
      argerr("Cart_create", 3, "one boolean per dimension (%d) expected, got %d", nd, #periods)
    end
    for i = 1, nd do per[i] = periods[i] and true or false end
  end
  local sub = first(comm, n, "Cart_create", "grid")
  if not sub then return nil end
  local t = mp.cart(reversed(dims, nd), {periodic = reversed(per, nd)})
  if reorder then sub = sub:reorder(mp.reorder(t, {comm = sub})) end
  local c = t:attach(sub)
  topo[c] = {kind = "cart", ndim = nd, dims = table.move(dims, 1, nd, 1, {}), periods = per,
             t = t}
  return c
end

function mpi.Cartdim_get(comm) return info_of(comm, "Cartdim_get", 1, "cart").ndim end

local function rank_arg(comm, r, fname, arg)
  if r == nil then return comm.rank end
  return int(r, fname, arg, "rank", 0, comm.size - 1)
end

-- MPI_Cart_coords(comm, rank): rank's coordinates, 0-based (rank: default this rank's)
function mpi.Cart_coords(comm, rank)
  local i, c = info_of(comm, "Cart_coords", 1, "cart")
  rank = rank_arg(c, rank, "Cart_coords", 2)
  if i.ndim == 0 then return {} end
  return reversed(i.t:coords(rank), i.ndim)
end

-- MPI_Cart_get(comm): dims, periods, this rank's coordinates
function mpi.Cart_get(comm)
  local i = info_of(comm, "Cart_get", 1, "cart")
  return table.move(i.dims, 1, i.ndim, 1, {}), table.move(i.periods, 1, i.ndim, 1, {}),
         mpi.Cart_coords(comm)
end

-- MPI_Cart_rank(comm, coords): the rank there; periodic dimensions wrap,
-- a coordinate off a non-periodic one is an error (as in MPI)
function mpi.Cart_rank(comm, coords)
  local i = info_of(comm, "Cart_rank", 1, "cart")
  list(coords, "Cart_rank", 2, "coords")
  if #coords ~= i.ndim then
    argerr("Cart_rank", 2, "%d coordinates expected, got %d", i.ndim, #coords)
  end
  for d = 1, i.ndim do
    local x = int(coords[d], "Cart_rank", 2, ("coords[%d]"):format(d), math.mininteger)
    if not i.periods[d] and (x < 0 or x >= i.dims[d]) then
      argerr("Cart_rank", 2, "coordinate %d of dimension %d is off the grid (0..%d, not periodic)",
             x, d - 1, i.dims[d] - 1)
    end
  end
  if i.ndim == 0 then return 0 end
  return i.t:rank(table.unpack(reversed(coords, i.ndim)))
end

-- MPI_Cart_shift(comm, direction, disp): source, dest (PROC_NULL off a
-- non-periodic edge); direction counts from 0 as in C
function mpi.Cart_shift(comm, direction, disp)
  local i, c = info_of(comm, "Cart_shift", 1, "cart")
  int(direction, "Cart_shift", 2, "direction", 0, i.ndim - 1)
  int(disp, "Cart_shift", 3, "disp", math.mininteger)
  local src, dst = i.t:shift(i.ndim - direction, disp, c.rank)
  return src or mpi.PROC_NULL, dst or mpi.PROC_NULL
end

-- MPI_Cart_sub(comm, remain_dims): collective; the grid of the dimensions
-- kept through this rank (ranks row-major in it, as MPI's)
function mpi.Cart_sub(comm, remain)
  local i, c = info_of(comm, "Cart_sub", 1, "cart")
  list(remain, "Cart_sub", 2, "remain_dims")
  if #remain ~= i.ndim then
    argerr("Cart_sub", 2, "one boolean per dimension (%d) expected, got %d", i.ndim, #remain)
  end
  local xs = mpi.Cart_coords(c)
  local color, key, dims, per = 0, 0, {}, {}
  for d = 1, i.ndim do
    if remain[d] then
      key = key * i.dims[d] + xs[d]
      dims[#dims + 1], per[#per + 1] = i.dims[d], i.periods[d]
    else
      color = color * i.dims[d] + xs[d]
    end
  end
  local sub = c:split(color, key)
  local nd = #dims
  if nd == 0 then -- MPI's zero-dimensional grid: this rank alone
    topo[sub] = {kind = "cart", ndim = 0, dims = {}, periods = {}}
    return sub
  end
  local t = mp.cart(reversed(dims, nd), {periodic = reversed(per, nd)})
  local s = t:attach(sub)
  topo[s] = {kind = "cart", ndim = nd, dims = dims, periods = per, t = t}
  return s
end

-- -------------------------------------------------------------------- graphs
-- MPI_Graph_create(comm, index, edges[, reorder]): collective; rank i's
-- neighbours are edges[index[i-1] + 1 .. index[i]] (C's cumulative index,
-- 0-based ranks); ranks beyond #index get nil. reorder is not applied.
function mpi.Graph_create(comm, index, edges)
  comm = comm_of(comm, "Graph_create", 1)
  list(index, "Graph_create", 2, "index")
  list(edges, "Graph_create", 3, "edges")
  local n, adj, at = #index, {}, 0
  if n < 1 then argerr("Graph_create", 2, "at least one node expected") end
  for r = 0, n - 1 do
    local upto = int(index[r + 1], "Graph_create", 2, ("index[%d]"):format(r + 1), at, #edges)
    local nb = {}
    for e = at + 1, upto do
      nb[#nb + 1] = int(edges[e], "Graph_create", 3, ("edges[%d]"):format(e), 0, n - 1)
    end
    adj[r], at = nb, upto
  end
  if at ~= #edges then
    argerr("Graph_create", 3, "%d edges, but index ends at %d", #edges, at)
  end
  local sub = first(comm, n, "Graph_create", "graph")
  if not sub then return nil end
  local g = mp.graph(adj, {nranks = n})
  local c = g:attach(sub)
  local nb = adj[c.rank]
  topo[c] = {kind = "graph", index = table.move(index, 1, n, 1, {}),
             edges = table.move(edges, 1, #edges, 1, {}), adj = adj, dests = nb,
             perm = permutation(nb, g:sources(c.rank))}
  return c
end

function mpi.Graphdims_get(comm)
  local i = info_of(comm, "Graphdims_get", 1, "graph")
  return #i.index, #i.edges
end

function mpi.Graph_get(comm)
  local i = info_of(comm, "Graph_get", 1, "graph")
  return table.move(i.index, 1, #i.index, 1, {}), table.move(i.edges, 1, #i.edges, 1, {})
end

function mpi.Graph_neighbors_count(comm, rank)
  local i, c = info_of(comm, "Graph_neighbors_count", 1, "graph")
  return #i.adj[rank_arg(c, rank, "Graph_neighbors_count", 2)]
end

function mpi.Graph_neighbors(comm, rank)
  local i, c = info_of(comm, "Graph_neighbors", 1, "graph")
  local nb = i.adj[rank_arg(c, rank, "Graph_neighbors", 2)]
  return table.move(nb, 1, #nb, 1, {})
end

local function weights(w, n, fname, arg, what)
  if w == nil then return nil end
  list(w, fname, arg, what)
  if #w ~= n then argerr(fname, arg, "%d weights expected (one per edge), got %d", n, #w) end
  for k = 1, n do
    local x = w[k]
    if type(x) ~= "number" or x < 0 or x ~= x or x == math.huge then
      argerr(fname, arg, "%s[%d] must be a finite number >= 0", what, k)
    end
  end
  return table.move(w, 1, n, 1, {})
end

-- MPI_Dist_graph_create_adjacent(comm, sources, sourceweights, destinations,
-- destweights[, reorder]): collective; each rank gives both its lists
-- (weights nil: MPI_UNWEIGHTED). The sources are checked against the
-- destinations the other ranks gave (one exchange, mp.dist_graph's).
-- reorder is not applied.
function mpi.Dist_graph_create_adjacent(comm, sources, sw, dests, dw)
  local fname = "Dist_graph_create_adjacent"
  comm = comm_of(comm, fname, 1)
  list(sources, fname, 2, "sources")
  list(dests, fname, 4, "destinations")
  for k = 1, #sources do
    int(sources[k], fname, 2, ("sources[%d]"):format(k), 0, comm.size - 1)
  end
  local out = {}
  for k = 1, #dests do
    out[k] = int(dests[k], fname, 4, ("destinations[%d]"):format(k), 0, comm.size - 1)
  end
  sw = weights(sw, #sources, fname, 3, "sourceweights")
  dw = weights(dw, #dests, fname, 5, "destweights")
  if dw then
    for k = 1, #dests do out[k] = {to = dests[k], w = dw[k]} end
  end
  local g = mp.dist_graph(out, {comm = comm})
  local found = g:sources()
  local perm = permutation(sources, found)
  if not perm then
    local count = {}
    for _, s in ipairs(found) do count[s] = (count[s] or 0) + 1 end
    for _, s in ipairs(sources) do count[s] = (count[s] or 0) - 1 end
    for s = 0, comm.size - 1 do
      if (count[s] or 0) ~= 0 then
        local given = 0
        for _, x in ipairs(sources) do given = given + (x == s and 1 or 0) end
        argerr(fname, 2, "rank %d lists this rank %d time(s) among its destinations, sources " ..
               "lists it %d time(s)", s, given + count[s], given)
      end
    end
  end
  local c = g:attach(comm)
  topo[c] = {kind = "dist_graph", sources = table.move(sources, 1, #sources, 1, {}), sw = sw,
             dests = table.move(dests, 1, #dests, 1, {}), dw = dw, perm = perm}
  return c
end

-- MPI_Dist_graph_neighbors_count(comm): indegree, outdegree, weighted
function mpi.Dist_graph_neighbors_count(comm)
  local i = info_of(comm, "Dist_graph_neighbors_count", 1, "dist_graph")
  return #i.sources, #i.dests, i.sw ~= nil or i.dw ~= nil
end

-- MPI_Dist_graph_neighbors(comm): sources, sourceweights, destinations,
-- destweights (the weights nil when not given)
function mpi.Dist_graph_neighbors(comm)
  local i = info_of(comm, "Dist_graph_neighbors", 1, "dist_graph")
  local function copy(t) return t and table.move(t, 1, #t, 1, {}) end
  return copy(i.sources), copy(i.sw), copy(i.dests), copy(i.dw)
end

-- MPI_Topo_test(comm): CART, GRAPH, DIST_GRAPH or UNDEFINED
function mpi.Topo_test(comm)
  local i = topo[comm_of(comm, "Topo_test", 1)]
  return i and mpi[i.kind:upper()] or mpi.UNDEFINED
end

-- ------------------------------------------------------- neighbourhood calls
-- MPI's slot k of a Cartesian neighbourhood in mp's list: dimension d's
-- pair (down, up) is mp's axis ndim - d's
local function cart_slot(ndim, k)
  local d, up = (k - 1) // 2, (k - 1) % 2
  return 2 * (ndim - 1 - d) + up + 1
end

local function need_perm(i, fname)
  if not i.perm then
    fail("%s: [rank %d/%d] the graph is not symmetric at this rank (the ranks that list it as " ..
         "a neighbour are not its neighbours): MPI allows neighbourhood collectives on a " ..
         "Graph_create graph only when it is", fname, mp.rank, mp.size)
  end
  return i.perm
end

-- MPI_Neighbor_allgather(v, comm): {v of in-neighbour 1, ...} in MPI's
-- order; false where a Cartesian neighbour is PROC_NULL
function mpi.Neighbor_allgather(v, comm)
  local i, c = info_of(comm, "Neighbor_allgather", 2)
  if i.kind == "cart" and i.ndim == 0 then return {} end
  local perm = i.kind ~= "cart" and need_perm(i, "Neighbor_allgather")
  local got, out = c:neighbor_allgather(v), {}
  if perm then
    for k = 1, #perm do out[k] = got[perm[k]] end
  else
    for k = 1, 2 * i.ndim do out[k] = got[cart_slot(i.ndim, k)] end
  end
  return out
end

-- MPI_Neighbor_alltoall(list, comm): list[k] to out-neighbour k; what each
-- in-neighbour sent this way, in MPI's order
function mpi.Neighbor_alltoall(t, comm)
  local i, c = info_of(comm, "Neighbor_alltoall", 2)
  list(t, "Neighbor_alltoall", 1, "list of values")
  local nout = i.kind == "cart" and 2 * i.ndim or #i.dests
  if #t ~= nout then
    argerr("Neighbor_alltoall", 1, "a list of %d values (one per out-neighbour) expected, got %d",
           nout, #t)
  end
  if nout == 0 and i.kind == "cart" then return {} end
  local perm = i.kind ~= "cart" and need_perm(i, "Neighbor_alltoall")
  local out = {}
  if not perm then
    local send = {}
    for k = 1, nout do send[cart_slot(i.ndim, k)] = t[k] end
    local got = c:neighbor_alltoall(send)
    for k = 1, nout do out[k] = got[cart_slot(i.ndim, k)] end
  else
    local got = c:neighbor_alltoall(t)
    for k = 1, #perm do out[k] = got[perm[k]] end
  end
  return out
end
