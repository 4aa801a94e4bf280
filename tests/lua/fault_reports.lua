-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- Reports of unusual faults. A pure-Lua stack overflow in a task is
-- reported with stock Lua's traceback (lauxlib's shape, as lua5.4 prints
-- it): its first ten levels, the count skipped, the last eleven. An
-- error whose __close handler then waits for a message that never comes is
-- reported as that error, not as a deadlock. The next task works each time.
local n = mp.size
local last = n - 1

local function still_works()
  assert(mp.exec(function() return mp.handin(1) end) == n)
end

-- a task in which the ranks `which` names (a rank list, read as a set) overflow a
-- pure-Lua stack while the others wait in a barrier: the report, with its bounded traceback
local function overflow(which)
  local ok_, err = pcall(mp.exec, function(ranks)
    for _, r in ipairs(ranks) do
      if r == mp.rank then
        local function f(k) return 1 + f(k + 1) end
        return f(1)
      end
    end
    mp.barrier()
  end, which)
  local report = tostring(err)
  assert(not ok_ and report:find("stack overflow", 1, true) and
         report:find("\n\t...\t%(skipping %d+ levels%)\n"), report)
  return err, report
end

-- one rank overflows while the others wait in a barrier, three times: the
-- runtime's poll ticks must not take a deep stack's time (each lua_sethook
-- walks every frame; a rank then spent minutes in them)
local ok, e, text, _, shown
for _ = 1, 3 do
  e, text = overflow({last})
  assert(text:find(("rank %d/%d faulted: "):format(last, n), 1, true), text)
  -- the first ten levels, the gap, then the last ones down to the task's function
  local head, tail = text:match("^(.-)\n\t...\t%(skipping %d+ levels%)(.*)$")
  assert(head and tail, text)
  _, shown = head:gsub("in upvalue 'f'", "")
  assert(shown == 10, ("%d levels shown first"):format(shown))
  assert(tail:find("in upvalue 'f'", 1, true) and tail:find("in local 'f'", 1, true), text)
  assert(e.rank == last and not e.deadlock)
  still_works()
end

-- every worker at once (rank 0's own overflow is the one above at 1 rank)
local workers = {}
for r = 1, last do workers[r] = r end
overflow(n == 1 and {0} or workers)
still_works()

-- rank 0 fails at once while the workers would loop forever: a worker that the
-- abort reached before it began the task is said to have not begun it, never to have
-- finished it (many rounds: where the abort finds a worker varies)
if n > 1 then
  for _ = 1, 20 do
    ok, e = pcall(mp.exec, function()
      if mp.rank == 0 then error("at once") end
      while true do end
    end)
    text = tostring(e)
    assert(not ok and text:find("rank 0/" .. n .. " faulted: ", 1, true), text)
    assert(not text:find("had finished the task", 1, true), text)
  end
  still_works()
end

-- a stack of some depth: the first and the last levels, and what lies between counted
ok, e = pcall(mp.exec, function()
  local function deep(k)
    if k == 0 then error("at the bottom") end
    local r = deep(k - 1)
    return r
  end
  if mp.rank == 0 then deep(40) end
end)
text = tostring(e)
local skipped = tonumber(text:match("\n\t%.%.%.\t%(skipping (%d+) levels%)"))
assert(not ok and text:find("at the bottom", 1, true) and skipped, text)
_, shown = text:gsub(" 'deep'", "") -- upvalue 'deep', and the outermost local 'deep'
-- (lauxlib's count, as lua5.4 prints it, leaves out the level where the gap begins)
assert(shown + skipped == 40, ("%d shown, %d skipped"):format(shown, skipped))
assert(text:find("in function 'mp.exec'", 1, true), "the last levels are shown: " .. text)
still_works()

-- an error, then its __close handler waits for a message that never comes
local who = 1 % n
ok, e = pcall(mp.exec, function(r)
  local guard <close> = setmetatable({}, {__close = function()
    if mp.rank == r then mp.recv(0) end
  end})
  if mp.rank == r then error("the first error") end
  mp.barrier()
end, who)
text = tostring(e)
assert(not ok and text:find(("rank %d/%d faulted: .-the first error"):format(who, n)), text)
assert(not e.deadlock and not text:find("deadlock", 1, true), text)
still_works()

-- every rank fails, and each close waits for its neighbour
ok, e = pcall(mp.exec, function()
  local guard <close> = setmetatable({}, {__close = function()
    if mp.size > 1 then mp.recv((mp.rank + 1) % mp.size) end
  end})
  error("everyone fails")
end)
text = tostring(e)
assert(not ok and text:find("faulted: .-everyone fails") and not e.deadlock, text)
still_works()

-- rank 0 fails and its close waits for a rank that has finished
ok, e = pcall(mp.exec, function()
  local guard <close> = setmetatable({}, {__close = function()
    if mp.rank == 0 and mp.size > 1 then mp.recv(1) end
  end})
  if mp.rank == 0 then error("rank 0 fails") end
end)
text = tostring(e)
assert(not ok and text:find("rank 0/" .. n .. " faulted: .-rank 0 fails") and
       not text:find("would wait forever", 1, true), text)
still_works()
print("fault_reports ok", n)
