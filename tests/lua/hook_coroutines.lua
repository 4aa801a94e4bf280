-- ranks: 2 3 4
-- SPDX-License-Identifier: MIT
-- A rank running coroutines is stopped when another rank faults, twice on
-- every worker for each kind, wherever the coroutine was made (in the task,
-- in an earlier task, nested in another, wrapped with coroutine.wrap, run
-- under pcall) and through user pcalls on either side: a coroutine that
-- calls the runtime (mp.probe here) is stopped there, and its resumer with
-- it; one that yields back to the main thread is stopped there by the poll
-- hook. The runtime replaces nothing of the coroutine library. (A coroutine
-- spinning in pure Lua without yielding cannot be reached: see
-- mpbuiltins/README.md.)
local kinds = {"new", "old", "nested", "wrap", "pcall", "generator", "generator_pcall"}
assert(coroutine.resume == debug.getregistry()._LOADED.coroutine.resume)
for round = 1, 2 * (mp.size - 1) do -- each kind twice on every worker
  for _, kind in ipairs(kinds) do
    local spinner = round % (mp.size - 1) + 1
    mp.exec(function(spinner) -- a coroutine made before the task that runs it
      if mp.rank == spinner then
        rawset(_G, "old_co", coroutine.create(function() while true do mp.probe() end end))
      end
    end, spinner)
    local ok, err = pcall(mp.exec, function(kind, spinner)
      local function probing() while true do mp.probe() end end
      if mp.rank == spinner then
        mp.send(0, "spinning")
        if kind == "new" then
          coroutine.resume(coroutine.create(probing))
        elseif kind == "old" then
          coroutine.resume(old_co)
        elseif kind == "nested" then
          coroutine.resume(coroutine.create(function()
            coroutine.resume(coroutine.create(probing))
            probing()
          end))
        elseif kind == "wrap" then
          coroutine.wrap(probing)()
        elseif kind == "pcall" then
          pcall(coroutine.wrap(function() pcall(probing) end))
        elseif kind == "generator" then
          local gen = coroutine.wrap(function() local i = 0 while true do i = i + 1 coroutine.yield(i) end end)
          while true do gen() end
        else
          local gen = coroutine.wrap(function() while true do pcall(coroutine.yield) end end)
          while true do pcall(gen) end
        end
        while true do end -- the coroutine was stopped: so is its caller
      elseif mp.rank == 0 then
        mp.recv(spinner) -- fault only once the spinner spins
        error("stop " .. kind)
      end
    end, kind, spinner)
    assert(not ok and tostring(err):find("stop " .. kind, 1, true), tostring(err))
    assert(mp.exec(function() return mp.handin(1) end) == mp.size, "the next task")
  end
end
print("hook_coroutines ok")
