-- ranks: 1 2 3 4  quick: 3
-- SPDX-License-Identifier: MIT
-- mp.mpi's calls written in Lua over mp's collectives (Gatherv, Allreduce,
-- Comm_split, ...) are named as MPI's wherever a report names a call: a
-- deadlock report, a "would wait forever" error, a fault report's
-- whereabouts of the others, and the errors of their argument checks (the
-- call, the argument as MPI counts it, the rank); never mp's gather,
-- allreduce or Comm.split inside them.
local n = mp.size
local ones = {} -- Gatherv's counts: one element per rank
for r = 1, n do ones[r] = 1 end
-- whether text names one of mp's calls inside (mp.gather, mp.Comm.split; not mp.mpi.X, mp.exec)
local function names_mp(text)
  for w in text:gmatch("%f[%w_]mp%.(%a+)") do -- not the "mp." of a path like /tmp/tmp.X
    if w ~= "mpi" and w ~= "exec" then return true end
  end
  return false
end

-- argument checks
mp.exec(function()
  local mpi = mp.mpi
  local R = "%[rank " .. mp.rank .. "/" .. n .. "%]"
  local function fails(pattern, f, ...)
    local ok, err = pcall(f, ...)
    assert(not ok and tostring(err):find(pattern),
           "rank " .. mp.rank .. ": expected '" .. pattern .. "', got " .. tostring(err))
    assert(not names_mp(tostring(err)) and not tostring(err):find("^mp%.mpi:"),
           "an mp name or a position inside mp.mpi: " .. tostring(err))
  end
  local a = mp.array("f64", 1)
  fails("bad argument #2 to 'mp.mpi.Bcast' %(" .. R .. " root " .. n .. " out of range",
        mpi.Bcast, 1, n)
  fails("bad argument #2 to 'mp.mpi.Bcast' %(" .. R .. " root rank expected, got string",
        mpi.Bcast, 1, "x")
  fails("bad argument #3 to 'mp.mpi.Reduce' %(" .. R .. " root %-1 out of range", mpi.Reduce,
        1, mpi.SUM, -1)
  fails("bad argument #2 to 'mp.mpi.Allreduce' %(" .. R .. " op must be", mpi.Allreduce, 1, "x")
  fails("bad argument #3 to 'mp.mpi.Allreduce' %(" .. R .. " communicator expected, got string",
        mpi.Allreduce, 1, mpi.SUM, "world")
  fails("bad argument #2 to 'mp.mpi.Scan' %(" .. R .. " op must be", mpi.Scan, 1, {})
  fails("bad argument #2 to 'mp.mpi.Exscan' %(" .. R .. " op must be", mpi.Exscan, 1, nil)
  fails("bad argument #2 to 'mp.mpi.Gather' %(" .. R .. " root 99", mpi.Gather, 1, 99)
  fails("bad argument #1 to 'mp.mpi.Scatter' %(" .. R .. " a list of " .. n .. " values",
        mpi.Scatter, {}, mp.rank)
  fails("bad argument #1 to 'mp.mpi.Alltoall' %(" .. R .. " a list of " .. n .. " values",
        mpi.Alltoall, 5)
  fails("bad argument #2 to 'mp.mpi.Allgather' %(" .. R .. " communicator expected",
        mpi.Allgather, 1, 5)
  fails("bad argument #1 to 'mp.mpi.Barrier' %(" .. R .. " communicator expected", mpi.Barrier, 5)
  fails("bad argument #1 to 'mp.mpi.Comm_dup' %(" .. R .. " communicator expected", mpi.Comm_dup, 5)
  fails("bad argument #1 to 'mp.mpi.Comm_split' %(" .. R .. " communicator expected",
        mpi.Comm_split, "world", 1)
  fails("bad argument #2 to 'mp.mpi.Comm_split' %(" .. R .. " color must be an integer",
        mpi.Comm_split, mpi.COMM_WORLD, "x")
  fails("bad argument #3 to 'mp.mpi.Comm_split' %(" .. R .. " key must be an integer",
        mpi.Comm_split, mpi.COMM_WORLD, 1, 1.5)
  fails("bad argument #2 to 'mp.mpi.Reduce_scatter_block' %(" .. R .. " op must be",
        mpi.Reduce_scatter_block, {1}, "x")
  fails("bad argument #4 to 'mp.mpi.Gatherv' %(" .. R .. " root " .. n .. " out of range",
        mpi.Gatherv, a, nil, nil, n)
  fails("bad argument #5 to 'mp.mpi.Scatterv' %(" .. R .. " communicator expected",
        mpi.Scatterv, a, nil, nil, 0, {})
  fails("bad argument #3 to 'mp.mpi.Reduce_scatter' %(" .. R .. " op must be",
        mpi.Reduce_scatter, a, {}, "x")
  fails("bad argument #4 to 'mp.mpi.Allgatherv' %(" .. R .. " communicator expected",
        mpi.Allgatherv, a, {}, nil, 1)
  assert(mpi.Allreduce(1, mpi.SUM) == n) -- every rank is still in step
end)

if n < 2 then
  print("mpi_names ok", n)
  return
end

-- one rank left in a collective the others have finished
local ok, err = pcall(mp.exec, function()
  if mp.rank == 0 then mp.mpi.Allreduce(1, mp.mpi.SUM) end
end)
assert(not ok and err:find("mpi%.Allreduce: %[rank 0/" .. n .. "%] would wait forever: ") and
       not names_mp(err), tostring(err))
-- an error raised in mp's C code under the call starts with the call's name, not with a
-- position in mp.mpi's own Lua ("mp.mpi:126: mp.mpi.Allreduce: ...")
local function no_glue_line(e) assert(not e:match("^[^\n]*"):find("mp%.mpi[%w.]*:%d"), e) end
no_glue_line(err)
ok, err = pcall(mp.exec, function()
  if mp.rank == 0 then mp.mpi.Reduce(1, mp.mpi.SUM, 0) else mp.mpi.Bcast(1, 0) end
end)
assert(not ok and err:find("mp%.mpi%.Reduce: %[rank 0/" .. n .. "%] mismatched collectives"), err)
no_glue_line(err)
ok, err = pcall(mp.exec, function()
  local mpi = mp.mpi
  if mp.rank == n - 1 then mpi.Gatherv(mp.array("f64", 1), ones, nil, n - 1) end
end)
assert(not ok and err:find("mpi%.Gatherv%(root " .. (n - 1) .. "%): %[rank " .. (n - 1) ..
       "/" .. n .. "%] would wait forever"), tostring(err))
no_glue_line(err)

-- a fault while the others wait in Lua-written calls: the whereabouts name them
local function fault(which)
  local ok_, e = pcall(mp.exec, function(w)
    local mpi = mp.mpi
    if mp.rank == n - 1 then error("boom in " .. w) end
    local c = mpi.Comm_split(mpi.COMM_WORLD, 0)   -- without the culprit: it never comes
    if w == "Gatherv" then mpi.Gatherv(mp.array("f64", 1), ones, nil, 0)
    elseif w == "Bcast" then mpi.Bcast(1, 0)
    elseif w == "Allreduce" then mpi.Allreduce(1, mpi.SUM, c) end
  end, which)
  assert(not ok_ and e:find("boom in " .. which), tostring(e))
  return e
end
if n >= 3 then -- rank 0 and others wait, on the culprit, in Comm_split
  local e = fault("Gatherv")
  assert(e:find("where the others were:\n  ranks? 0%S*: in mpi%.Comm_split from rank " .. (n - 1)),
         e)
  assert(not names_mp(e), e)
end
-- at 2 ranks, rank 0 is in Comm_split alone; at any count, each call by name
assert(fault("Bcast"):find("in mpi%.Comm_split"))
-- the calls in C read as in deadlock reports: "in mpi.Recv(tag 3)", not mp.mpi.Recv
ok, err = pcall(mp.exec, function()
  if mp.rank == n - 1 then error("boom") end
  mp.mpi.Recv(n - 1, 3)
end)
assert(not ok and err:find("\n  ranks? 0%S*: in mpi%.Recv%(tag 3%) from rank " .. (n - 1)), err)
assert(mp.exec(function() return mp.mpi.Allreduce(1, mp.mpi.SUM) end) == n) -- clean again

if n >= 3 then
  -- deadlocks: ranks in Lua-written calls while another waits elsewhere
  local function deadlock(which)
    local ok_, e = pcall(mp.exec, function(w)
      local mpi = mp.mpi
      if mp.rank == 2 then mpi.Recv(0, 5) -- line R
      elseif w == "Gatherv" then mpi.Gatherv(mp.array("f64", 1), ones, nil, 1)
      elseif w == "Allreduce" then mpi.Allreduce(mp.rank, mpi.MAX)
      elseif w == "Comm_split" then mpi.Comm_split(mpi.COMM_WORLD, mp.rank % 2)
      elseif w == "Reduce" then mpi.Reduce(1, mpi.SUM, 0)
      elseif w == "Neighbor_allgather" then
        mpi.Neighbor_allgather(1, mpi.Cart_create(mpi.COMM_WORLD, {n}, {true}))
      end
    end, which)
    assert(not ok_, which)
    return e
  end
  local e = deadlock("Gatherv")
  assert(e:find("deadlock: ") and e:find("rank 1 waits in mpi%.Gatherv%(root 1%) from rank 2") and
         e:find("rank 2 waits in mpi%.Recv%(tag 5%) from rank 0"), e)
  e = deadlock("Allreduce")
  assert(e:find("waits? in mpi%.Allreduce") and not names_mp(e), e)
  e = deadlock("Comm_split")
  assert(e:find("wait in mpi%.Comm_split") and not names_mp(e), e)
  e = deadlock("Reduce")
  assert(e:find("rank 0 waits in mpi%.Reduce%(root 0%) from rank 2"), e)
  e = deadlock("Neighbor_allgather") -- the outer call is named, not Cart_create's inner ones
  assert(e:find("in mpi%.Cart_create") and not names_mp(e), e)
end
print("mpi_names ok", n)
