-- ranks: 8 20
-- SPDX-License-Identifier: MIT
-- mp.dist_graph's discovery costs each rank bytes in proportion to the edges that pass
-- through it and log2 of the communicator's size, not to the size squared: on a ring
-- (two edges per rank) a rank sends about 2 log2(P) small messages where an allgather of
-- count rows would send P - 1 rows of P + 1 integers (3712 bytes per rank at 20 ranks). The
-- graphs found are checked too. mp.stats().bytes_sent counts the bytes a rank gave MPI;
-- the least of five calls is taken, and the bound leaves room for one more message of
-- a few hundred bytes (rank 0's look at where the ranks are, when it naps, asks every
-- rank for an answer on the control channel, which these counts include). At 8 ranks
-- the rows cost about as much as the rounds; from 20 ranks on they cost several times more.
local P = mp.size
local function rounds(n) local k = 0 while (1 << k) < n do k = k + 1 end return k end
local worst = mp.exec(function()
  local best = math.huge
  for _ = 1, 5 do
    local b0 = mp.stats().bytes_sent
    local g = mp.dist_graph({(mp.rank + 1) % mp.size, {to = (mp.rank + 3) % mp.size, w = 2}})
    local b = mp.stats().bytes_sent - b0
    if b < best then best = b end
    local s = g:sources()
    assert(#s == 2 and s[1] == math.min((mp.rank - 1) % mp.size, (mp.rank - 3) % mp.size),
           "sources")
    assert(g.weighted, "weighted when any rank gave a weight")
  end
  return mp.gather(best)
end)
local most = 0
for _, b in ipairs(worst) do most = math.max(most, b) end
-- a round: a head of 2 integers and at most one message of items, each with its header;
-- the weights: one message per destination
local bound = 2 * rounds(P) * 96 + 2 * 96
print(("%d ranks: dist_graph sent at most %d bytes per rank (bound %d)"):format(P, most, bound))
assert(most <= bound, "discovery sends more than O(log P) per rank on a ring")
print("dist_graph_scaling ok")
