-- SPDX-License-Identifier: MIT
-- mp.mpi's collectives, communicator calls and ops under MPI's names, over
-- mp's collectives (coll/): the semantics match, so each is a call of the
-- communicator's method; comm defaults to mp.world (MPI_COMM_WORLD).
local mpi, mp = ...
local world = mp.world

mpi.COMM_WORLD = world
mpi.SUM, mpi.PROD, mpi.MIN, mpi.MAX = "sum", "prod", "min", "max"
mpi.LAND, mpi.LOR, mpi.BAND, mpi.BOR = "land", "lor", "band", "bor"
-- MAXLOC/MINLOC reduce pairs {value, index}: the extreme value, the lowest
-- index among equals (MPI's rule)
function mpi.MAXLOC(a, b)
  if a[1] > b[1] or (a[1] == b[1] and a[2] <= b[2]) then return {a[1], a[2]} end
  return {b[1], b[2]}
end
function mpi.MINLOC(a, b)
  if a[1] < b[1] or (a[1] == b[1] and a[2] <= b[2]) then return {a[1], a[2]} end
  return {b[1], b[2]}
end

function mpi.Comm_rank(comm) return (comm or world).rank end
function mpi.Comm_size(comm) return (comm or world).size end
function mpi.Comm_split(comm, color, key)
  if color == mpi.UNDEFINED then color = nil end
  return (comm or world):split(color, key)
end
function mpi.Comm_dup(comm) return (comm or world):dup() end

function mpi.Barrier(comm) (comm or world):barrier() end
function mpi.Bcast(v, root, comm) return (comm or world):bcast(v, root or 0) end
function mpi.Reduce(v, op, root, comm) return (comm or world):reduce(v, op, root or 0) end
function mpi.Allreduce(v, op, comm) return (comm or world):allreduce(v, op) end
function mpi.Gather(v, root, comm) return (comm or world):gather(v, root or 0) end
function mpi.Scatter(t, root, comm) return (comm or world):scatter(t, root or 0) end
function mpi.Allgather(v, comm) return (comm or world):allgather(v) end
function mpi.Alltoall(t, comm) return (comm or world):alltoall(t) end
function mpi.Scan(v, op, comm) return (comm or world):scan(v, op) end

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
  comm = comm or world
  local f = type(op) == "function" and op or nil
  local all = comm:allgather(v)
  if comm.rank == 0 then return nil end
  local acc = all[1]
  for r = 2, comm.rank do
    acc = f and f(acc, all[r]) or fold(acc, all[r], op)
  end
  return acc
end

-- reduce a (size * k elements: a table or a 1-D mp.Array), keep block rank+1
function mpi.Reduce_scatter_block(a, op, comm)
  comm = comm or world
  local n, size = #a, comm.size
  if n % size ~= 0 then
    error(("bad argument #1 to 'mp.mpi.Reduce_scatter_block' ([rank %d/%d] %d elements do not " ..
           "split into %d equal blocks)"):format(mp.rank, mp.size, n, size), 2)
  end
  local all, k = comm:allreduce(a, op), n // size
  local lo = comm.rank * k
  if type(all) == "table" then return table.move(all, lo + 1, lo + k, 1, {}) end
  local out = mp.array(all.dtype, k)
  for i = 1, k do out[i] = all[lo + i] end
  return out
end
