-- ranks: 8 20
-- SPDX-License-Identifier: MIT
-- The cost of waiting for an exchange grows with the messages that arrive, not with the
-- number of ranks times the messages: a rank waiting in an all-to-all transpose looks at
-- the queue of each message's sender, not at every peer's (mp.stats().inbox_looks counts
-- the queues walked). Messages are made to arrive one by one: rank 0 lets each peer
-- start its transpose in turn and tests its own request after each; and, blocking, the
-- peers start one after the other while rank 0 waits.
local P = mp.size
local looks = mp.exec(function()
  local A = mp.layout(("f64[x=%d@1, y=%d]"):format(4 * mp.size, 3 * mp.size))
  local B = mp.layout(("f64[x=%d, y=%d@1]"):format(4 * mp.size, 3 * mp.size))
  local T = mp.transpose(A, B)
  local a = A:alloc():fill(mp.rank)
  -- driven: rank 0 tests its request after each peer's message has come
  local n0 = mp.stats().inbox_looks
  if mp.rank == 0 then
    local req, done = T:iforward(a), false
    for k = 1, mp.size - 1 do
      mp.send(k, "go")
      mp.recv(k) -- k's transpose message came before this reply (one sender: in order)
      done = req:test()
    end
    assert(done, "every message has come")
  else
    mp.recv(0)
    local req = T:iforward(a)
    mp.send(0, "sent")
    req:wait()
  end
  local driven = mp.stats().inbox_looks - n0
  -- blocking: the peers start in turn (a token along the ranks) while rank 0 waits
  n0 = mp.stats().inbox_looks
  if mp.rank == 0 then
    T:forward(a)
  else
    if mp.rank > 1 then mp.recv(mp.rank - 1) end
    local req = T:iforward(a)
    if mp.rank + 1 < mp.size then mp.send(mp.rank + 1, "token") end
    req:wait()
  end
  local blocking = mp.stats().inbox_looks - n0
  local b = T:forward(a) -- and right
  local bs = B:local_shape()
  for j = 1, bs[2] do for i = 1, bs[1] do assert(b:get(i, j) == (i - 1) // 4) end end
  return mp.rank == 0 and {driven, blocking} or nil
end)
print(("%d ranks: rank 0 walked %d queues (driven), %d (blocking) for %d messages"):format(
  P, looks[1], looks[2], P - 1))
-- (layout/xchg.c, coll/coll_dist.c) the exchange's first look in its phase tries each
-- peer's queue once (P - 1); then each message costs its sender's queue twice (found
-- when it arrives, taken). Blocking, each arrival's sender's queues are also checked
-- for a mismatched collective (once), and the wait's first sleep walks the two
-- channels' arrivals once each (2), not every peer's queues.
assert(looks[1] <= 3 * (P - 1), "driven: more than the sender's queue per arrival")
assert(looks[2] <= 4 * (P - 1) + 2, "blocking: more than the sender's queues per arrival")
print("dist_scaling ok")
