-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- Every collective on Lua values over mp.world and over split communicators,
-- compared with a serial computation; named ops and a Lua function op.
local function check(c, tag)
  local n, me = c.size, c.rank
  local function v(r) return r + 1 end
  assert(c:bcast(me == 0 and {x = "hi"} or nil).x == "hi", tag)
  assert(c:bcast(me == n - 1 and 7 or nil, n - 1) == 7, tag)
  local sum, prod, mx = 0, 1, 0
  for r = 0, n - 1 do sum = sum + v(r); prod = prod * v(r); mx = math.max(mx, v(r)) end
  assert(c:allreduce(v(me), "sum") == sum, tag)
  assert(c:allreduce(v(me), "prod") == prod, tag)
  assert(c:allreduce(v(me), "max") == mx and c:allreduce(v(me), "min") == 1, tag)
  assert(c:allreduce(v(me), "band") == (n == 1 and 1 or 0) or n > 1, tag)
  assert(c:allreduce(me == 0, "lor") == true and c:allreduce(me == 0, "land") == (n == 1), tag)
  local r = c:reduce(v(me), "sum", n - 1)
  assert((me == n - 1) == (r ~= nil) and (r == nil or r == sum), tag)
  -- tables element-wise, and a Lua function in the documented tree order
  local t = c:allreduce({a = v(me), b = {v(me)}}, "sum")
  assert(t.a == sum and t.b[1] == sum, tag)
  local s = c:allreduce(tostring(me), function(a, b) return a .. b end)
  local want = ""
  for q = 0, n - 1 do want = want .. q end
  assert(s == want, tag .. " " .. s)
  local pre = 0
  for q = 0, me do pre = pre + v(q) end
  assert(c:scan(v(me), "sum") == pre, tag)
  local g = c:gather(me * 10, 0)
  if me == 0 then for q = 1, n do assert(g[q] == (q - 1) * 10) end else assert(g == nil) end
  local ag = c:allgather({me})
  for q = 1, n do assert(ag[q][1] == q - 1) end
  local sc = {}
  for q = 1, n do sc[q] = "s" .. q end
  assert(c:scatter(me == 0 and sc or nil, 0) == "s" .. (me + 1), tag)
  local a2a = {}
  for q = 1, n do a2a[q] = me * 100 + q - 1 end
  local got = c:alltoall(a2a)
  for q = 1, n do assert(got[q] == (q - 1) * 100 + me, tag) end
  c:barrier()
end

mp.exec(function()
  check(mp.world, "world")
  local half = mp.world:split(mp.rank % 2)
  check(half, "split")
  local rev = mp.world:split(0, -mp.rank)
  assert(rev.rank == mp.size - 1 - mp.rank)
  check(rev, "reversed")
  check(half:dup(), "dup")
  assert(mp.world:split(nil) == nil)
  rawset(_G, "OLD", half)
end)
-- a communicator from an earlier task is refused, clearly
local ok, err = pcall(mp.exec, function() OLD:barrier() end)
assert(not ok and tostring(err):find("communicator from an earlier task"), tostring(err))
mp.exec(function() mp.world:barrier() end)
print("coll_values ok")
