-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
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
  -- nothing is accepted silently: an empty list, extra arguments
  local me = "%[rank " .. mp.rank .. "/" .. size .. "%]"
  fails_("bad argument #1 to 'mp.send' %(" .. me .. " empty list of destinations", mp.send, {}, 1)
  fails_("bad argument #1 to 'mp.isend' %(" .. me .. " empty list of destinations", mp.isend, {}, 1)
  fails_("bad argument #2 to 'mp.recv' %(" .. me .. " mp.recv takes at most a source rank, got 2",
         mp.recv, 0, 1)
  fails_("bad argument #2 to 'mp.irecv' %(" .. me .. " mp.irecv takes at most a source rank",
         mp.irecv, 0, "tag")
  fails_("bad argument #2 to 'mp.recv' %(" .. me, mp.world.recv, mp.world, 0, 1)
  fails_("bad argument #2 to 'mp.handin' %(" .. me .. " mp.handin takes one value, got 2",
         mp.handin, 1, 2)
  fails_("bad argument #1 to 'mp.barrier' %(" .. me .. " mp.barrier takes no arguments, got 1",
         mp.barrier, "now")
  fails_("bad argument #1 to 'mp.barrier' %(" .. me, mp.world.barrier, mp.world, 1)
  fails_("bad argument #1 to 'mp.allreduce' %(" .. me .. " 'band' needs integers, got 1.5%)",
         mp.allreduce, 1.5, "band")
  fails_("bad argument #1 to 'mp.Comm.split' %(" .. me .. " color must be an integer or nil",
         mp.world.split, mp.world, "red")
  fails_("bad argument #2 to 'mp.Comm.split' %(" .. me .. " key must be an integer",
         mp.world.split, mp.world, 1, {})
  if mp.rank > 0 then
    fails_("bad argument #1 to 'mp.handout' %(" .. me .. " only rank 0 hands values out",
           mp.handout, 42)
  end
  assert(mp.allreduce(6.0, "band") == 6, "a float with an integer value is an integer")
end, n)

-- a 'bor' of a float inside a table from another rank names it
if n > 1 then
  local ok0, err0 = pcall(mp.exec, function()
    return mp.allreduce({mp.rank == n - 1 and 2.5 or 3}, "bor")
  end)
  assert(not ok0 and tostring(err0):find("'bor' needs integers, got 2.5 from rank " .. (n - 1), 1,
         true), tostring(err0))
end

-- unserializable exec argument: reported before the task starts
fails("mp.exec: %[rank 0/%d+%] cannot send a userdata %(at value #2", mp.exec, function() end, io.stdout)
-- keyed fields or a bad total are refused, not dropped
fails("bad argument #2 to 'mp.array' %(%[rank 0/%d+%] a list expected", mp.array, "f64", {x = 1})
fails("bad argument #2 to 'mp.array' %(%[rank 0/%d+%] a list expected", mp.array, "f64", {1, 2, y = 3})
fails("bad argument #1 to 'mp.pool' %(%[rank 0/%d+%] field 'total' must be a non%-negative integer",
      mp.pool, {total = "x", sow = function() end, work = print})
fails("bad argument #2 to 'mp.pmap' %(%[rank 0/%d+%] table expected, got number", mp.pmap, print, 5)
fails("bad argument #1 to 'mp.pmap' %(%[rank 0/%d+%] function expected, got nil", mp.pmap, nil, {1})
-- out of range, not clamped or taken for "off"
fails("bad argument #1 to 'mp.nfan' %(%[rank 0/%d+%] fan%-out must be an integer in 1%.%.", mp.nfan, 1e18)
fails("bad argument #1 to 'mp.nfan'", mp.nfan, 0)
assert(mp.nfan(mp.nfan()) == mp.nfan())
for _, bad in ipairs({-1, 0 / 0, 1e300, math.huge, "soon"}) do
  fails("bad argument #1 to 'mp.watchdog' %(%[rank 0/%d+%] field 'seconds' must be a number of seconds",
        mp.watchdog, {seconds = bad})
end
assert(mp.watchdog{seconds = 0} == 0 and mp.watchdog() == 0)
-- mp.trace's own names and the rank, never '?' or argument #-1
fails("bad argument #1 to 'mp.trace.start' %(%[rank 0/%d+%] options table expected, got number",
      mp.trace.start, 5)
fails("bad argument #1 to 'mp.trace.start' %(%[rank 0/%d+%] field 'events' must be an integer",
      mp.trace.start, {events = "many"})
fails("bad argument #1 to 'mp.trace.start' %(%[rank 0/%d+%] field 'file' must be a string",
      mp.trace.start, {file = 1})
fails("bad argument #1 to 'mp.trace.matrix' %(%[rank 0/%d+%] options table expected", mp.trace.matrix, 5)
fails("bad argument #1 to 'mp.trace.matrix' %(%[rank 0/%d+%] field 'by' must be a string",
      mp.trace.matrix, {by = 5})
fails("bad argument #1 to 'mp.trace.matrix' %(%[rank 0/%d+%] field 'kind': unknown kind",
      mp.trace.matrix, {kind = "nope"})
fails("mp.trace.stop: %[rank 0/%d+%] not tracing", mp.trace.stop)
fails("bad argument #1 to 'mp.trace.mark' %(%[rank 0/%d+%] name %(a string%) expected, got no value",
      mp.trace.mark)
fails("bad argument #2 to 'mp.trace.region' %(%[rank 0/%d+%] function expected",
      mp.trace.region, "r")
fails("theta must be a list of parameter vectors, got nil", mp.mapper(function() return {1} end, {{1}}))

-- Lua's own argument checks, raised in a task, name the function and the rank
local ok, err = pcall(mp.exec, function() if mp.rank == 0 then mp.probe("q") end end)
assert(not ok and tostring(err):find("bad argument #1 to 'mp.probe' ([rank 0/" .. n .. "] number expected, got string)", 1, true), tostring(err))
ok, err = pcall(mp.exec, function() if mp.rank == 0 then mp.array("f64", 2):get("x") end end)
assert(not ok and tostring(err):find("to 'mp.Array:get' ([rank 0/" .. n, 1, true), tostring(err))
assert(not tostring(err):find("[C]: in ?", 1, true), "the runtime's own frames are shown")

-- the session still works
assert(mp.exec(function() return mp.handin(1) end) == n)
print("errors ok")
