-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- A collective's result holds the caller's own share as the other members
-- get theirs, through the codec: a copy that never aliases the caller's
-- tables or typed arrays (gather at the root, allgather, alltoall, scatter
-- at the root, scan at rank 0), and a value that cannot travel is an error
-- on every rank and at every size, one rank included, not only where it had
-- to be sent (bcast at a root alone too: it keeps its own value, as
-- documented, but checks that it could travel).
local n = mp.size
mp.exec(function()
  local me, n = mp.rank, mp.size
  local a, t = mp.array("f64", {1, 2, 3}), {x = {1}, s = "own"}
  local function fresh(v, w, what)
    assert(v ~= w, what .. ": the caller's own value came back (aliased)")
    if type(w) == "table" then
      assert(v.s == "own" and v.x[1] == 1 and v.x ~= w.x, what .. ": not a copy")
    else
      assert(v.dtype == "f64" and #v == 3 and v[3] == 3.0, what .. ": not a copy")
    end
  end
  for _, v in ipairs({a, t}) do
    local k = type(v)
    for root = 0, n - 1 do
      local g = mp.gather(v, root)
      if me == root then fresh(g[me + 1], v, "gather of a " .. k) end
      local l = {}
      for i = 1, n do l[i] = v end
      local s = mp.scatter(me == root and l or nil, root)
      if me == root then fresh(s, v, "scatter of a " .. k) end
    end
    fresh(mp.allgather(v)[me + 1], v, "allgather of a " .. k)
    local l = {}
    for i = 1, n do l[i] = v end
    fresh(mp.alltoall(l)[me + 1], v, "alltoall of a " .. k)
    fresh(mp.mpi.Allgather(v)[me + 1], v, "mpi.Allgather of a " .. k)
  end
  local s = mp.scan(a, "sum")
  if me == 0 then fresh(s, a, "scan at rank 0") end
  a[1] = 7 -- changing the input changes no result
end)

-- What cannot travel fails on every rank (each catches its own error, so
-- no rank waits for another), at every size.
local bad = {
  {"gather", function(co) return mp.gather(co) end},
  {"allgather", function(co) return mp.allgather(co) end},
  {"alltoall", function(co) local l = {} for i = 1, mp.size do l[i] = co end return mp.alltoall(l) end},
  {"mpi.Gather", function(co) return mp.mpi.Gather(co, 0) end},
}
for _, case in ipairs(bad) do
  mp.exec(function(f)
    local ok, err = pcall(f, coroutine.create(print))
    COLL_OWN_ERR = ok and "no error" or tostring(err)
  end, case[2])
  local errs = mp.exec(function() return table.concat(mp.gather(COLL_OWN_ERR) or {}, "\n") end)
  local k = 0
  for line in errs:gmatch("[^\n]+") do
    k = k + 1
    assert(line:find("cannot send a thread", 1, true), case[1] .. ": " .. line)
  end
  assert(k == n)
end
-- bcast from a root alone, scan, and allreduce with a Lua op on one rank
-- (its value is handed out as a bcast's): where the value is never sent
if n == 1 then
  for name, f in pairs({bcast = function(co) return mp.bcast(co) end,
                        scan = function(co) return mp.scan(co, function(a, b) return a end) end,
                        allreduce = function(co) return mp.allreduce(co, function(a, b) return a end) end}) do
    local ok, err = pcall(mp.exec, f, nil)
    ok, err = pcall(mp.exec, function(f) return f(coroutine.create(print)) end, f)
    assert(not ok and tostring(err):find("bad argument #1 to 'mp." .. name .. "' ([rank 0/1] cannot send a thread", 1, true), name .. ": " .. tostring(err))
  end
end
print("coll_own ok")
