-- ranks: 1 2 3
-- SPDX-License-Identifier: MIT
-- mp.probe(2) waits for a message that arrived after the previous probe's
-- list: one that arrives between two probes (a send to oneself, or any poll
-- while Lua runs, the poll hook's included) is new to the second, so a loop
-- "look, and if what I want is not there, wait for something new" never
-- waits for a message that is already queued.
mp.exec(function()
  local me = mp.rank
  assert(#mp.probe(0) == 0, "nothing queued at the start")
  mp.send(me, "between")                 -- queued now, between two probes
  local l = mp.probe(2)                  -- new since the last list: at once
  assert(#l == 1 and l[1] == me, "probe(2) lists the message that came between probes")
  l = mp.probe(0)
  assert(#l == 1 and l[1] == me, "still queued")
  assert(mp.recv(me) == "between")
end)

-- The first probe of a task: a message queued before it is new to it.
mp.exec(function()
  local me = mp.rank
  mp.send(me, "before")
  local l = mp.probe(2)
  assert(#l == 1 and l[1] == me, "the first probe(2) of a task lists what is queued")
  assert(mp.recv(me) == "before")
end)

-- Waiting for one sender's message among others', the loop above: every
-- rank sends to rank 0, its own message first, and rank 0 waits for each
-- sender in turn, from the last.
mp.exec(function()
  local me, n = mp.rank, mp.size
  mp.send(0, me)
  if me == 0 then
    for s = n - 1, 0, -1 do
      local seen
      repeat
        for _, x in ipairs(mp.probe(0)) do if x == s then seen = true end end
        if not seen then mp.probe(2) end
      until seen
      assert(mp.recv(s) == s)
    end
  end
end)

-- A probe(2) with nothing new since the last list still waits (and on one
-- rank, where nothing can arrive, says so).
local ok, err = pcall(mp.exec, function()
  mp.send(mp.rank, 1)
  assert(#mp.probe(0) == 1)
  if mp.size == 1 then mp.probe(2) end   -- nothing new can come
  mp.recv(mp.rank)
end)
assert(mp.size > 1 or (not ok and tostring(err):find("would wait forever: nothing can arrive", 1, true)), tostring(err))
print("p2p_probe ok")
