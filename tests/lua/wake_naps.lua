-- ranks: 3 8  quick: 3
-- SPDX-License-Identifier: MIT
-- The abort's resync wakes the ranks that wait in it, it does not poll: while
-- one rank is away for W ms in an abort (the others wait in the resync for
-- it), each rank's naps that ran out (mp.stats().naps_timed_out) number
-- O(log W), naps from 1 ms, doubling, each wait ended by the message it
-- waits for. Polling takes about W of them on a host with more ranks than
-- cores (brief naps of at most 1 ms: MPI's own collectives move only while
-- every rank polls). The bound is taken from the W each rank measured, so a
-- slow machine changes nothing.
local AWAY = 0.3 -- seconds a rank spends in C (os.execute), where nothing polls

local function away() assert(os.execute(("sleep %.3f"):format(AWAY))) end

-- Each rank: naps that ran out since `_G.mark`, within the bound for the time it measured.
local function mark() _G.mark = {t = mp.wtime(), n = mp.stats().naps_timed_out} end
local function check(what, waits, slack)
  local ms = (mp.wtime() - _G.mark.t) * 1e3
  local n = mp.stats().naps_timed_out - _G.mark.n
  local bound = waits * math.log(math.max(ms, 1), 2) + slack
  if n > bound then
    error(("%s: rank %d: %d naps ran out in %.0f ms (at most %.0f)"):format(what, mp.rank, n, ms,
      bound))
  end
end

mp.exec(function() end) -- first uses
if mp.stats().naps == nil then error("mp.stats() has no nap counters") end

-- an abort: rank 1 is away, the last rank faults; the others wait in the
-- resync (and, below rank 1 in a tree of fan-out 2, for the ABORT it passes on)
for _ = 1, 2 do
  mp.exec(mark) -- apart: a rank may hear of the abort before its part starts
  local ok, e = pcall(mp.exec, function()
    if mp.rank == 1 then away() end
    if mp.rank == mp.size - 1 then error("on purpose") end
    mp.barrier()
  end)
  assert(not ok and e.rank == mp.size - 1, tostring(e))
  assert(e.where[1], "rank 1's whereabouts are reported")
  -- the idle waits, the barrier or the ABORT, the resync's steps
  mp.exec(check, "abort", 3, 12)
end
print("ok")
