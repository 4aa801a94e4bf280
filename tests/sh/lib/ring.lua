-- SPDX-License-Identifier: MIT
-- For the tests of naps and wake-ups: a task in which every rank waits for
-- its predecessor on a ring, so each naps and is woken, `rounds` times.
-- Returns ring(rounds), which runs it and returns 1 + 2 + ... + rounds as
-- rank 0 summed what came round.
return function(rounds)
  return mp.exec(function()
    local n = 0
    for i = 1, rounds do
      if mp.rank == 0 then
        mp.send(1 % mp.size, i)
        n = n + mp.recv((mp.size - 1) % mp.size)
      else
        local v = mp.recv(mp.rank - 1)
        n = n + v
        mp.send((mp.rank + 1) % mp.size, v)
      end
    end
    return n
  end)
end
