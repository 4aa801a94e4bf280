-- SPDX-License-Identifier: MIT
-- mp.mpi's groups and the communicator calls built on them (compiled in):
-- Comm_group, Group_size/rank/incl/excl/union/intersection/difference,
-- Group_translate_ranks, Group_compare, Comm_compare, Comm_create,
-- Comm_split_type, Comm_free. A group is an ordered list of the task's
-- world ranks (a plain value: local, no communication, it may travel in
-- messages); a communicator is made from one by comm:split, so it is mp's
-- (a list of ranks with an id, no MPI communicator).
local mpi, mp, checks = ...
local comm_of = checks.comm_arg -- (comm, fname, arg): nil is COMM_WORLD

mpi.IDENT, mpi.CONGRUENT, mpi.SIMILAR, mpi.UNEQUAL = 0, 1, 2, 3 -- MPICH's values
mpi.COMM_TYPE_SHARED = 1

local Group = {__name = "mp.mpi.Group"}
Group.__index = Group

local getinfo = debug.getinfo

-- the level of the first function outside mp.mpi's Lua (the user's call)
local function user_level()
  local l = 2
  while true do
    local i = getinfo(l + 1, "S")
    if not i or not i.source:find("^=mp%.mpi") then return l end
    l = l + 1
  end
end

local function fail(fmt, ...)
  error(("mp.mpi.%s"):format(fmt:format(...)), user_level())
end

local function argerr(fname, arg, fmt, ...)
  error(("bad argument #%d to 'mp.mpi.%s' ([rank %d/%d] %s)")
        :format(arg, fname, mp.rank, mp.size, fmt:format(...)), user_level())
end

-- a group of the world ranks in list (each once)
local function new(list)
  local g, at = setmetatable({n = #list}, Group), {}
  for i, w in ipairs(list) do g[i], at[w] = w, i - 1 end
  g.at = at -- world rank -> rank in the group
  return g
end

function Group.__tostring(g)
  return ("mp.mpi.Group {%s}"):format(table.concat(g, ", "))
end
function Group.__len(g) return g.n end

mpi.GROUP_EMPTY = new({})

local function group(g, fname, arg)
  if getmetatable(g) ~= Group then
    argerr(fname, arg, "group expected, got %s", type(g))
  end
  return g
end

-- ranks of g listed in t (0-based), checked: integers in range, each once
local function ranklist(g, t, fname, arg)
  if type(t) ~= "table" then argerr(fname, arg, "list of ranks expected, got %s", type(t)) end
  local seen = {}
  for i = 1, #t do
    local r = t[i]
    if math.type(r) ~= "integer" then
      argerr(fname, arg, "rank list item %d is not an integer (a %s)", i, type(r))
    elseif r < 0 or r >= g.n then
      argerr(fname, arg, "rank list item %d: rank %d out of range 0..%d", i, r, g.n - 1)
    elseif seen[r] then
      argerr(fname, arg, "rank list item %d: rank %d listed twice", i, r)
    end
    seen[r] = true
  end
  return seen
end

-- MPI_Comm_group
function mpi.Comm_group(comm)
  return new(comm_of(comm, "Comm_group", 1):ranks())
end
function mpi.Group_size(g) return group(g, "Group_size", 1).n end
-- this rank's rank in g, UNDEFINED when it is not a member
function mpi.Group_rank(g)
  return group(g, "Group_rank", 1).at[mp.rank] or mpi.UNDEFINED
end
function mpi.Group_free(g) group(g, "Group_free", 1) end

-- MPI_Group_incl: the members of g at ranks, in that order
function mpi.Group_incl(g, ranks)
  group(g, "Group_incl", 1)
  ranklist(g, ranks, "Group_incl", 2)
  local list = {}
  for i = 1, #ranks do list[i] = g[ranks[i] + 1] end
  return new(list)
end

-- MPI_Group_excl: the members of g but those at ranks, in g's order
function mpi.Group_excl(g, ranks)
  group(g, "Group_excl", 1)
  local out = ranklist(g, ranks, "Group_excl", 2)
  local list = {}
  for r = 0, g.n - 1 do
    if not out[r] then list[#list + 1] = g[r + 1] end
  end
  return new(list)
end

-- the ranks of ranges {{first, last, stride}, ...} (MPI_Group_range_incl's
-- triples), checked as a rank list
local function ranges(g, t, fname)
  if type(t) ~= "table" then argerr(fname, 2, "list of ranges expected, got %s", type(t)) end
  local list = {}
  for i = 1, #t do
    local r = t[i]
    local a, b, s = type(r) == "table" and r[1], type(r) == "table" and r[2],
                    type(r) == "table" and (r[3] or 1)
    if math.type(a) ~= "integer" or math.type(b) ~= "integer" or math.type(s) ~= "integer" or
       s == 0 then
      argerr(fname, 2, "range %d: {first, last[, stride]} of integers expected, stride not 0", i)
    end
    for x = a, b, s do list[#list + 1] = x end
  end
  ranklist(g, list, fname, 2)
  return list
end

-- MPI_Group_range_incl / MPI_Group_range_excl
function mpi.Group_range_incl(g, t)
  group(g, "Group_range_incl", 1)
  return mpi.Group_incl(g, ranges(g, t, "Group_range_incl"))
end
function mpi.Group_range_excl(g, t)
  group(g, "Group_range_excl", 1)
  return mpi.Group_excl(g, ranges(g, t, "Group_range_excl"))
end

-- MPI_Group_union: g1's members, then g2's that are not in g1
function mpi.Group_union(g1, g2)
  group(g1, "Group_union", 1)
  group(g2, "Group_union", 2)
  local list = table.move(g1, 1, g1.n, 1, {})
  for i = 1, g2.n do
    if not g1.at[g2[i]] then list[#list + 1] = g2[i] end
  end
  return new(list)
end

-- g1's members in g2 (keep) or not in g2, in g1's order
local function filter(g1, g2, keep, fname)
  group(g1, fname, 1)
  group(g2, fname, 2)
  local list = {}
  for i = 1, g1.n do
    if (g2.at[g1[i]] ~= nil) == keep then list[#list + 1] = g1[i] end
  end
  return new(list)
end
function mpi.Group_intersection(g1, g2) return filter(g1, g2, true, "Group_intersection") end
function mpi.Group_difference(g1, g2) return filter(g1, g2, false, "Group_difference") end

-- MPI_Group_translate_ranks: the rank in g2 of each rank of g1 listed
-- (UNDEFINED where it is not in g2; PROC_NULL stays PROC_NULL)
function mpi.Group_translate_ranks(g1, ranks, g2)
  group(g1, "Group_translate_ranks", 1)
  group(g2, "Group_translate_ranks", 3)
  if type(ranks) ~= "table" then
    argerr("Group_translate_ranks", 2, "list of ranks expected, got %s", type(ranks))
  end
  local out = {}
  for i = 1, #ranks do
    local r = ranks[i]
    if r == mpi.PROC_NULL then
      out[i] = mpi.PROC_NULL
    elseif math.type(r) ~= "integer" or r < 0 or r >= g1.n then
      argerr("Group_translate_ranks", 2, "rank list item %d: %s is not a rank of the group " ..
             "(0..%d) or PROC_NULL", i, tostring(r), g1.n - 1)
    else
      out[i] = g2.at[g1[r + 1]] or mpi.UNDEFINED
    end
  end
  return out
end

-- IDENT: the same members in the same order; SIMILAR: in another order
local function compare(a, an, b, bn)
  if an ~= bn then return mpi.UNEQUAL end
  local same, at = true, {}
  for i = 1, an do
    same = same and a[i] == b[i]
    at[a[i]] = true
  end
  if same then return mpi.IDENT end
  for i = 1, bn do
    if not at[b[i]] then return mpi.UNEQUAL end
  end
  return mpi.SIMILAR
end

function mpi.Group_compare(g1, g2)
  group(g1, "Group_compare", 1)
  group(g2, "Group_compare", 2)
  return compare(g1, g1.n, g2, g2.n)
end

-- MPI_Comm_compare: IDENT for one communicator (the same id: ids are
-- unique among a rank's communicators in a task), CONGRUENT for the same
-- ranks in the same order, SIMILAR in another order, else UNEQUAL
function mpi.Comm_compare(c1, c2)
  c1, c2 = comm_of(c1, "Comm_compare", 1), comm_of(c2, "Comm_compare", 2)
  local r1, r2 = c1:ranks(), c2:ranks()
  local k = compare(r1, #r1, r2, #r2)
  if k == mpi.IDENT and c1.id ~= c2.id then return mpi.CONGRUENT end
  return k
end

-- FNV-1a over a group's ranks: the color of its members in Comm_create
local function fingerprint(g)
  local h = -3750763034362895579 -- 14695981039346656037 as a signed integer
  for i = 1, g.n do h = (h ~ g[i]) * 1099511628211 end
  return h
end

-- MPI_Comm_create(comm, group): collective over comm; the members of group
-- get a communicator of its ranks in its order, the others nil (C's
-- MPI_COMM_NULL). As in MPI, ranks may pass different groups as long as
-- every member of a group passes that same group (disjoint groups make
-- several communicators at once).
function mpi.Comm_create(comm, g)
  comm = comm_of(comm, "Comm_create", 1)
  group(g, "Comm_create", 2)
  local of_comm = {}
  for i, w in ipairs(comm:ranks()) do of_comm[w] = i - 1 end
  for i = 1, g.n do
    if not of_comm[g[i]] then
      argerr("Comm_create", 2, "world rank %d of the group is not in the communicator", g[i])
    end
  end
  local me = g.at[mp.rank]
  local c = comm:split(me and fingerprint(g) or nil, me)
  if c and c.size ~= g.n then
    fail("Comm_create: [rank %d/%d] the members of the group did not all pass it (%d of its " ..
         "%d ranks did): every member must pass the same group", mp.rank, mp.size, c.size, g.n)
  end
  return c
end

-- MPI_Comm_split_type(comm, COMM_TYPE_SHARED[, key]): the ranks on this
-- rank's node (mp.machine's nodes); split_type UNDEFINED gives nil
function mpi.Comm_split_type(comm, split_type, key)
  comm = comm_of(comm, "Comm_split_type", 1)
  local color
  if split_type == mpi.COMM_TYPE_SHARED then
    color = mp.machine(comm).nodes[comm.rank + 1]
  elseif split_type ~= mpi.UNDEFINED then
    argerr("Comm_split_type", 2, "split type %s: COMM_TYPE_SHARED or UNDEFINED expected",
           tostring(split_type))
  end
  if key ~= nil and math.type(key) ~= "integer" then
    argerr("Comm_split_type", 3, "key must be an integer, got %s", type(key))
  end
  return comm:split(color, key)
end

-- MPI_Comm_free: nothing to free (a communicator ends with its task); the
-- world is refused as in C
function mpi.Comm_free(comm)
  comm = comm_of(comm, "Comm_free", 1)
  if comm.id == 0 then argerr("Comm_free", 1, "COMM_WORLD cannot be freed") end
end

-- what mpi_topo.lua shares
return {argerr = argerr, fail = fail, comm_of = comm_of}
