-- ranks: 2 4  quick: 2
-- SPDX-License-Identifier: MIT
-- Only the runtime's own Lua functions (mp.mpi's glue, mp.pmap, ad's
-- matrix functions) travel by name: a user's function travels as its code
-- whatever its chunk is named, even "=mp..." and even as a field of mp or
-- mp.mpi, and gives every rank what it gives rank 0.
local src = "local tag = ... return function(x) return tag .. ':' .. tostring(x * 2) end"
local fns = {
  -- only rank 0 has mp.twice: by name, the others would find nothing
  {"mp.twice", function(f) mp.twice = f end},
  -- named as the runtime's glue, put in mp.mpi
  {"mp.mpi", function(f) mp.mpi.mine = f end},
  -- in place of a built-in: by name, the others would run the real mp.pmap
  {"mp.pmap", function(f) mp.pmap = f end},
  {"ad.matrix", function(f) ad.user_double = f end},
}
local pmap = mp.pmap
local made = {}
for i, c in ipairs(fns) do
  local f = assert(load(src, "=" .. c[1]))("user" .. i)
  c[2](f)
  made[i] = f
end
package.loaded.travel_own_probe = {} -- the names are looked up afresh as the next task starts
for i, f in ipairs(made) do
  local want = f(21)
  local got = mp.exec(function(g) return mp.gather(g(21)) end, f)
  for r = 0, mp.size - 1 do
    assert(got[r + 1] == want, ("%s on rank %d: %s, rank 0: %s"):format(fns[i][1], r,
           tostring(got[r + 1]), want))
  end
end
mp.pmap = pmap
package.loaded.travel_own_probe = nil -- (the names afresh again)
-- the runtime's own still travel by name: the receiving rank's own function
local Allreduce, transpose = mp.mpi.Allreduce, ad.transpose
assert(mp.exec(function(g) return mp.gather(g == mp.mpi.Allreduce) end, Allreduce)[mp.size] == true)
assert(mp.exec(function(g) return mp.gather(g == mp.pmap) end, pmap)[mp.size] == true)
assert(mp.exec(function(g) return mp.gather(g == ad.transpose) end, transpose)[mp.size] == true)
print("travel_own ok")
