-- SPDX-License-Identifier: MIT
-- mp.mpi's collectives, communicator calls and ops under MPI's names, over
-- mp's collectives (coll/): the semantics match, so each is a call of the
-- communicator's method; comm defaults to mp.world (MPI_COMM_WORLD).
-- The methods are reached through call(method, name) (mpi_names.c): the
-- same C function, making its collective for the MPI call name, which its
-- errors, a mismatched member and a root check left for the task's end say.
local mpi, mp, call = ...
local world = mp.world

mpi.COMM_WORLD = world
mpi.SUM, mpi.PROD, mpi.MIN, mpi.MAX = "sum", "prod", "min", "max"
mpi.LAND, mpi.LOR, mpi.BAND, mpi.BOR = "land", "lor", "band", "bor"
-- MAXLOC/MINLOC reduce pairs {value, index}: the extreme value, the lowest
-- index among equals (MPI's rule)
-- (they may travel as ops: their checks use globals only, _ENV.mp the rank's)
function mpi.MAXLOC(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then
    local arg = type(a) ~= "table" and 1 or 2
    error(("bad argument #%d to 'mp.mpi.MAXLOC' ([rank %d/%d] pair {value, index} expected, got %s)")
          :format(arg, _ENV.mp.rank, _ENV.mp.size, type(arg == 1 and a or b)), 2)
  end
  if a[1] > b[1] or (a[1] == b[1] and a[2] <= b[2]) then return {a[1], a[2]} end
  return {b[1], b[2]}
end
function mpi.MINLOC(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then
    local arg = type(a) ~= "table" and 1 or 2
    error(("bad argument #%d to 'mp.mpi.MINLOC' ([rank %d/%d] pair {value, index} expected, got %s)")
          :format(arg, _ENV.mp.rank, _ENV.mp.size, type(arg == 1 and a or b)), 2)
  end
  if a[1] < b[1] or (a[1] == b[1] and a[2] <= b[2]) then return {a[1], a[2]} end
  return {b[1], b[2]}
end

-- Arguments are checked here, before mp's calls (which would name
-- themselves and count arguments their own way): errors name the MPI call,
-- its argument and the rank, raised without a position as the C calls' are.
local comm_mt = getmetatable(world)
local world_size, mtype = world.size, math.type -- kept: these checks are on every call's path
local ROOTS = {} -- the ranks of COMM_WORLD: a root checked by one lookup
for r = 0, world_size - 1 do ROOTS[r] = true end
local OPS = {sum = true, prod = true, min = true, max = true, land = true, lor = true,
             band = true, bor = true}

local function argerr(fname, arg, fmt, ...)
  error(("bad argument #%d to 'mp.mpi.%s' ([rank %d/%d] " .. fmt .. ")")
        :format(arg, fname, mp.rank, mp.size, ...), 0)
end

-- the communicator at arg (nil: COMM_WORLD)
local function comm_arg(c, fname, arg)
  if c == nil or c == world then return world end
  if getmetatable(c) ~= comm_mt then
    argerr(fname, arg, "communicator expected, got %s", type(c))
  end
  return c
end

-- the root at arg (nil: 0), a rank of comm
local function root_arg(r, comm, fname, arg)
  if r == nil then return 0 end
  local size = comm == world and world_size or comm.size
  if mtype(r) ~= "integer" then
    argerr(fname, arg, "root rank expected, got %s", type(r))
  elseif r < 0 or r >= size then
    argerr(fname, arg, "root %s out of range 0..%d", tostring(r), size - 1)
  end
  return r
end

-- the op at arg: mpi.SUM... or a function
local function op_arg(op, fname, arg)
  if not OPS[op] and type(op) ~= "function" then
    argerr(fname, arg, "op must be mpi.SUM, PROD, MIN, MAX, LAND, LOR, BAND, BOR, MAXLOC, " ..
           "MINLOC or a function, got %s", tostring(op))
  end
  return op
end

-- the list at arg: one value per member of comm
local function list_arg(t, comm, fname, arg)
  if type(t) ~= "table" then
    argerr(fname, arg, "a list of %d values (one per rank) expected, got %s", comm.size, type(t))
  elseif #t ~= comm.size then
    argerr(fname, arg, "a list of %d values (one per rank) expected, got %d", comm.size, #t)
  end
  return t
end

local split, dup = call("split", "mpi.Comm_split"), call("dup", "mpi.Comm_dup")
local bcast, gather = call("bcast", "mpi.Bcast"), call("gather", "mpi.Gather")
local scatter, barrier = call("scatter", "mpi.Scatter"), call("barrier", "mpi.Barrier")
local reduce, allreduce = call("reduce", "mpi.Reduce"), call("allreduce", "mpi.Allreduce")
local allgather, alltoall = call("allgather", "mpi.Allgather"), call("alltoall", "mpi.Alltoall")
local scan, exscan = call("scan", "mpi.Scan"), call("allgather", "mpi.Exscan")
local rsb = call("allreduce", "mpi.Reduce_scatter_block")

function mpi.Comm_rank(comm) return comm_arg(comm, "Comm_rank", 1).rank end
function mpi.Comm_size(comm) return comm_arg(comm, "Comm_size", 1).size end
function mpi.Comm_split(comm, color, key)
  comm = comm_arg(comm, "Comm_split", 1)
  if color == mpi.UNDEFINED then color = nil end
  if color ~= nil and math.type(color) ~= "integer" then
    argerr("Comm_split", 2, "color must be an integer or mpi.UNDEFINED, got %s", type(color))
  end
  if key ~= nil and math.type(key) ~= "integer" then
    argerr("Comm_split", 3, "key must be an integer, got %s", type(key))
  end
  return split(comm, color, key)
end
function mpi.Comm_dup(comm) return dup(comm_arg(comm, "Comm_dup", 1)) end

-- Each call takes a fast path for the usual arguments (COMM_WORLD, a named
-- op, a root in range) and checks them one by one otherwise.
-- mpi.X(v, root[, comm]) over comm:method(v, root) (Bcast, Gather)
local function rooted(f, fname)
  return function(v, root, comm)
    if comm == nil and ROOTS[root] then return f(world, v, root) end
    comm = comm_arg(comm, fname, 3)
    return f(comm, v, root_arg(root, comm, fname, 2))
  end
end
mpi.Bcast, mpi.Gather = rooted(bcast, "Bcast"), rooted(gather, "Gather")
function mpi.Barrier(comm)
  if comm == nil then return barrier(world) end
  barrier(comm_arg(comm, "Barrier", 1))
end
function mpi.Reduce(v, op, root, comm)
  if comm == nil and OPS[op] and ROOTS[root] then
    return reduce(world, v, op, root)
  end
  comm = comm_arg(comm, "Reduce", 4)
  return reduce(comm, v, op_arg(op, "Reduce", 2), root_arg(root, comm, "Reduce", 3))
end
function mpi.Allreduce(v, op, comm)
  if comm == nil and OPS[op] then return allreduce(world, v, op) end
  return allreduce(comm_arg(comm, "Allreduce", 3), v, op_arg(op, "Allreduce", 2))
end
function mpi.Scatter(t, root, comm)
  comm = comm_arg(comm, "Scatter", 3)
  root = root_arg(root, comm, "Scatter", 2)
  if comm.rank == root then list_arg(t, comm, "Scatter", 1) end
  return scatter(comm, t, root)
end
function mpi.Allgather(v, comm) return allgather(comm_arg(comm, "Allgather", 2), v) end
function mpi.Alltoall(t, comm)
  comm = comm_arg(comm, "Alltoall", 2)
  return alltoall(comm, list_arg(t, comm, "Alltoall", 1))
end
function mpi.Scan(v, op, comm)
  if comm == nil and OPS[op] then return scan(world, v, op) end
  return scan(comm_arg(comm, "Scan", 3), v, op_arg(op, "Scan", 2))
end

local named = {
  sum = function(a, b) return a + b end, prod = function(a, b) return a * b end,
  min = function(a, b) return (a < b or a ~= a) and a or b end,
  max = function(a, b) return (a > b or a ~= a) and a or b end,
  land = function(a, b) return a and b end, lor = function(a, b) return a or b end,
  band = function(a, b) return a & b end, bor = function(a, b) return a | b end,
}

-- a op b for a named op: numbers, booleans, typed arrays element-wise,
-- tables field by field (as mp's reductions)
local function fold(a, b, op)
  local f = named[op]
  if not f then
    error(("bad argument #2 to 'mp.mpi.Exscan' ([rank %d/%d] unknown op %s)")
          :format(mp.rank, mp.size, tostring(op)), 3)
  end
  if type(a) == "table" then
    local t = {}
    for k, x in pairs(a) do t[k] = fold(x, b[k], op) end
    return t
  elseif type(a) == "userdata" and a.dtype then
    local out = mp.array(a.dtype, a)
    for i = 1, #a do out[i] = f(a[i], b[i]) end
    return out
  end
  return f(a, b)
end

-- the values of ranks 0..rank-1 folded left to right; nil on rank 0
-- (over an allgather: any op, its order that of the ranks)
function mpi.Exscan(v, op, comm)
  comm = comm_arg(comm, "Exscan", 3)
  op_arg(op, "Exscan", 2)
  local f = type(op) == "function" and op or nil
  local all = exscan(comm, v)
  if comm.rank == 0 then return nil end
  local acc = all[1]
  for r = 2, comm.rank do
    acc = f and f(acc, all[r]) or fold(acc, all[r], op)
  end
  return acc
end

-- reduce a (size * k elements: a table or a 1-D mp.Array), keep block rank+1
function mpi.Reduce_scatter_block(a, op, comm)
  comm = comm_arg(comm, "Reduce_scatter_block", 3)
  op_arg(op, "Reduce_scatter_block", 2)
  local n, size = #a, comm.size
  if n % size ~= 0 then
    error(("bad argument #1 to 'mp.mpi.Reduce_scatter_block' ([rank %d/%d] %d elements do not " ..
           "split into %d equal blocks)"):format(mp.rank, mp.size, n, size), 2)
  end
  local all, k = rsb(comm, a, op), n // size
  local lo = comm.rank * k
  if type(all) == "table" then return table.move(all, lo + 1, lo + k, 1, {}) end
  local out = mp.array(all.dtype, k)
  for i = 1, k do out[i] = all[lo + i] end
  return out
end

-- what mpi_vcoll.lua shares
return {argerr = argerr, comm_arg = comm_arg, root_arg = root_arg, op_arg = op_arg, call = call}
