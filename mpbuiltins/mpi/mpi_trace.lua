-- SPDX-License-Identifier: MIT
-- Traces record MPI's names for mp.mpi's calls written in Lua (collectives,
-- communicators, groups, topologies): while this rank traces, each runs in
-- a region named as the call (mpi.Allreduce, mpi.Cart_create, ...) around
-- the spans of mp's calls it makes. The calls in C name their own spans
-- (mpi.Send, mpi.Recv(ANY_SOURCE, tag 7), mpi.Wait, ...). Loaded last, so
-- it wraps every Lua function of mp.mpi named as MPI's (Capital_lower...;
-- not the ops MAXLOC, MINLOC) but the local calls below, which would only
-- clutter a trace.
local mpi, mp = ...
local LOCAL = {Comm_rank = true, Comm_size = true, Comm_group = true, Comm_compare = true,
               Comm_free = true, Dims_create = true, Topo_test = true}
local LOCAL_PREFIX = {"^Group_", "^Cart_coords$", "^Cart_rank$", "^Cart_shift$", "^Cart_get$",
                      "^Cartdim_get$", "^Graph_neighbors", "^Graph_get$", "^Graphdims_get$",
                      "^Dist_graph_neighbors"}
local function is_local(name)
  if LOCAL[name] then return true end
  for _, p in ipairs(LOCAL_PREFIX) do
    if name:find(p) then return true end
  end
  return false
end
local on, region -- mp.trace's, opened after mp.mpi: found at the first call

local function tracing()
  if not on then
    local t = mp.trace
    if not t then return false end
    on, region = t.on, t.region
  end
  return on()
end

for name, f in pairs(mpi) do
  if type(f) == "function" and name:find("^%u%l") and debug.getinfo(f, "S").what == "Lua" and
     not is_local(name) then
    local label = "mpi." .. name
    -- not tracing: a tail call, so errors still point at the caller's line
    mpi[name] = function(...)
      if tracing() then return region(label, f, ...) end
      return f(...)
    end
  end
end
