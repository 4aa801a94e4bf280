-- ranks: 1 2 3 4
-- Bad input gets a clear Lua error naming the function, the argument and the
-- rank; never a crash or a hang.
local n = mp.size
local function fails(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  err = tostring(err)
  assert(err:find(pattern), "error '" .. err .. "' does not match '" .. pattern .. "'")
end

-- outside a task
fails("not inside a parallel task", mp.send, 0, 1)
fails("not inside a parallel task", mp.recv, 0)
fails("not inside a parallel task", mp.probe)
fails("not inside a parallel task", mp.handout, 1)
fails("bad argument #1 to 'mp.exec'", mp.exec, 42)

-- inside a task, on every rank
mp.exec(function(size)
  local function fails_(pattern, f, ...)
    local ok, err = pcall(f, ...)
    assert(not ok and tostring(err):find(pattern),
           "rank " .. mp.rank .. ": expected " .. pattern .. ", got " .. tostring(err))
  end
  fails_("bad argument #1 to 'mp.send' %(%[rank " .. mp.rank .. "/" .. size .. "%] rank " .. size ..
         " out of range 0%.%." .. (size - 1) .. "%)", mp.send, size, 1)
  fails_("rank %-1 out of range", mp.recv, -1)
  fails_("rank list item 2 is not an integer", mp.send, {0, "x"}, 1)
  fails_("bad argument #2 to 'mp.send' %(%[rank %d+/%d+%] cannot send a thread", mp.send, 0,
         coroutine.create(print))
  fails_("cannot send a userdata", mp.send, 0, {1, {io.stdout}})
  if mp.rank == 0 then
    fails_("cannot start a task inside a task", mp.exec, print)
  else
    fails_("only rank 0 starts parallel tasks", mp.exec, print)
  end
  fails_("would wait forever", mp.recv, mp.rank) -- nothing queued from itself
  fails_("mode must be 0, 1 or 2", mp.probe, 3)
end, n)

-- unserializable exec argument: reported before the task starts
fails("mp.exec: %[rank 0/%d+%] cannot send a userdata %(at value #2", mp.exec, function() end, io.stdout)
-- keyed fields or a bad total are refused, not dropped
fails("bad argument #2 to 'mp.array' %(a list expected", mp.array, "f64", {x = 1})
fails("bad argument #2 to 'mp.array' %(a list expected", mp.array, "f64", {1, 2, y = 3})
fails("bad argument #1 to 'mp.pool' %(%[rank 0/%d+%] field 'total' must be a non%-negative integer",
      mp.pool, {total = "x", sow = function() end, work = print})
fails("bad argument #2 to 'mp.pmap' %(%[rank 0/%d+%] table expected, got number", mp.pmap, print, 5)
fails("theta must be a list of parameter vectors, got nil", mp.mapper(function() return {1} end, {{1}}))

-- Lua's own argument checks, raised in a task, name the function and the rank
local ok, err = pcall(mp.exec, function() mp.probe("q") end)
assert(not ok and tostring(err):find("bad argument #1 to 'mp.probe' ([rank 0/" .. n .. "] number expected, got string)", 1, true), tostring(err))
ok, err = pcall(mp.exec, function() mp.array("f64", 2):get("x") end)
assert(not ok and tostring(err):find("to 'mp.Array:get' ([rank 0/" .. n, 1, true), tostring(err))
assert(not tostring(err):find("[C]: in ?", 1, true), "the runtime's own frames are shown")

-- the session still works
assert(mp.exec(function() return mp.handin(1) end) == n)
print("errors ok")
