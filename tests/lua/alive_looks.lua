-- ranks: 4 8
-- SPDX-License-Identifier: MIT
-- Rank 0 looks for dead ranks while it waits, reading /proc for a rank (a look,
-- mp.stats().alive_looks): only for the ranks that have not answered a round of its
-- whereabouts, and ever further apart as the wait lasts (at most about 2 log2(t / 20 ms)
-- + t / 1 s + 2 looks at each rank in t seconds), not every rank every 20 ms. Rank 0 waits
-- for rank 1 while every other rank runs Lua for a while; the bound is taken from the
-- wait's measured length, so a loaded machine changes both sides alike.
local P = mp.size
local looks, waited = table.unpack(mp.exec(function()
  if mp.rank == 0 then
    local n0, t0 = mp.stats().alive_looks, mp.wtime()
    mp.recv(1)
    return {mp.stats().alive_looks - n0, mp.wtime() - t0}
  end
  local t = mp.wtime()
  while mp.wtime() - t < 1.5 do end -- long enough for many looks every 20 ms
  if mp.rank == 1 then mp.send(0, "done") end
end))
local per = math.log(math.max(waited, 0.02) / 0.02, 2)
local bound = (P - 1) * (2 * per + waited + 2)
print(("%d ranks: %d looks in %.2f s (bound %.0f; one look at every rank every 20 ms: %.0f)")
  :format(P, looks, waited, bound, (P - 1) * waited / 0.02))
assert(looks <= bound, "rank 0 reads /proc for every rank every 20 ms while it waits")
print("alive_looks ok")
