-- ranks: 2 3 4
-- SPDX-License-Identifier: MIT
-- Per-sender queues: interleaved senders, recv(from) takes the oldest message
-- of that sender; recv() takes the oldest overall and names its sender;
-- probe modes 0, 1, 2; a list of destinations.
mp.exec(function()
  local n, me = mp.size, mp.rank
  local K = 50
  if me ~= 0 then
    for k = 1, K do mp.send(0, me, k) end
    mp.send(0, "done", me)
  else
    -- drain in an order unrelated to arrival: highest rank first
    for r = n - 1, 1, -1 do
      for k = 1, K do
        local who, kk = mp.recv(r)
        assert(who == r and kk == k, ("from %d expected #%d, got %s #%s"):format(r, k, who, kk))
      end
      local tag, who = mp.recv(r)
      assert(tag == "done" and who == r)
    end
  end
end)

mp.exec(function()
  local me, n = mp.rank, mp.size
  if me == 0 then
    -- every worker sends one message after we ask; receive them with recv()
    mp.send((function() local t = {} for r = 1, n - 1 do t[#t + 1] = r end return t end)(), "go")
    local seen = {}
    for _ = 1, n - 1 do
      local from, v = mp.recv()
      assert(from == v, "recv() returns the sender first")
      assert(not seen[from], "duplicate message from " .. from)
      seen[from] = true
    end
    assert(#mp.probe(0) == 0, "queues empty after draining")
  else
    assert(mp.recv(0) == "go")
    mp.send(0, me)
  end
end)

mp.exec(function()
  local me = mp.rank
  if me == 1 then
    mp.recv(0)             -- wait for the go
    mp.send(0, "a")
    mp.recv(0)
    mp.send(0, "b")
  elseif me == 0 then
    assert(#mp.probe(0) == 0, "nothing queued yet")
    mp.send(1, "go")
    local q = mp.probe(1)  -- blocks until something is queued
    assert(#q == 1 and q[1] == 1, "probe(1) lists rank 1")
    assert(#mp.probe(0) == 1, "still queued")
    mp.send(1, "again")
    q = mp.probe(2)        -- blocks until a NEW message arrives
    assert(q[1] == 1)
    assert(mp.recv(1) == "a" and mp.recv(1) == "b")
  end
end)
-- A receiver that does not poll: rank 1 sits in a C call (opening a FIFO) until
-- rank 0 has sent a burst of small messages, so MPI's queue to it fills and sends
-- that MPI still holds keep their bytes (the encoder must not reuse them for the
-- next message). Every message arrives whole and in order.
local fifo = os.tmpname()
os.remove(fifo)
assert(os.execute("mkfifo " .. fifo), "mkfifo")
mp.exec(function(fifo)
  local me, K = mp.rank, 4000
  local function body(k) return string.rep(string.char(97 + k % 26), 200 + (k * 37) % 3000) end
  if me == 0 then
    mp.send(1, "go")
    for k = 1, K do mp.send(1, k, body(k)) end
    local f = assert(io.open(fifo, "w")) -- rank 1 has been in C since "go"
    f:write("sent\n")
    f:close()
  elseif me == 1 then
    assert(mp.recv(0) == "go")
    local f = assert(io.open(fifo, "r")) -- not polling until rank 0 has sent them all
    assert(f:read("l") == "sent")
    f:close()
    for k = 1, K do
      local kk, b = mp.recv(0)
      assert(kk == k and b == body(k), ("message %d: got #%s of %d bytes"):format(k, kk, #b))
    end
  end
end, fifo)
os.remove(fifo)
print("p2p_order ok")
