-- ranks: 2 3 4
-- Every thread that runs Lua during a task can be stopped: a rank spinning
-- in a coroutine (made in the task, made in an earlier task and resumed in
-- this one, nested in another, wrapped with coroutine.wrap, or resumed from
-- inside a pcall) is interrupted when another rank faults, many times over.
local kinds = {"new", "old", "nested", "wrap", "pcall"}
mp.exec(function() -- coroutines made before the task that runs them
  rawset(_G, "old_co", coroutine.create(function() while true do end end))
end)
for round = 1, 8 do
  for _, kind in ipairs(kinds) do
    local spinner = round % (mp.size - 1) + 1
    local ok, err = pcall(mp.exec, function(kind, spinner)
      if mp.rank == spinner then
        mp.send(0, "spinning")
        if kind == "new" then
          coroutine.resume(coroutine.create(function() while true do end end))
        elseif kind == "old" then
          coroutine.resume(old_co)
        elseif kind == "nested" then
          coroutine.resume(coroutine.create(function()
            coroutine.resume(coroutine.create(function() while true do end end))
            while true do end
          end))
        elseif kind == "wrap" then
          coroutine.wrap(function() while true do end end)()
        else
          pcall(coroutine.wrap(function() pcall(function() while true do end end) end))
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
