-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- Nonblocking messages: isend/irecv of every kind of value, requests waited
-- out of order, waitall/waitany, test() polling loops, symmetric exchanges,
-- sub-communicators; a request from an earlier task is an error, and a fault
-- while ranks sit in waitall aborts cleanly.
local n = mp.size

local function fails(pattern, f, ...)
  local ok, err = pcall(f, ...)
  err = tostring(err)
  assert(not ok and err:find(pattern), "rank " .. mp.rank .. ": expected '" .. pattern ..
         "', got " .. (ok and "success" or "'" .. err .. "'"))
end
rawset(_G, "fails", fails)

-- every kind of value, around the ring (to itself at 1 rank)
mp.exec(function()
  local me, size = mp.rank, mp.size
  local right, left = (me + 1) % size, (me - 1) % size
  local big = mp.array("f64", 1 << 18)               -- 2 MiB: zero-copy parts
  for i = 1, #big do big[i] = i * 0.5 + me end
  local cyc = {name = "cycle"}
  cyc.self = cyc
  local shared = {7}
  local k = 10
  local function fact(x) if x <= 1 then return 1 end return x * fact(x - 1) end
  local s = mp.isend(right, nil, true, false, math.mininteger, 0.1, 0/0, -0.0,
                     "bin\0\255", string.rep("s", 1 << 20), {a = {b = "deep"}, shared, shared},
                     cyc, fact, function(x) return x + k end, math.sin, big,
                     mp.array("i32", {1, -2, 3}), mp.array("u8", 2, 3):fill(255), me)
  assert(tostring(s):find("^mp.Request %(isend to " .. right))
  local r = mp.irecv(left)
  local v = table.pack(r:wait())
  assert(v.n == 18, "value count " .. v.n)
  assert(v[1] == nil and v[2] == true and v[3] == false and v[4] == math.mininteger)
  assert(math.type(v[5]) == "float" and v[5] == 0.1 and v[6] ~= v[6] and 1 / v[7] == -math.huge)
  assert(v[8] == "bin\0\255" and #v[9] == 1 << 20 and v[9]:sub(-1) == "s")
  assert(v[10].a.b == "deep" and v[10][1] == v[10][2] and v[10][1][1] == 7)
  assert(v[11].self == v[11] and v[12](10) == 3628800 and v[13](5) == 15 and v[14] == math.sin)
  local a = v[15]
  assert(a.dtype == "f64" and #a == 1 << 18 and a[1] == 0.5 + left and a[#a] == #a * 0.5 + left)
  assert(v[16][2] == -2 and v[17]:get(2, 3) == 255 and v[18] == left)
  assert(select("#", s:wait()) == 0, "a send's wait returns nothing")
  for i = 1, #big do big[i] = -1 end -- ours again once the send completed
  fails("request already completed", r.wait, r)
  fails("request already completed", s.test, s)
  assert(tostring(r):find("used"))
end)

-- requests waited out of order get the messages in posting order; irecv()
-- returns the sender first; a message an irecv took is not seen by recv
mp.exec(function()
  local me, size = mp.rank, mp.size
  local K = 20
  if me ~= 0 then
    for i = 1, K do mp.isend(0, me, i) end
    mp.send(0, "tail", me)
    return
  end
  if size == 1 then return end
  local reqs = {}
  for r = 1, size - 1 do
    reqs[r] = {}
    for i = 1, K do reqs[r][i] = mp.irecv(r) end
  end
  for r = size - 1, 1, -1 do -- last rank first, each one's requests backwards
    for i = K, 1, -1 do
      local who, ii = reqs[r][i]:wait()
      assert(who == r and ii == i, ("request %d of %d got #%s of %s"):format(i, r, ii, who))
    end
  end
  -- any sender: the tails, sender first
  local any = {}
  for i = 1, size - 1 do any[i] = mp.irecv() end
  local seen = {}
  for i = size - 1, 1, -1 do
    local from, tag, who = any[i]:wait()
    assert(tag == "tail" and from == who and not seen[from])
    seen[from] = true
  end
end)

mp.exec(function()
  local me, size = mp.rank, mp.size
  if size == 1 then return end
  if me == 1 then
    mp.send(0, 1)
    mp.send(0, 2)
  elseif me == 0 then
    local r = mp.irecv(1) -- posted before either arrives (or takes the oldest)
    assert(mp.recv(1) == 2, "recv must not see what an irecv took")
    assert(r:wait() == 1)
    assert(#mp.probe() == 0)
  end
end)

-- waitall and waitany, mixed sends and receives; test() polling loops
mp.exec(function()
  local me, size = mp.rank, mp.size
  local reqs = {}
  for r = 0, size - 1 do
    reqs[#reqs + 1] = mp.isend(r, "to", r, "from", me)
    reqs[#reqs + 1] = mp.irecv(r)
  end
  local res = mp.waitall(reqs)
  assert(#res == 2 * size)
  for r = 0, size - 1 do
    local s, v = res[2 * r + 1], res[2 * r + 2]
    assert(s.n == 0 and v.n == 4 and v[2] == me and v[4] == r)
  end
  fails("request already completed %(its wait or test returned%) %(item 1%)", mp.waitall, reqs)
  assert(#mp.waitall({}) == 0)
  -- waitany until every request is used up
  reqs = {}
  for r = 0, size - 1 do reqs[#reqs + 1] = mp.irecv(r) end
  for r = size - 1, 0, -1 do mp.send(r, me * 100) end
  local got = {}
  for _ = 1, size do
    local i, v = mp.waitany(reqs)
    assert(not got[i] and v == (i - 1) * 100)
    got[i] = true
  end
  assert(mp.waitany(reqs) == nil, "every request used up: nil")
  -- test() polling: a 4 MiB array to the right, from the left
  local right, left = (me + 1) % size, (me - 1) % size
  local a = mp.array("i64", 1 << 19):fill(me)
  local s, r = mp.isend(right, a), mp.irecv(left)
  local done_s, done_r, polls, got_a = false, false, 0, nil
  while not (done_s and done_r) do
    if not done_s then done_s = s:test() end
    if not done_r then
      local ok, v = r:test()
      if ok then done_r, got_a = true, v end
    end
    polls = polls + 1
  end
  assert(got_a[1] == left and got_a[#got_a] == left and #got_a == 1 << 19 and polls >= 1)
  fails("bad argument #1 to 'mp.waitall' %(%[rank %d+/%d+%] item 2 is not a request: number%)",
        mp.waitall, {mp.isend(me, 1), 5})
  mp.recv(me)
  local q = mp.irecv(me)
  fails("item 2 is a request listed twice", mp.waitall, {q, q})
  fails("would wait forever", q.wait, q)
  fails("would wait forever", mp.waitany, {q})
  mp.isend(me, "late")
  assert(mp.wait(q) == "late")
end)

-- symmetric exchange: everyone isends to everyone, then irecvs (1 MiB strings
-- and 1 MiB arrays); nothing deadlocks whatever the order of the waits
mp.exec(function()
  local me, size = mp.rank, mp.size
  local str = string.rep(string.char(65 + me), 1 << 20)
  local arr = mp.array("f32", 1 << 18):fill(me)
  local sends, recvs = {}, {}
  for r = 0, size - 1 do
    sends[#sends + 1] = mp.isend(r, str, arr, me)
  end
  for r = 0, size - 1 do recvs[r + 1] = mp.irecv(r) end
  for r = size - 1, 0, -1 do
    local s, a, who = recvs[r + 1]:wait()
    assert(who == r and #s == 1 << 20 and s:byte(1) == 65 + r and s:byte(-1) == 65 + r)
    assert(#a == 1 << 18 and a[1] == r and a[#a] == r)
  end
  mp.waitall(sends)
end)

-- arrays that only pending sends hold stay alive until MPI is done with them,
-- even when the requests are dropped unwaited: rank 1 takes the messages only
-- once rank 0 has collected the requests and reused the memory (it says so
-- on a communicator of its own, read first)
mp.exec(function()
  local me, size = mp.rank, mp.size
  if size == 1 then return end
  local side = mp.world:dup()
  if me == 0 then
    local reqs = {}
    for i = 1, 8 do reqs[i] = mp.isend(1, mp.array("f64", 1 << 16):fill(i), i) end
    reqs = nil
    collectgarbage()
    collectgarbage()
    local junk = {}
    for i = 1, 8 do junk[i] = mp.array("f64", 1 << 16):fill(-1) end
    side:send(1, "collected")
  elseif me == 1 then
    assert(side:recv(0) == "collected")
    for i = 1, 8 do
      local a, ii = mp.recv(0)
      assert(ii == i and a[1] == i and a[#a] == i, "array freed while in flight")
    end
  end
end)

-- communicators: comm:isend/comm:irecv with comm ranks
mp.exec(function()
  local me = mp.rank
  local c = mp.world:split(me % 2)
  local right, left = (c.rank + 1) % c.size, (c.rank - 1) % c.size
  local s = c:isend(right, "sub", c.rank)
  local from, tag, cr = c:irecv():wait()
  assert(from == left and tag == "sub" and cr == left)
  s:wait()
  local r = mp.world:irecv(me)
  mp.world:isend(me, "w")
  assert(r:wait() == "w")
  rawset(_G, "held_comm_req", c:irecv(c.rank)) -- posted, never satisfied
  rawset(_G, "held_comm", c)
end)

-- argument errors, a request of an earlier task
mp.exec(function()
  local me, size = mp.rank, mp.size
  fails("bad argument #1 to 'mp.isend' %(%[rank " .. me .. "/" .. size .. "%] rank " .. size ..
        " out of range 0%.%." .. (size - 1) .. "%)", mp.isend, size, 1)
  fails("bad argument #1 to 'mp.irecv' %(%[rank %d+/%d+%] rank %-1 out of range", mp.irecv, -1)
  fails("bad argument #1 to 'mp.isend' %(%[rank %d+/%d+%] rank list item 2: rank 99 out of range",
        mp.isend, {0, 99}, 1)
  fails("bad argument #2 to 'mp.isend' %(%[rank %d+/%d+%] cannot send a thread", mp.isend, 0,
        coroutine.create(print))
  fails("bad argument #1 to 'mp.wait' %(%[rank %d+/%d+%] request expected, got number%)",
        mp.wait, 42)
  fails("bad argument #1 to 'mp.test' %(%[rank %d+/%d+%] request expected, got table%)",
        mp.test, {})
  local old = held_comm_req
  local task = mp.stats().task
  fails("mp.wait: %[rank " .. me .. "/" .. size .. "%] request from an earlier task %(task " ..
        (task - 1) .. ", now " .. task .. "%)", old.wait, old)
  fails("mp.waitany: %[rank %d+/%d+%] request from an earlier task", mp.waitany, {old})
  fails("mp.isend: %[rank %d+/%d+%] communicator from an earlier task", held_comm.isend,
        held_comm, 0, "x")
  rawset(_G, "held_req", mp.irecv(me))
end)
fails("mp.test: %[rank 0/%d+%] not inside a parallel task", held_req.test, held_req)
fails("not inside a parallel task", mp.isend, 0, 1)
fails("not inside a parallel task", mp.irecv)

-- a fault while the others sit in waitall (or a test loop): every rank leaves,
-- the next task works, and its requests see nothing of the aborted one
for k = 1, 6 do
  local bad = k % n
  local ok, err = pcall(mp.exec, function(b, kk)
    local reqs = {}
    for r = 0, mp.size - 1 do
      if r ~= mp.rank then reqs[#reqs + 1] = mp.irecv(r) end
    end
    rawset(_G, "aborted_req", mp.irecv(mp.rank)) -- never satisfied
    if mp.rank == b then error("fault in waitall " .. kk) end -- b sends nothing
    for r = 0, mp.size - 1 do
      if r ~= mp.rank then mp.isend(r, mp.array("f64", 100000), "stale") end
    end
    if kk % 2 == 0 then
      mp.waitall(reqs)
    else
      local r = reqs[#reqs] or mp.irecv(mp.rank)
      while not r:test() do end
      while true do mp.waitany(reqs) end
    end
  end, bad, k)
  assert(not ok and tostring(err):find("fault in waitall " .. k, 1, true), tostring(err))
  -- (an abort seen before the rawset leaves an older request there: also refused)
  fails("mp.wait: %[rank 0/%d+%] request from an %a+ task", aborted_req.wait, aborted_req)
  local sum = mp.exec(function()
    if aborted_req then -- nil if this rank was stopped before it made one
      fails("request from an earlier task", aborted_req.wait, aborted_req)
    end
    local me, size = mp.rank, mp.size
    local r = mp.irecv((me - 1) % size)
    mp.isend((me + 1) % size, "fresh", me)
    local tag, who = r:wait()
    assert(tag == "fresh" and who == (me - 1) % size, "stale message after an abort")
    assert(#mp.probe() == 0)
    return mp.handin(who)
  end)
  assert(sum == n * (n - 1) // 2)
end
print("req_basic ok")
