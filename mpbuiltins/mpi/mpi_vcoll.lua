-- SPDX-License-Identifier: MIT
-- mp.mpi's v-collectives on mp.Array: Gatherv, Scatterv, Allgatherv,
-- Alltoallv, and Reduce_scatter. Counts and displacements count elements
-- and are lists indexed by rank + 1 (counts[r + 1] is rank r's), as the
-- lists the collectives return; a displacement is C's (0-based: element
-- displs[r + 1] + 1 of the array is rank r's first), and displs nil means
-- packed in rank order (C's usual displs). Arrays are taken flat, in
-- memory order. A received block is converted to the receiving array's
-- dtype with the storing rules (a value that does not fit is an error).
-- Built over mp's gather, scatter, allgather, alltoall and allreduce.
local mpi, mp, checks = ...
local comm_arg, root_arg, op_arg = checks.comm_arg, checks.root_arg, checks.op_arg
local call = checks.call -- mp's collectives as the MPI calls made of them (mpi_coll.lua)
local gatherv, scatterv = call("gather", "mpi.Gatherv"), call("scatter", "mpi.Scatterv")
local allgatherv, alltoallv = call("allgather", "mpi.Allgatherv"), call("alltoall", "mpi.Alltoallv")
local reduce_scatter = call("allreduce", "mpi.Reduce_scatter")
local ARRAY -- the arrays' metatable (mp.array may open after mp.mpi)

local function is_array(a)
  ARRAY = ARRAY or getmetatable(mp.array("u8", 0))
  return getmetatable(a) == ARRAY
end

-- raised without a position, as the C calls' errors are
local function fail(fname, arg, fmt, ...)
  error(("bad argument #%d to 'mp.mpi.%s' ([rank %d/%d] " .. fmt .. ")")
        :format(arg, fname, mp.rank, mp.size, ...), 0)
end

-- the array at arg, flat (a contiguous view; n-D arrays in memory order)
local function flat(fname, arg, a)
  if not is_array(a) then
    fail(fname, arg, "mp.Array expected, got %s", type(a))
  end
  return a.ndim == 1 and a or a:reshape(#a)
end

-- counts (or displacements) at arg: a list of one non-negative integer per
-- rank (3.0 is 3), returned as a new list of integers
local function ints(fname, arg, comm, t, what)
  local n, out = comm.size, {}
  if type(t) ~= "table" or #t ~= n then
    fail(fname, arg, "%s must list %d non-negative integers (one per rank), got %s", what,
         n, type(t) == "table" and ("a list of " .. #t) or type(t))
  end
  for i = 1, n do
    local v = math.tointeger(t[i])
    if not v or v < 0 then
      fail(fname, arg, "%s[%d] is %s: non-negative integers expected", what, i, tostring(t[i]))
    end
    out[i] = v
  end
  return out
end

-- the displacements at arg (nil: packed), checked against counts; returns
-- them and the length of the array they describe (blocks may not overlap)
local function places(fname, arg, comm, displs, counts)
  local n, d = comm.size, {}
  if displs == nil then
    local at = 0
    for i = 1, n do d[i], at = at, at + counts[i] end
    return d, at
  end
  displs = ints(fname, arg, comm, displs, "displs")
  local order, len = {}, 0
  for i = 1, n do
    order[i] = i
    if displs[i] + counts[i] > len then len = displs[i] + counts[i] end
  end
  table.sort(order, function(x, y)
    return displs[x] < displs[y] or displs[x] == displs[y] and x < y
  end)
  local last = nil
  for _, i in ipairs(order) do
    if counts[i] > 0 then
      if last and displs[i] < displs[last] + counts[last] then
        fail(fname, arg, "the blocks of ranks %d and %d overlap (displs[%d] = %d, " ..
             "displs[%d] = %d with counts %d)", last - 1, i - 1, last, displs[last], i, displs[i],
             counts[last])
      end
      last = i
    end
  end
  return displs, len
end

-- block i (1-based rank + 1) of a: a view of counts[i] elements at displs[i]
local function block(a, d, c)
  return a:slice(d + 1, d + c)
end

-- the array at arg cut into the blocks counts (at arg + 1) and displs (at
-- arg + 2) describe: views, but this rank's own a copy (its result must not
-- share a's memory)
local function split(fname, arg, comm, a, counts, displs, what)
  a = flat(fname, arg, a)
  counts = ints(fname, arg + 1, comm, counts, what or "counts")
  local d, len = places(fname, arg + 2, comm, displs, counts)
  if len > #a then
    fail(fname, arg + 2, "the blocks reach element %d of an array of %d", len, #a)
  end
  local blocks = {}
  for i = 1, comm.size do blocks[i] = block(a, d[i], counts[i]) end
  blocks[comm.rank + 1] = blocks[comm.rank + 1]:copy()
  return blocks
end

-- the blocks received (blocks[i] from rank i - 1) into a new array of len
-- elements of dtype, each checked against counts[i]
local function assemble(fname, arg, comm, dtype, len, blocks, counts, displs, what)
  local out = mp.array(dtype, len)
  for i = 1, comm.size do
    local b = blocks[i]
    local got = is_array(b) and #b or nil
    if got ~= counts[i] then
      fail(fname, arg, "%s[%d] is %d but rank %d sent %s", what, i, counts[i], i - 1,
           got and (got .. " elements") or ("a " .. type(b)))
    end
    if got > 0 then block(out, displs[i], got):copy_from(b) end
  end
  return out
end

-- mpi.Gatherv(a, counts, displs, root[, comm]) -> at root, one array of
-- root's dtype with rank r's elements at displs[r + 1] + 1 ...; nil elsewhere.
-- counts and displs matter at the root only (as in C); a rank that passes
-- counts has its own count checked too.
function mpi.Gatherv(a, counts, displs, root, comm)
  comm = comm_arg(comm, "Gatherv", 5)
  root = root_arg(root, comm, "Gatherv", 4)
  a = flat("Gatherv", 1, a)
  local me = comm.rank
  if me == root or counts ~= nil then
    counts = ints("Gatherv", 2, comm, counts, "counts")
    if #a ~= counts[me + 1] then
      fail("Gatherv", 2, "counts[%d] is %d but this rank's array has %d elements", me + 1,
           counts[me + 1], #a)
    end
  end
  local d, len
  if me == root then d, len = places("Gatherv", 3, comm, displs, counts) end
  local blocks = gatherv(comm, a, root)
  if me ~= root then return nil end
  return assemble("Gatherv", 2, comm, a.dtype, len, blocks, counts, d, "counts")
end

-- mpi.Scatterv(a, counts, displs, root[, comm]) -> this rank's block: a new
-- array of counts[rank + 1] elements of root's array a from displs[rank + 1] + 1.
-- a, counts and displs matter at the root only.
function mpi.Scatterv(a, counts, displs, root, comm)
  comm = comm_arg(comm, "Scatterv", 5)
  root = root_arg(root, comm, "Scatterv", 4)
  local blocks
  if comm.rank == root then
    blocks = split("Scatterv", 1, comm, a, counts, displs)
  end
  return scatterv(comm, blocks, root)
end

-- mpi.Allgatherv(a, counts, displs[, comm]) -> on every rank, one array of
-- a's dtype with rank r's elements at displs[r + 1] + 1 ... (displs nil: packed)
function mpi.Allgatherv(a, counts, displs, comm)
  comm = comm_arg(comm, "Allgatherv", 4)
  a = flat("Allgatherv", 1, a)
  counts = ints("Allgatherv", 2, comm, counts, "counts")
  local me = comm.rank
  if #a ~= counts[me + 1] then
    fail("Allgatherv", 2, "counts[%d] is %d but this rank's array has %d elements", me + 1,
         counts[me + 1], #a)
  end
  local d, len = places("Allgatherv", 3, comm, displs, counts)
  local blocks = allgatherv(comm, a)
  return assemble("Allgatherv", 2, comm, a.dtype, len, blocks, counts, d, "counts")
end

-- mpi.Alltoallv(a, sendcounts, sdispls, recvcounts, rdispls[, comm]) -> one
-- array of a's dtype: rank r's block for this rank at rdispls[r + 1] + 1 ...
-- (sdispls, rdispls nil: packed). Rank r's sendcounts[s + 1] must equal rank
-- s's recvcounts[r + 1].
function mpi.Alltoallv(a, sendcounts, sdispls, recvcounts, rdispls, comm)
  comm = comm_arg(comm, "Alltoallv", 6)
  local blocks = split("Alltoallv", 1, comm, a, sendcounts, sdispls, "sendcounts")
  a = flat("Alltoallv", 1, a)
  recvcounts = ints("Alltoallv", 4, comm, recvcounts, "recvcounts")
  local rd, rlen = places("Alltoallv", 5, comm, rdispls, recvcounts)
  local got = alltoallv(comm, blocks)
  return assemble("Alltoallv", 4, comm, a.dtype, rlen, got, recvcounts, rd, "recvcounts")
end

-- mpi.Reduce_scatter(a, counts, op[, comm]) -> this rank's block of the
-- reduction: counts[rank + 1] elements from sum(counts[1..rank]) + 1 (a table,
-- or an mp.Array of a's dtype). #a must be sum(counts).
function mpi.Reduce_scatter(a, counts, op, comm)
  comm = comm_arg(comm, "Reduce_scatter", 4)
  op_arg(op, "Reduce_scatter", 3)
  local arr = is_array(a)
  if not arr and type(a) ~= "table" then
    fail("Reduce_scatter", 1, "mp.Array or table expected, got %s", type(a))
  end
  if arr then a = flat("Reduce_scatter", 1, a) end
  counts = ints("Reduce_scatter", 2, comm, counts, "counts")
  local d, len = places("Reduce_scatter", 2, comm, nil, counts)
  if len ~= #a then
    fail("Reduce_scatter", 2, "counts sum to %d but the array has %d elements", len, #a)
  end
  local all = reduce_scatter(comm, a, op)
  local lo, k = d[comm.rank + 1], counts[comm.rank + 1]
  if not arr then return table.move(all, lo + 1, lo + k, 1, {}) end
  return block(all, lo, k):copy()
end
