-- ranks: 2 3  quick: 2
-- SPDX-License-Identifier: MIT
-- A receive from one sender with nothing queued from it takes its message
-- as it arrives (the mailbox's handoff, chan/mailbox.h): only the one it
-- would have found. Rank 1 sends only once rank 0 waits in its receive, so
-- every message below arrives during that receive: messages of another
-- communicator or of the world from the same sender that come first stay
-- queued for their own receives, in order; a posted irecv still takes the
-- first message; the order per sender holds throughout.
mp.exec(function()
  local me = mp.rank
  local a = mp.world:split(0, me) -- two communicators over the same ranks
  local b = mp.world:split(0, me)
  if me == 1 then
    assert(mp.recv(0) == "go")
    b:send(0, "b1")
    mp.send(0, "w1")
    b:send(0, "b2")
    a:send(0, "a1")
    mp.send(0, "w2")
    for k = 1, 200 do mp.send(0, k) end
    assert(mp.recv(0) == "go2")
    mp.send(0, "x1")
    mp.send(0, "x2")
  elseif me == 0 then
    mp.send(1, "go")
    assert(a:recv(1) == "a1", "a:recv must pass over b's and the world's messages")
    assert(mp.recv(1) == "w1")
    assert(b:recv(1) == "b1")
    assert(b:recv(1) == "b2")
    assert(mp.recv(1) == "w2")
    for k = 1, 200 do
      local v = mp.recv(1)
      assert(v == k, ("message %d from rank 1: got %s"):format(k, tostring(v)))
    end
    local r = mp.irecv(1) -- posted first: takes x1
    mp.send(1, "go2")
    assert(mp.recv(1) == "x2", "recv must not take what a posted irecv takes")
    assert(r:wait() == "x1")
    assert(#mp.probe() == 0, "nothing may be left queued")
  end
  mp.barrier()
end)
print("p2p_handoff ok")
