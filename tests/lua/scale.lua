-- ranks: 64
-- SPDX-License-Identifier: MIT
-- Many ranks (oversubscribed here): what scripts/bench/scale.lua times, checked for
-- correctness only: an empty task, an abort and the next task, a deadlock report, a 1 MiB
-- bcast, a pool of 1000 tasks, a transpose.
local P = mp.size

-- an empty task, and one every rank answers
mp.exec(function() end)
assert(mp.exec(function() return mp.handin(1) end) == P)

-- abort and recovery, twice: the last rank faults while the others wait in a barrier
for _ = 1, 2 do
  local ok, e = pcall(mp.exec, function()
    if mp.rank == mp.size - 1 then error("scale: on purpose") end
    mp.barrier()
  end)
  local text = tostring(e)
  assert(not ok and e.rank == P - 1 and not e.deadlock, text)
  assert(text:find(("rank %d/%d faulted: "):format(P - 1, P), 1, true), text)
  assert(text:find("scale: on purpose", 1, true), text)
  assert(e.where[0]:find("mp.barrier", 1, true), e.where[0])
  -- a rank deep in the fan-out tree may meet the abort before the task or its barrier
  local mid = e.where[P // 2]
  assert(mid:find("mp.barrier", 1, true) or mid:find("running at", 1, true) or
         mid:find("had not begun the task", 1, true) or mid:find("was stopped", 1, true), mid)
  assert(mp.exec(function() return mp.handin(1) end) == P)
end

-- a deadlock: every rank waits for the next one
local ok, e = pcall(mp.exec, function() mp.recv((mp.rank + 1) % mp.size) end)
assert(not ok and e.deadlock, tostring(e))
assert(tostring(e):find("deadlock", 1, true), tostring(e))
assert(e.where[P - 1]:find(("mp.recv from rank 0"), 1, true), e.where[P - 1])
assert(mp.exec(function() return mp.handin(1) end) == P)

-- a 1 MiB bcast: every rank has rank 0's bytes
local MiB = 1 << 20
local sums = mp.exec(function(n)
  local a = mp.rank == 0 and mp.array("u8", n):fill(3) or nil
  local b = mp.bcast(a)
  assert(#b == n)
  return mp.handin(b:sum())
end, MiB)
assert(sums == 3 * MiB * P, tostring(sums))

-- a pool of 1000 tasks: every result comes back once
local got, total = 0, 0
mp.pool{sow = function(k) if k <= 1000 then return k end end, work = function(x) return 2 * x end,
        reap = function(_, r) got = got + 1; total = total + r end, progress = false}
assert(got == 1000 and total == 1000 * 1001, ("%d results, total %d"):format(got, total))

-- a transpose of a 256 x 256 f64 array: every element lands where it belongs
local bad = mp.exec(function(n)
  local A = mp.layout(("f64[a=%d, b=%d@1]"):format(n, n))
  local B = mp.layout(("f64[a=%d@1, b=%d]"):format(n, n))
  local a = A:alloc()
  local as, ar = A:local_shape(), A:range()
  for j = 1, as[2] do for i = 1, as[1] do a:set(i, j, (ar[1][1] + i) * n + ar[2][1] + j) end end
  local b = mp.transpose(A, B):forward(a)
  local bs, br = B:local_shape(), B:range()
  local wrong = 0
  for j = 1, bs[2] do
    for i = 1, bs[1] do
      if b:get(i, j) ~= (br[1][1] + i) * n + br[2][1] + j then wrong = wrong + 1 end
    end
  end
  return mp.handin(wrong)
end, 256)
assert(bad == 0, ("%d elements misplaced"):format(bad))
print("scale ok at " .. P .. " ranks")
