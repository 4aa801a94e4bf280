-- SPDX-License-Identifier: MIT
-- MPI's names for mp.mpi's calls written in Lua (collectives, communicators,
-- groups, topologies):
-- - in traces: while this rank traces, each runs in a region named as the
--   call (mpi.Allreduce, mpi.Cart_create, ...) around the spans of mp's calls
--   it makes. The calls in C name their own spans (mpi.Send, mpi.Recv(ANY_SOURCE,
--   tag 7), mpi.Wait, ...; regions mpi.File.Write_at_all, mpi.Put, ...).
-- - in the reports of waits: each Lua function is registered under its name
--   (name(f, label, root arg), mpi_names.c), so that a rank blocked in mp's
--   gather inside mpi.Gatherv is said to wait in mpi.Gatherv(root 0).
-- Loaded last, so it wraps every Lua function of mp.mpi named as MPI's
-- (Capital_lower...; not the ops MAXLOC, MINLOC) but the local calls below,
-- which would only clutter a trace.
local mpi, mp, name = ...
local LOCAL = {Comm_rank = true, Comm_size = true, Comm_group = true, Comm_compare = true,
               Comm_free = true, Dims_create = true, Topo_test = true}
local LOCAL_PREFIX = {"^Group_", "^Cart_coords$", "^Cart_rank$", "^Cart_shift$", "^Cart_get$",
                      "^Cartdim_get$", "^Graph_neighbors", "^Graph_get$", "^Graphdims_get$",
                      "^Dist_graph_neighbors"}
-- the parameter that holds the root, for the calls that have one
local ROOT = {Bcast = 2, Reduce = 3, Gather = 2, Scatter = 2, Gatherv = 4, Scatterv = 4}
local function is_local(fname)
  if LOCAL[fname] then return true end
  for _, p in ipairs(LOCAL_PREFIX) do
    if fname:find(p) then return true end
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

for fname, f in pairs(mpi) do
  if type(f) == "function" and fname:find("^%u%l") and debug.getinfo(f, "S").what == "Lua" and
     not is_local(fname) then
    local label = "mpi." .. fname
    name(f, label, ROOT[fname])
    -- not tracing: a tail call, so errors still point at the caller's line
    mpi[fname] = function(...)
      if tracing() then return region(label, f, ...) end
      return f(...)
    end
  end
end
