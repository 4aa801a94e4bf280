-- ranks: 2 3 4
-- SPDX-License-Identifier: MIT
-- Symmetric exchanges of 1 MiB: everyone sends to everyone, then receives.
-- Sends return before being received, and every wait keeps receiving, so
-- this never deadlocks (MPY does from 16 KB up).
mp.exec(function()
  local me, n = mp.rank, mp.size
  local big = string.rep(string.char(65 + me), 1 << 20)
  for r = 0, n - 1 do if r ~= me then mp.send(r, big, me) end end
  for r = 0, n - 1 do
    if r ~= me then
      local s, who = mp.recv(r)
      assert(who == r and #s == 1 << 20 and s:sub(1, 1) == string.char(65 + r) and s:sub(-1) == s:sub(1, 1))
    end
  end
  -- pairwise: both send first, then receive
  local peer = me ~ 1
  if peer < n then
    for _ = 1, 5 do
      mp.send(peer, big)
      assert(#mp.recv(peer) == 1 << 20)
    end
  end
end)
print("p2p_symmetric ok")
