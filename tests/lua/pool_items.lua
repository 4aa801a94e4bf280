-- ranks: 1 2 4  quick: 2
-- SPDX-License-Identifier: MIT
-- Each pool task travels as if sent alone, however the tasks were batched:
-- a table sow returns for several tasks is a table of each task's (work that
-- changes it changes no other task's), a task sees it as it was when sown,
-- and a result is what work returned when it returned it (reap gets a table
-- of each result's). What cannot travel is named by its task, not by its
-- place in a batch. Batch sizes (the test knob _batch) around the
-- scheduler's thresholds (1, two in flight, the largest batch, 512), and
-- adapted to the time per task.
local batches = {1, 2, 3, 511, 512, false}
local function counts(k)
  if not k then return {1, 2, 5, 600} end
  return {1, k - 1, k, k + 1, 2 * k, 2 * k + 1, 4 * k + 3}
end

local function run(k, N, self)
  -- one table for every task, changed by sow before each and by work
  local shared = {hits = 0}
  shared.a, shared.b = {}, {} -- references inside a task stay references
  shared.b = shared.a
  local seen, results = {}, {}
  local cache = {} -- work's own, shared by the tasks a rank runs
  mp.pool{
    _batch = k or nil, self = self,
    sow = function(i)
      if i > N then return nil end
      shared.n = i
      return shared
    end,
    work = function(t)
      assert(t.a == t.b and t.a ~= t, "task " .. t.n .. ": its own references were lost")
      t.hits = t.hits + 1
      cache.n, cache.hits, cache.me = t.n, t.hits, cache
      return cache
    end,
    reap = function(i, r)
      r.reaped = (r.reaped or 0) + 1
      seen[i] = (seen[i] or 0) + 1
      results[i] = r
    end,
  }
  local what = ("batch %s, %d tasks, self %s"):format(tostring(k), N, tostring(self))
  for i = 1, N do
    local r = results[i]
    assert(seen[i] == 1, what .. ": task " .. i .. " reaped " .. tostring(seen[i]) .. " times")
    assert(r.n == i, what .. ": task " .. i .. " ran task " .. tostring(r.n) .. "'s value")
    assert(r.hits == 1, what .. ": task " .. i .. " saw " .. (r.hits - 1) .. " other tasks' change")
    assert(r.reaped == 1, what .. ": result " .. i .. " is another result's table too")
    assert(r.me == r, what .. ": result " .. i .. "'s own reference was lost")
  end
  assert(shared.hits == 0, what .. ": a task changed rank 0's table")
end

for _, k in ipairs(batches) do
  for _, N in ipairs(counts(k)) do
    if N >= 1 then
      run(k, N, true)
      if mp.size > 1 then run(k, N, false) end
    end
  end
end

-- what cannot travel names its task, the function and the rank
local function fails(opts, want)
  local ok, err = pcall(mp.pool, opts)
  err = tostring(err)
  assert(not ok, "no error")
  assert(err:find(want), want .. " not in: " .. err)
  assert(not err:find("value #", 1, true), err)
end
for _, k in ipairs({1, 3, 8}) do
  for _, self in ipairs({true, false}) do
    if self or mp.size > 1 then
      fails({_batch = k, self = self,
             sow = function(i) if i <= 9 then return i == 5 and {1, {coroutine.create(print)}} or i end end,
             work = function(t) return 1 end},
            "mp%.pool: %[rank 0/%d+%] task 5: what sow returned cannot be sent: cannot send a thread %(at %[2%]%[1%]%)")
      fails({_batch = k, self = self,
             sow = function(i) if i <= 9 then return i end end,
             work = function(t) if t == 5 then return {x = coroutine.create(print)} end return t end},
            "mp%.pool: %[rank %d+/%d+%] task 5: what work returned cannot be sent: cannot send a thread %(at %.x%)")
    end
  end
end
-- the test knob is checked
local ok, err = pcall(mp.pool, {_batch = 513, sow = function() end, work = print})
assert(not ok and tostring(err):find("'_batch'", 1, true), tostring(err))
print("pool_items ok")
