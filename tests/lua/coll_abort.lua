-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- A fault inside a collective or a pool on one rank aborts the task cleanly
-- everywhere, and the next task works; repeated.
for k = 1, 20 do
  local bad = k % mp.size
  local ok, err = pcall(mp.exec, function(b)
    local a = mp.array("f64", 100000)
    if mp.rank == b then error("fault in collective") end
    mp.allreduce(a, "sum")
    mp.barrier()
  end, bad)
  assert(not ok and tostring(err):find("fault in collective"), tostring(err))
  if mp.size > 1 then
    ok, err = pcall(mp.exec, function(b)
      mp.allreduce(mp.rank, function(x, y) if mp.rank == b then error("bad op") end return x + y end)
    end, 0)
    assert(not ok and tostring(err):find("bad op"), tostring(err))
  end
  -- mismatched collectives are an error, not a hang
  if mp.size > 1 then
    ok, err = pcall(mp.exec, function()
      if mp.rank == 0 then mp.gather(1) else mp.allgather(1) end
    end)
    assert(not ok and tostring(err):find("mismatched collectives"), tostring(err))
  end
  ok, err = pcall(mp.pool, {sow = function(n) if n <= 50 then return n end end,
                            work = function(t) if t == 30 then error("pool fault") end return t end})
  assert(not ok and tostring(err):find("pool fault"), tostring(err))
  assert(mp.exec(function() return mp.allreduce(1, "sum") end) == mp.size)
  local r = mp.pmap(function(x) return x + 1 end, {1, 2, 3})
  assert(r[3] == 4)
end
print("coll_abort ok")
