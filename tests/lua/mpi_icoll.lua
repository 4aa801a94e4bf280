-- ranks: 1 2 3 4 5 8 20  quick: 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's nonblocking collectives: each one's Wait gives what the blocking
-- call returns (every root; values small and large on both sides of the
-- 4 KiB size above which arrays are sent in place and of the 64 KiB one
-- where messages go in parts; empty arrays, tables, strings); their
-- requests mix with point-to-point ones in every Wait/Test call; they
-- progress while the rank does other things (Send/Recv, blocking
-- collectives, a Test loop while others compute); several in flight at
-- once; sub-communicators; bad input, mismatches and deadlocks are clear
-- errors; a fault while requests are pending aborts cleanly and the next
-- task works.
local function fails(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok and tostring(err):find(pattern),
         "rank " .. mp.rank .. ": expected '" .. pattern .. "', got " .. tostring(err))
end

-- the same value, exactly: numbers, strings, tables, arrays (by element)
local function same(a, b)
  if type(a) == "table" and type(b) == "table" then
    for k, v in pairs(a) do if not same(v, b[k]) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
  end
  if type(a) == "userdata" and type(b) == "userdata" and a.dtype and b.dtype then
    if a.dtype ~= b.dtype or #a ~= #b then return false end
    for i = 1, #a do if a[i] ~= b[i] then return false end end
    return true
  end
  return a == b
end

-- every call against its blocking twin, for values of several kinds and sizes
local function against_blocking(comm)
  local mpi = mp.mpi
  local me, n = mpi.Comm_rank(comm), mpi.Comm_size(comm)
  local values = {
    function(r) return r * 3 + 1 end,                                   -- integers
    function(r) return {r, x = r / 7} end,                              -- tables
    function(r) return mp.array("f64", 4):fill(r + 0.25) end,           -- small array
    function(r) return mp.array("f64", 511):fill(r) end,                -- 4088 B: inline
    function(r) return mp.array("f64", 513):fill(r) end,                -- 4104 B: in place
    function(r) return mp.array("i64", 9000):fill(r) end,               -- 72 KB: in parts
    function(r) return mp.array("f32", 0) end,                          -- empty
    function(r) return ("s"):rep(r + 1) end,                            -- strings (no reduce)
  }
  for k, val in ipairs(values) do
    local v = val(me)
    local reducible = k ~= 8 and k ~= 2
    for root = 0, n - 1 do
      assert(same(mpi.Wait(mpi.Ibcast(me == root and v or nil, root, comm)),
                  mpi.Bcast(me == root and v or nil, root, comm)))
      assert(same(mpi.Wait(mpi.Igather(v, root, comm)), mpi.Gather(v, root, comm)))
      local t = {}
      for r = 1, n do t[r] = val(me * n + r) end
      assert(same(mpi.Wait(mpi.Iscatter(t, root, comm)), mpi.Scatter(t, root, comm)))
      if reducible then
        local got = mpi.Wait(mpi.Ireduce(v, mpi.SUM, root, comm))
        assert(same(got, mpi.Reduce(v, mpi.SUM, root, comm)), "Ireduce")
        assert(me == root or got == nil)
      end
    end
    assert(same(mpi.Wait(mpi.Iallgather(v, comm)), mpi.Allgather(v, comm)))
    local t = {}
    for r = 1, n do t[r] = val(me * n + r) end
    assert(same(mpi.Wait(mpi.Ialltoall(t, comm)), mpi.Alltoall(t, comm)))
    if reducible then
      -- Iallreduce folds as Reduce does (a binomial tree), bit for bit
      assert(same(mpi.Wait(mpi.Iallreduce(v, mpi.MAX, comm)), mpi.Allreduce(v, mpi.MAX, comm)))
      assert(same(mpi.Wait(mpi.Iallreduce(v, mpi.SUM, comm)), mpi.Bcast(mpi.Reduce(v, mpi.SUM, 0,
                  comm), 0, comm)))
      assert(same(mpi.Wait(mpi.Iscan(v, mpi.SUM, comm)), mpi.Scan(v, mpi.SUM, comm)))
      local ex = mpi.Wait(mpi.Iexscan(v, mpi.SUM, comm))
      if me == 0 then assert(ex == nil) else assert(same(ex, mpi.Exscan(v, mpi.SUM, comm))) end
      if me == 0 then mpi.Exscan(v, mpi.SUM, comm) end
    end
  end
  -- a Lua function as op: not commutative, so the order shows (rank order)
  local cat = function(a, b) return a .. "," .. b end
  local s = mpi.Wait(mpi.Iallreduce(tostring(me), cat, comm))
  local want = {}
  for r = 0, n - 1 do want[r + 1] = tostring(r) end
  assert(s == table.concat(want, ","), s)
  assert(mpi.Wait(mpi.Iscan(tostring(me), cat, comm)) == table.concat(want, ",", 1, me + 1))
  local e = mpi.Wait(mpi.Iexscan({me, me}, mpi.MAXLOC, comm))
  assert(me == 0 and e == nil or e[1] == me - 1 and e[2] == me - 1)
  assert(mpi.Wait(mpi.Ibarrier(comm)) == nil and select("#", mpi.Wait(mpi.Ibarrier(comm))) == 0)
end

mp.exec(against_blocking)
mp.exec(function()
  local mpi = mp.mpi
  local half = mpi.Comm_split(mpi.COMM_WORLD, mp.rank % 2, -mp.rank)
  against_blocking(half)
end)

-- requests of every kind in one list, and many collectives in flight
mp.exec(function()
  local mpi = mp.mpi
  local me, n = mp.rank, mp.size
  local right, left = (me + 1) % n, (me - 1) % n
  local reqs = {mpi.Irecv(left, 1), mpi.Ibarrier(), mpi.Iallreduce(me, mpi.SUM),
                mpi.Isend(me, right, 1), mpi.Igather(me, n - 1), mpi.Ibcast("b", 0)}
  local vals, sts = mpi.Waitall(reqs)
  assert(vals[1] == left and sts[1].source == left)
  assert(vals[2] == nil and vals[3] == n * (n - 1) // 2 and vals[4] == nil)
  assert((me == n - 1) == (vals[5] ~= nil) and vals[6] == "b" and sts[3] == nil)
  -- Waitany / Waitsome / Testall / Testany / Testsome
  local q = {mpi.Iallgather(me), mpi.Irecv(left, 2)}
  mpi.Send(-me, right, 2)
  local got = {}
  for _ = 1, 2 do
    local i, v = mpi.Waitany(q)
    got[i] = v
  end
  assert(#got[1] == n and got[1][n] == n - 1 and got[2] == -left and mpi.Waitany(q) == nil)
  q = {mpi.Iscan(1, mpi.SUM), mpi.Iexscan(1, mpi.SUM)}
  local idx, vs = {}, {}
  while #idx < 2 do
    local i, v = mpi.Waitsome(q)
    for k = 1, #i do idx[#idx + 1] = i[k]; vs[i[k]] = v[k] end
  end
  assert(vs[1] == me + 1 and vs[2] == (me > 0 and me or nil))
  q = {mpi.Ibarrier(), mpi.Ibcast(7, n - 1)}
  local flag, tv
  repeat flag, tv = mpi.Testall(q) until flag
  assert(tv[2] == 7)
  local r = mpi.Iallreduce(2, mpi.PROD)
  local f, i, v
  repeat f, i, v = mpi.Testany({r}) until f
  assert(i == 1 and v == 2 ^ n // 1 and mpi.Testany({r}) == true)
  r = mpi.Ireduce(1, mpi.SUM, 0)
  local ts
  repeat ts = mpi.Testsome({r}) until #ts == 1
  -- 50 in flight, waited in reverse order
  local many = {}
  for k = 1, 50 do many[k] = mpi.Iallreduce(k, mpi.SUM) end
  for k = 50, 1, -1 do assert(mpi.Wait(many[k]) == k * n) end
  -- waited twice: inactive
  fails("request is inactive", mpi.Wait, many[1])
end)

-- progress while the rank does other things
mp.exec(function()
  local mpi = mp.mpi
  local me, n = mp.rank, mp.size
  local right, left = (me + 1) % n, (me - 1) % n
  -- start Ibarrier, then point to point with the others, then wait
  local b = mpi.Ibarrier()
  local v = mpi.Sendrecv(me, right, 3, left, 3)
  assert(v == left)
  mpi.Wait(b)
  -- a blocking collective between start and wait, waited in different orders
  local a = mpi.Iallreduce(1, mpi.SUM)
  if me == 0 then
    assert(mpi.Allreduce(2, mpi.SUM) == 2 * n)
    assert(mpi.Wait(a) == n)
  else
    assert(mpi.Wait(a) == n)
    assert(mpi.Allreduce(2, mpi.SUM) == 2 * n)
  end
  -- rank 0 tests in a loop while the others compute (no mp call) after starting
  local big = mp.array("f64", 20000):fill(me)
  local q = mpi.Iallreduce(big, mpi.SUM)
  if me == 0 then
    local tests = 0
    while not mpi.Test(q) do tests = tests + 1 end
  else
    local x = 0
    for i = 1, 200000 do x = x + math.sin(i) end
    assert(x == x)
    local s = mpi.Wait(q)
    assert(s[1] == n * (n - 1) / 2 and s[20000] == s[1])
  end
end)

-- bad input, named by function, argument and rank
mp.exec(function()
  local mpi = mp.mpi
  local me, n = mp.rank, mp.size
  local R = "%[rank " .. me .. "/" .. n .. "%]"
  fails("bad argument #2 to 'mp.mpi.Ibcast' %(" .. R .. " rank " .. n .. " out of range",
        mpi.Ibcast, 1, n)
  fails("bad argument #3 to 'mp.mpi.Ireduce' %(" .. R .. " rank expected, got string",
        mpi.Ireduce, 1, mpi.SUM, "x")
  fails("bad argument #2 to 'mp.mpi.Iallreduce' %(" .. R .. " op must be sum", mpi.Iallreduce,
        1, "avg")
  fails("mp.mpi.Iscan: " .. R .. " 'band' is not defined on f64 arrays", mpi.Iscan,
        mp.array("f64", 2), mpi.BAND)
  local long = {}
  for i = 1, n + 1 do long[i] = i end
  fails("bad argument #1 to 'mp.mpi.Ialltoall' %(" .. R .. " list of " .. n .. " values %(one " ..
        "per rank%) expected, got " .. (n + 1), mpi.Ialltoall, long)
  fails("bad argument #1 to 'mp.mpi.Iscatter' %(" .. R .. " table expected, got number",
        mpi.Iscatter, 5, me)
  if n > 1 then -- (alone, a rank sends nothing: mp.allgather's rule)
    fails("bad argument #1 to 'mp.mpi.Iallgather' %(" .. R .. " cannot send a thread",
          mpi.Iallgather, coroutine.create(print))
  end
  fails("mp.mpi.Ibarrier", mpi.Ibarrier, "not a communicator")
  local r = mpi.Ibarrier()
  fails("bad argument #1 to 'mp.mpi.Cancel' %(" .. R .. " only receives can be cancelled: .*" ..
        "a collective cannot be%)", mpi.Cancel, r)
  mpi.Wait(r)
  _G.kept = mpi.Ibarrier()
  mpi.Wait(_G.kept)
  _G.kept = mpi.Ibarrier() -- left pending
end)
mp.exec(function()
  fails("request from an earlier or aborted task", mp.mpi.Wait, _G.kept)
end)
fails("not inside a parallel task", mp.mpi.Ibarrier)

-- mismatches and deadlocks, in MPI's words
if mp.size >= 2 then
  local ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    mpi.Wait(mp.rank == 0 and mpi.Ibarrier() or mpi.Iallgather(1))
  end)
  assert(not ok and tostring(err):find("mismatched collectives: rank %d+ called mp%.mpi%.I"),
         tostring(err))
  ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    mpi.Wait(mpi.Ibcast(1, mp.rank == 0 and 0 or 1))
  end)
  assert(not ok and tostring(err):find("mismatched collectives: rank %d+ called mp%.mpi%.Ibcast " ..
         "with root"), tostring(err))
  ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    mpi.Wait(mpi.Iallreduce(1, mp.rank == 0 and mpi.SUM or mpi.MAX))
  end)
  assert(not ok and tostring(err):find("mismatched collectives: rank %d+ called " ..
         "mp%.mpi%.Iallreduce with another op"), tostring(err))
  ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    if mp.rank == 0 then mpi.Wait(mpi.Ibarrier()) end
  end)
  assert(not ok and tostring(err):find("mpi%.Wait%(Ibarrier%): %[rank 0/%d+%] would wait " ..
         "forever: .* finished the task"), tostring(err))
  ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    if mp.rank == 0 then mpi.Wait(mpi.Ibcast(1, 0)) else mpi.Recv(0, 9) end
  end)
  assert(not ok and (tostring(err):find("rank 0 waits in mpi%.Wait%(Ibcast, root 0%) " ..
         "%(collective #1%)") or tostring(err):find("rank 0/%d+%] would wait forever")),
         tostring(err))
end

-- a fault while requests are pending, on every rank in turn; the next task
-- works and sees nothing of the faulted one
local modes = {"Wait", "Waitall", "Test", "Iallreduce big"}
for k = 0, math.min(mp.size, 4) - 1 do
  for _, mode in ipairs(modes) do
    local ok, err = pcall(mp.exec, function(culprit, w)
      local mpi = mp.mpi
      local me = mp.rank
      local r = mpi.Ibarrier()
      local s = mpi.Iallreduce(w == "Iallreduce big" and mp.array("f64", 40000):fill(1) or 1,
                               mpi.SUM)
      if me == culprit then error("boom " .. w) end
      if w == "Wait" then mpi.Wait(s)
      elseif w == "Waitall" then mpi.Waitall({r, s, mpi.Irecv(culprit, 1)})
      elseif w == "Test" then
        local q = mpi.Ibcast(1, culprit)
        repeat until mpi.Test(q)
      else mpi.Wait(mpi.Ibcast(1, culprit)) end
      mpi.Wait(mpi.Ibcast(1, culprit))
    end, k, mode)
    assert(not ok and tostring(err):find("boom " .. mode), tostring(err))
    assert(mp.exec(function()
      local mpi = mp.mpi
      local r = mpi.Ibarrier()
      local s = mpi.Iallreduce(mp.rank, mpi.SUM)
      mpi.Wait(r)
      assert(mpi.Wait(s) == mp.size * (mp.size - 1) // 2)
      assert(not mpi.Iprobe(mpi.ANY_SOURCE, mpi.ANY_TAG))
      return true
    end))
  end
end
print("mpi_icoll ok", mp.size)
