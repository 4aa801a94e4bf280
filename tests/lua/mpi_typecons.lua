-- ranks: 1 2 3 4 6  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's datatype constructors with byte displacements, equal blocks,
-- several types and distributions, as file views: Type_create_hvector,
-- Type_create_hindexed, Type_create_indexed_block and Type_create_struct
-- interleave the ranks' elements; Type_create_darray (block, cyclic and
-- block-cyclic, C and Fortran order) makes the file one rank writing the
-- whole array makes, which string.pack and numpy agree with; bad arguments
-- name the function, the argument and the rank.
package.path = "lib/?.lua;" .. package.path
local checks = require("mpi_checks")
local fails, bad, slurp = checks.fails, checks.bad, checks.slurp
local n = mp.size
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local K = 6
local py = io.open("/usr/bin/python3") and "/usr/bin/python3" or "python3"


-- rank r's element k (0-based) at r + k*n: the file holds 0.5, 1.5, ... in order
local views = {"hvector", "hindexed", "indexed_block", "struct"}
mp.exec(function(dir, K, views)
  local mpi = mp.mpi
  local me, n = mpi.Comm_rank(), mpi.Comm_size()
  local bytes, elems, ones, f64s = {}, {}, {}, {}
  for k = 1, K do
    bytes[k], elems[k], ones[k], f64s[k] = 8 * n * (k - 1), n * (k - 1), 1, "f64"
  end
  local make = {
    hvector = function() return mpi.Type_create_hvector(K, 1, 8 * n, "f64") end,
    hindexed = function() return mpi.Type_create_hindexed(ones, bytes, "f64") end,
    indexed_block = function() return mpi.Type_create_indexed_block(1, elems, "f64") end,
    struct = function() return mpi.Type_create_struct(ones, bytes, f64s) end,
  }
  local a = mp.array("f64", K)
  for k = 1, K do a[k] = me + (k - 1) * n + 0.5 end
  for _, v in ipairs(views) do
    local t = make[v]()
    assert(t:Get_size() == 8 * K and tostring(t) == "mp.mpi.Datatype of f64 (committed)", v)
    assert(select(2, t:Get_extent()) == 8 * ((K - 1) * n + 1), v)
    local f = mpi.File_open(nil, dir .. "/" .. v, "w+")
    f:Set_view(8 * me, "f64", t)
    local q = f:Iwrite_all(a)
    mpi.Wait(q)
    f:Seek(0)
    local back = f:Read_all(K)
    for k = 1, K do assert(back[k] == a[k], v) end
  end
  -- a struct of several element types is made of bytes: a filetype under the default etype
  local rec = mpi.Type_create_struct({1, 1}, {0, 8}, {"i32", "f64"})
  assert(tostring(rec) == "mp.mpi.Datatype of u8 (committed)" and rec:Get_size() == 12)
  local g = mpi.File_open(nil, dir .. "/rec", "w")
  g:Set_view(0, nil, rec)
  fails("bad argument #3 to 'mp%.mpi%.File%.Set_view' %(%[rank %d+/%d+%] the datatype is made of u8",
        g.Set_view, g, 0, "f64", rec)
  -- a struct of a datatype and an element type of the same dtype
  local pair = mpi.Type_create_struct({1, 2}, {0, 16}, {mpi.Type_contiguous(1, "i64"), "i64"})
  assert(tostring(pair) == "mp.mpi.Datatype of i64 (committed)" and pair:Get_size() == 24)
end, dir, K, views)
local want = {}
for i = 0, n * K - 1 do want[#want + 1] = string.pack("<d", i + 0.5) end
want = table.concat(want)
for _, v in ipairs(views) do
  assert(slurp(dir .. "/" .. v) == want, v .. ": the file differs from string.pack's")
end

-- darrays: each rank writes its elements, in the order of its local array
local G = {7, 5}
local cases = {
  {"cyclic2_block_C", "C", {"CYCLIC", "BLOCK"}, {2, "DFLT"}},
  {"block3_cyclic_F", "FORTRAN", {"BLOCK", "CYCLIC"}, {"FIT", "DFLT"}},
  {"none_cyclic3_C", "C", {"NONE", "CYCLIC"}, {"DFLT", 3}},
}
mp.exec(function(dir, G, cases)
  local mpi = mp.mpi
  local me, n = mpi.Comm_rank(), mpi.Comm_size()
  for _, c in ipairs(cases) do
    local name, order = c[1], mpi["ORDER_" .. c[2]]
    local P = c[3][1] == "NONE" and {1, n} or mpi.Dims_create(n, {0, 0})
    local dist, darg = {}, {}
    for k = 1, 2 do
      dist[k] = mpi["DISTRIBUTE_" .. c[3][k]]
      local d = c[4][k]
      darg[k] = d == "DFLT" and mpi.DISTRIBUTE_DFLT_DARG or d == "FIT" and
                (G[k] + P[k] - 1) // P[k] + 1 or d
    end
    local t = mpi.Type_create_darray(n, me, G, dist, darg, P, order, "f64")
    local coords = {me // P[2], me % P[2]}     -- MPI's grids are row-major
    local function owned(k)                    -- this rank's global indices in dimension k
      local l = {}
      for i = 0, G[k] - 1 do
        local b = darg[k] == mpi.DISTRIBUTE_DFLT_DARG and
                  (dist[k] == mpi.DISTRIBUTE_CYCLIC and 1 or (G[k] + P[k] - 1) // P[k]) or darg[k]
        local o = dist[k] == mpi.DISTRIBUTE_NONE and 0 or
                  dist[k] == mpi.DISTRIBUTE_CYCLIC and (i // b) % P[k] or i // b
        if o == coords[k] then l[#l + 1] = i end
      end
      return l
    end
    local r, s = owned(1), owned(2)
    local a = mp.array("f64", #r * #s)
    local k = 0
    if order == mpi.ORDER_C then
      for _, i in ipairs(r) do for _, j in ipairs(s) do k = k + 1; a[k] = i * G[2] + j end end
    else
      for _, j in ipairs(s) do for _, i in ipairs(r) do k = k + 1; a[k] = i * G[2] + j end end
    end
    assert(t:Get_size() == 8 * #a, name)
    local f = mpi.File_open(nil, dir .. "/" .. name, "w")
    f:Set_view(0, "f64", t)
    f:Write_all(a)
    f:Close()
    if me == 0 then   -- the whole array by one rank, in the same order
      local whole = mp.array("f64", G[1] * G[2])
      k = 0
      for x = 0, (order == mpi.ORDER_C and G[1] or G[2]) - 1 do
        for y = 0, (order == mpi.ORDER_C and G[2] or G[1]) - 1 do
          k = k + 1
          whole[k] = order == mpi.ORDER_C and x * G[2] + y or y * G[2] + x
        end
      end
      local one = mpi.File_open(mpi.Comm_split(mpi.COMM_WORLD, 0), dir .. "/" .. name .. ".one", "w")
      one:Write_at(0, whole)
      one:Close()
    else
      mpi.Comm_split(mpi.COMM_WORLD, mpi.UNDEFINED)
    end
  end
end, dir, G, cases)
for _, c in ipairs(cases) do
  local s = slurp(dir .. "/" .. c[1])
  assert(s == slurp(dir .. "/" .. c[1] .. ".one"), c[1] .. ": differs from one rank's file")
  local t = {}
  for x = 0, (c[2] == "C" and G[1] or G[2]) - 1 do
    for y = 0, (c[2] == "C" and G[2] or G[1]) - 1 do
      t[#t + 1] = string.pack("<d", c[2] == "C" and x * G[2] + y or y * G[2] + x)
    end
  end
  assert(s == table.concat(t), c[1] .. ": differs from string.pack's")
  assert(os.execute(("%s -c 'import numpy as np, sys; a = np.fromfile(sys.argv[1])" ..
    ".reshape((%d, %d), order=sys.argv[2]); sys.exit(0 if (a == np.arange(%d).reshape(%d, %d))" ..
    ".all() else 1)' %s/%s %s"):format(py, G[1], G[2], G[1] * G[2], G[1], G[2], dir, c[1], c[2]:sub(1, 1))),
    c[1] .. ": numpy reads another array")
end

-- bad arguments
mp.exec(function()
  local mpi = mp.mpi
  local B, C, N, D = mpi.DISTRIBUTE_BLOCK, mpi.DISTRIBUTE_CYCLIC, mpi.DISTRIBUTE_NONE,
                     mpi.DISTRIBUTE_DFLT_DARG
  local function darray(...) return mpi.Type_create_darray(...) end
  fails(bad(2, "Type_create_darray", "rank 4 out of range 0%.%.3"), darray, 4, 4, {4}, {B}, {D},
        {4}, mpi.ORDER_C, "f64")
  fails(bad(6, "Type_create_darray", "the grid of psizes has 2 processes, not size 4"), darray, 4,
        0, {4}, {B}, {D}, {2}, mpi.ORDER_C, "f64")
  fails(bad(4, "Type_create_darray", "dimension 2: distrib 9 is not"), darray, 1, 0, {4, 4},
        {B, 9}, {D, D}, {1, 1}, mpi.ORDER_C, "f64")
  fails(bad(5, "Type_create_darray", "dimension 1: darg 0 is not a block size"), darray, 1, 0,
        {4}, {C}, {0}, {1}, mpi.ORDER_C, "f64")
  fails(bad(6, "Type_create_darray", "dimension 1: DISTRIBUTE_NONE over 2 processes"), darray, 2,
        0, {4}, {N}, {D}, {2}, mpi.ORDER_C, "f64")
  fails(bad(5, "Type_create_darray", "dimension 1: blocks of 1 over 2 processes cover 2 of 4"),
        darray, 2, 0, {4}, {B}, {1}, {2}, mpi.ORDER_C, "f64")
  fails(bad(7, "Type_create_darray", "order is not"), darray, 1, 0, {4}, {B}, {D}, {1}, 5, "f64")
  fails(bad(5, "Type_create_darray", "2 dargs for 1 dimensions"), darray, 1, 0, {4}, {B}, {D, D},
        {1}, mpi.ORDER_C, "f64")
  fails(bad(3, "Type_create_struct", "1 types for 2 blocks"), mpi.Type_create_struct, {1, 1},
        {0, 8}, {"f64"})
  fails(bad(3, "Type_create_struct", "old type expected"), mpi.Type_create_struct, {1}, {0}, {7})
  fails(bad(2, "Type_create_hindexed", "displacements%[2%] is not an integer"),
        mpi.Type_create_hindexed, {1, 1}, {0, 0.5}, "f64")
  fails(bad(1, "Type_create_hvector", "count %-1 is out of range"), mpi.Type_create_hvector, -1,
        1, 8, "f64")
  fails(bad(2, "Type_create_indexed_block", "table of displacements expected"),
        mpi.Type_create_indexed_block, 1, 3, "f64")
end)

os.execute("rm -rf " .. dir)
