-- ranks: 1 2 3 4 5 8  quick: 2
-- SPDX-License-Identifier: MIT
-- Bad input to messages, as a user makes it: wrong argument types, ranks,
-- roots and tags out of range, negative counts, a communicator or a request
-- from an ended task, values that cannot travel (coroutines, userdata, C
-- functions without a name, strided views, nesting 1e5 and 1e6 deep, and
-- what contains them), on every path. Each is a fault of the task on the
-- rank that made it, reported at rank 0 with the function, the argument (or
-- the place in the value) and the rank; never a crash, a hang or a wrong
-- result; and the next task works, with nothing left over.
local n = mp.size
local last = n - 1

-- The next task exchanges around a ring and finds nothing queued.
local function clean(what)
  local ok, err = pcall(mp.exec, function()
    local me, n = mp.rank, mp.size
    assert(#mp.probe() == 0, "a message left over") -- nobody sends before the barrier
    mp.barrier()
    mp.send((me + 1) % n, me, ("x"):rep(70000))
    local v, s = mp.recv((me - 1) % n)
    assert(v == (me - 1) % n and #s == 70000)
    return mp.allreduce(1, "sum")
  end)
  assert(ok and err == n, what .. ": the next task failed: " .. tostring(err))
end

-- f runs on every rank with `bad` true on the rank that errs (the last one;
-- collectives: every rank errs alike); the report must match each pattern
-- (plain text), the rank included.
local cases = 0
local function fails(what, pats, f, every)
  local ok, err = pcall(mp.exec, function(f, last, every)
    f(every or mp.rank == last)
  end, f, last, every)
  assert(not ok, what .. ": no error")
  local text = tostring(err)
  local rank = every and "[rank " or ("[rank %d/%d]"):format(last, n)
  assert(text:find(rank, 1, true), what .. ": the rank is not named: " .. text)
  for _, p in ipairs(pats) do
    assert(text:find(p, 1, true), ("%s: %q not in:\n%s"):format(what, p, text))
  end
  assert(not text:find("internal error", 1, true), what .. ": " .. text)
  clean(what)
  cases = cases + 1
end

-- ------------------------------------------------------------ arguments
fails("send: rank out of range", {"bad argument #1 to 'mp.send'", "rank " .. n .. " out of range 0.." .. last},
      function(bad) if bad then mp.send(mp.size, 1) end end)
fails("send: negative rank", {"bad argument #1 to 'mp.send'", "rank -1 out of range"},
      function(bad) if bad then mp.send(-1, 1) end end)
fails("send: float rank", {"bad argument #1 to 'mp.send'", "got a float"},
      function(bad) if bad then mp.send(0.5, 1) end end)
fails("send: no rank", {"bad argument #1 to 'mp.send'"},
      function(bad) if bad then mp.send() end end)
fails("send: table rank", {"bad argument #1 to 'mp.send'", "empty list"},
      function(bad) if bad then mp.send({}, 1) end end)
fails("send: list item out of range", {"bad argument #1 to 'mp.send'", "item 2", "rank 99"},
      function(bad) if bad then mp.send({0, 99}, 1) end end)
fails("recv: rank out of range", {"bad argument #1 to 'mp.recv'", "out of range"},
      function(bad) if bad then mp.recv(mp.size + 5) end end)
fails("recv: a tag", {"bad argument #2 to 'mp.recv'"},
      function(bad) if bad then mp.recv(0, 1) end end)
fails("recv: a string", {"bad argument #1 to 'mp.recv'"},
      function(bad) if bad then mp.recv("zero") end end)
fails("irecv: a table", {"bad argument #1 to 'mp.irecv'"},
      function(bad) if bad then mp.irecv({}) end end)
fails("isend: rank out of range", {"bad argument #1 to 'mp.isend'", "out of range"},
      function(bad) if bad then mp.isend(mp.size, 1) end end)
fails("wait: not a request", {"mp.wait", "request"},
      function(bad) if bad then mp.wait(5) end end)
fails("waitall: an item", {"bad argument #1 to 'mp.waitall'", "item 2 is not a request"},
      function(bad) if bad then mp.waitall({mp.isend(mp.rank, 1), 7}) end end)
fails("probe: a mode", {"bad argument #1 to 'mp.probe'"},
      function(bad) if bad then mp.probe(3) end end)
fails("bcast: root out of range", {"bad argument #2 to 'mp.bcast'", "out of range"},
      function(bad) mp.bcast(1, mp.size) end, true)
fails("bcast: negative root", {"bad argument #2 to 'mp.bcast'", "rank -1"},
      function(bad) mp.bcast(1, -1) end, true)
fails("gather: float root", {"bad argument #2 to 'mp.gather'"},
      function(bad) mp.gather(1, 0.5) end, true)
fails("scatter: not a list", {"bad argument #1 to 'mp.scatter'", "table expected"},
      function(bad) mp.scatter(mp.rank == 0 and 5 or nil) end, true)
fails("scatter: too short", {"bad argument #1 to 'mp.scatter'", "one per rank"},
      function(bad) mp.scatter(mp.rank == 0 and {} or nil) end, true)
fails("alltoall: too long", {"bad argument #1 to 'mp.alltoall'", "one per rank"},
      function(bad) local t = {} for i = 1, mp.size + 1 do t[i] = i end mp.alltoall(t) end, true)
fails("reduce: an unknown op", {"bad argument #2 to 'mp.reduce'", "op must be"},
      function(bad) mp.reduce(1, "xor") end, true)
fails("allreduce: no op", {"bad argument #2 to 'mp.allreduce'"},
      function(bad) mp.allreduce(1) end, true)
fails("mpi.Send: negative tag", {"bad argument #3 to 'mp.mpi.Send'", "tag -1 is negative"},
      function(bad) if bad then mp.mpi.Send(1, 0, -1) end end)
fails("mpi.Send: tag above TAG_UB", {"bad argument #3 to 'mp.mpi.Send'", "above TAG_UB"},
      function(bad) if bad then mp.mpi.Send(1, 0, mp.mpi.TAG_UB + 1) end end)
fails("mpi.Send: destination", {"bad argument #2 to 'mp.mpi.Send'", "out of range"},
      function(bad) if bad then mp.mpi.Send(1, mp.size, 0) end end)
fails("mpi.Recv: source", {"bad argument #1 to 'mp.mpi.Recv'", "out of range"},
      function(bad) if bad then mp.mpi.Recv(mp.size, 0) end end)
fails("mpi.Recv: tag", {"bad argument #2 to 'mp.mpi.Recv'"},
      function(bad) if bad then mp.mpi.Recv(0, -7) end end)
fails("mpi.Bcast: root", {"bad argument #2 to 'mp.mpi.Bcast'", "root " .. n .. " out of range"},
      function(bad) mp.mpi.Bcast(1, mp.size) end, true)
fails("mpi.Gatherv: negative count", {"bad argument #2 to 'mp.mpi.Gatherv'", "non-negative"},
      function(bad)
        local c, d = {}, {}
        for i = 1, mp.size do c[i], d[i] = 1, i - 1 end
        c[mp.size] = -1
        mp.mpi.Gatherv(mp.array("f64", 1), c, d, 0)
      end, true)
fails("mpi.Scatterv: negative displacement", {"bad argument #3 to 'mp.mpi.Scatterv'"},
      function(bad)
        local c, d = {}, {}
        for i = 1, mp.size do c[i], d[i] = 1, i - 1 end
        d[1] = -1
        mp.mpi.Scatterv(mp.rank == 0 and mp.array("f64", mp.size) or nil, c, d, 0)
      end, true)
fails("mpi.Scatterv: counts past the array", {"mp.mpi.Scatterv"},
      function(bad)
        local c, d = {}, {}
        for i = 1, mp.size do c[i], d[i] = 2, 2 * (i - 1) end
        mp.mpi.Scatterv(mp.rank == 0 and mp.array("f64", mp.size) or nil, c, d, 0)
      end, true)

-- ------------------------------------------------------------ from ended tasks
mp.exec(function() MSGERR_COMM = mp.world:split(0); MSGERR_REQ = mp.isend(mp.rank, 1); mp.recv(mp.rank) end)
fails("a communicator from an ended task", {"mp.send", "communicator from an earlier task"},
      function(bad) if bad then MSGERR_COMM:send(0, 1) end end)
fails("a collective on it", {"mp.bcast", "communicator from an earlier task"},
      function(bad) MSGERR_COMM:bcast(1) end, true)
fails("a request from an ended task", {"mp.wait", "request from an earlier task"},
      function(bad) if bad then MSGERR_REQ:wait() end end)

-- ------------------------------------------------------------ values
local function deep(d) local t = {} for _ = 2, d do t = {t} end return t end
mp.exec(function(f) MSGERR_DEEP = f end, deep)
fails("send: a coroutine", {"bad argument #2 to 'mp.send'", "cannot send a thread (at value #1)"},
      function(bad) if bad then mp.send(0, coroutine.create(print)) end end)
fails("send: the running thread, deep in a table", {"bad argument #2 to 'mp.send'", "cannot send a thread (at value #2 .a[3])"},
      function(bad) if bad then mp.send(0, 1, {a = {1, 2, coroutine.running()}}) end end)
fails("send: a userdata as a key", {"bad argument #2 to 'mp.send'", "cannot send a userdata (at value #1 [<userdata>]<key>)"},
      function(bad) if bad then mp.send(0, {[io.stdout] = 1}) end end)
fails("isend: a file", {"bad argument #2 to 'mp.isend'", "cannot send a userdata"},
      function(bad) if bad then mp.isend(0, io.stderr) end end)
fails("send: a C function without a name", {"bad argument #2 to 'mp.send'", "C function without a name (at value #1 ."},
      function(bad) if bad then mp.send(0, getmetatable(io.stdout)) end end)
fails("send: an upvalue that cannot travel", {"bad argument #2 to 'mp.send'", "<upvalue co>"},
      function(bad) local co = coroutine.create(print); if bad then mp.send(0, function() return co end) end end)
fails("send: a strided view", {"bad argument #2 to 'mp.send'", "strided", ":copy()"},
      function(bad) if bad then mp.send(0, mp.array("f64", 4, 4):view({1, 2}, {1, 2})) end end)
fails("bcast: a strided view", {"bad argument #1 to 'mp.bcast'", "strided"},
      function(bad) mp.bcast(mp.array("f64", 4, 4):view({1, 2}, ":")) end, true)
fails("an ad var", {"bad argument #2 to 'mp.send'", "cannot send"},
      function(bad) if bad then mp.send(0, ad.var(1.0)) end end)
for _, d in ipairs({201, 1e5, 1e6}) do
  fails("send: nesting " .. d, {"bad argument #2 to 'mp.send'", "nesting deeper than 200 levels"},
        function(bad) if bad then mp.send(0, MSGERR_DEEP(d)) end end)
end
fails("metatables nested 1e5 deep", {"bad argument #2 to 'mp.send'", "nesting deeper than 200 levels (at value #1 <metatable>"},
      function(bad)
        if bad then
          local t = {}
          for _ = 1, 1e5 do t = setmetatable({}, t) end
          mp.send(0, t)
        end
      end)
fails("upvalues nested 1e5 deep", {"bad argument #2 to 'mp.send'", "nesting deeper than 200 levels (at value #1 <upvalue h><upvalue g>"},
      function(bad)
        if bad then
          local f = function() end
          for _ = 1, 1e5 do local g = f; f = function() return g end end
          local h = f
          mp.send(0, function() return h end)
        end
      end)
fails("gather: nesting 1e6", {"bad argument #1 to 'mp.gather'", "nesting deeper than 200 levels"},
      function(bad) mp.gather(MSGERR_DEEP(1e6)) end, true)
fails("allreduce: nesting 1e5", {"mp.allreduce", "nesting deeper than 200 levels"},
      function(bad) mp.allreduce(MSGERR_DEEP(1e5), "sum") end, true)
fails("mpi.Send: nesting 1e5", {"bad argument #1 to 'mp.mpi.Send'", "nesting deeper than 200 levels"},
      function(bad) if bad then mp.mpi.Send(MSGERR_DEEP(1e5), 0, 0) end end)
fails("handout: a coroutine", {"bad argument #1 to 'mp.handout'", "cannot send a thread"},
      function(bad) mp.handout(mp.rank == 0 and coroutine.create(print) or nil) end, true)
fails("handin: a coroutine", {"bad argument #1 to 'mp.handin'", "cannot send a thread"},
      function(bad) mp.handin(coroutine.create(print)) end, true)

-- rank 0's own calls, outside a task
local function fails0(what, pats, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, what .. ": no error")
  for _, p in ipairs(pats) do
    assert(tostring(err):find(p, 1, true), ("%s: %q not in:\n%s"):format(what, p, tostring(err)))
  end
  clean(what)
  cases = cases + 1
end
fails0("exec: a coroutine argument", {"mp.exec", "[rank 0/" .. n .. "]", "cannot send a thread"},
       mp.exec, function() end, coroutine.create(print))
fails0("exec: an argument nested 1e6 deep", {"mp.exec", "[rank 0/" .. n .. "]", "nesting deeper than 200 levels"},
       mp.exec, function() end, deep(1e6))
fails0("pool: a task that cannot travel", {"mp.pool", "[rank 0/" .. n .. "]", "cannot send a thread"},
       mp.pool, {sow = function(i) if i <= 2 then return coroutine.create(print) end end,
                 work = function() return 1 end, reap = function() end, self = n == 1})
fails0("pool: a result that cannot travel", {"mp.pool", "cannot send a thread"},
       mp.pool, {sow = function(i) if i <= 2 * n then return i end end,
                 work = function() return coroutine.create(print) end, reap = function() end})
fails0("map: data that cannot travel", {"bad argument #2 to 'mp.mapper'", "cannot send a thread"},
       mp.map_rect, function(th, x) return {1} end, {{1}}, {coroutine.create(print)})
print(("msg_errors ok: %d cases"):format(cases))
