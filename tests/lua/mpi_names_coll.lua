-- ranks: 1 2 3 4 5 8  quick: 3
-- SPDX-License-Identifier: MIT
-- MPI's names where a rank waits or fails inside mp's collective under an
-- mp.mpi call (tests/lua/mpi_names.lua covers the waits inside the calls):
-- - a rank that has left mpi.Bcast/Gather/Gatherv/Scatter/Scatterv and waits
--   at its task's end for its predecessor's root check "waits in
--   mpi.Bcast(root r)" in a deadlock report (a fault's whereabouts read the
--   same description);
-- - errors found once mp's collective runs (another collective on another
--   rank, another root, arrays of other lengths) name the MPI calls:
--   "mp.mpi.Reduce: ... rank 2 called mp.mpi.Bcast"; never mp's bcast, gather...
-- At every root.
local n = mp.size
local ones = {}
for r = 1, n do ones[r] = 1 end
-- whether text names one of mp's calls (mp.gather; not mp.mpi.X, mp.exec)
local function names_mp(text)
  for w in text:gmatch("%f[%w_]mp%.(%a+)") do
    if w ~= "mpi" and w ~= "exec" then return true end
  end
  return false
end
local function run(f, ...)
  local ok, err = pcall(mp.exec, f, ...)
  assert(not ok, "the task should fail")
  err = tostring(err)
  assert(not names_mp(err), "an mp name: " .. err)
  return err
end

-- call(name, root): rank's part of the collective `name` at root
local function call(name, root)
  local mpi = mp.mpi
  local a = mp.array("f64", 1):fill(mp.rank)
  if name == "Bcast" then mpi.Bcast(a, root)
  elseif name == "Gather" then mpi.Gather(a, root)
  elseif name == "Gatherv" then mpi.Gatherv(a, ones, nil, root)
  elseif name == "Scatter" then
    local t = {}
    for r = 1, n do t[r] = r end
    mpi.Scatter(t, root)
  elseif name == "Scatterv" then mpi.Scatterv(mp.array("f64", n), ones, nil, root)
  end
end

-- Rank q = root + 1 never calls; rank s = root + 2 (q's successor, whose
-- position in the tree is after q's: never q's ancestor) leaves the call and
-- waits at its task's end for q's root check. Bcast and Scatter need no
-- data from q: at 2 ranks, s is the root.
if n >= 2 then
  for _, name in ipairs({"Bcast", "Gather", "Gatherv", "Scatter", "Scatterv"}) do
    local moving_up = name:find("^Gather")
    if not moving_up or n >= 3 then
      for root = 0, n - 1 do
        local q, s = (root + 1) % n, (root + 2) % n
        local want = ("rank %d waits in mpi%%.%s%%(root %d%%) from rank %d %%(collective #1%%)")
                     :format(s, name, root, q)
        -- a deadlock: q waits for s, s for q's root check
        local err = run(function(nm, rt)
          if mp.rank == (rt + 1) % n then mp.mpi.Recv((rt + 2) % n, 5) else call(nm, rt) end
        end, name, root)
        assert(err:find("deadlock: ") and err:find(want), name .. " root " .. root .. ": " .. err)
      end
    end
  end
end

-- errors found inside mp's collective name the MPI calls, at every root
-- (a mismatch, or a wait that cannot end when no member sees the mismatch)
local function fails(f, want, ...)
  local err = run(f, ...)
  assert(err:find(want), want .. ": " .. err)
end
if n >= 2 then
  for root = 0, n - 1 do
    fails(function(rt) -- another collective
      local mpi = mp.mpi
      if mp.rank == (rt + 1) % n then mpi.Reduce(1, mpi.SUM, rt) else mpi.Bcast(1, rt) end
    end, "mpi%.[BR][ce][ad][su][tc]", root)
    fails(function(rt) -- another root
      local r = mp.rank == (rt + 1) % n and (rt + 1) % n or rt
      mp.mpi.Bcast(1, r)
    end, "mpi%.Bcast", root)
    fails(function(rt) -- Gather and Gatherv are two collectives (mp's gather under both)
      local mpi = mp.mpi
      if mp.rank == (rt + 1) % n then mpi.Gather(mp.array("f64", 1), rt)
      else mpi.Gatherv(mp.array("f64", 1), ones, nil, rt) end
    end, "mismatched collectives: rank %d+ called mp%.mpi%.Gather", root)
  end
  -- arrays of other lengths in a reduction
  local err = run(function() mp.mpi.Allreduce(mp.array("f64", mp.rank + 1), mp.mpi.SUM) end)
  assert(err:find("mp%.mpi%.Allreduce: %[rank %d+/%d+%] rank %d+ sent"), err)
  err = run(function() -- counts that differ between ranks
    local c = {}
    for r = 1, n do c[r] = 1 end
    if mp.rank == 0 then c[1] = 2 end
    mp.mpi.Reduce_scatter(mp.array("f64", mp.rank == 0 and n + 1 or n), c, mp.mpi.SUM)
  end)
  assert(err:find("mp%.mpi%.Reduce_scatter: %[rank %d+/%d+%]"), err)
end
assert(mp.exec(function() return mp.mpi.Allreduce(1, mp.mpi.SUM) end) == n) -- clean again
print("mpi_names_coll ok", n)
