-- SPDX-License-Identifier: MIT
-- Task round trip: mp.exec of an empty function back to back, and mp.handin
-- inside one task, against MPI_Barrier (the raw floor of a fan-out/fan-in).
-- Run: mpiexec -n 4 build/mpbench scripts/bench/exec.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 9
local N = mp.size <= 2 and 2000 or 200
local empty = function() end
local med = C.interleave(rounds, {
  {"raw", function() return mp.exec(bench.barrier, N) end},
  {"exec", function()
    local t = mp.wtime()
    for _ = 1, N do mp.exec(empty) end
    return (mp.wtime() - t) / N
  end},
  {"handin", function()
    return mp.exec(function(n)
      local t = mp.wtime()
      for _ = 1, n do mp.handin(1) end
      return (mp.wtime() - t) / n
    end, N)
  end},
})
print(string.format("ranks %d, %d rounds (medians)", mp.size, rounds))
print(string.format("mp.exec(empty): %s   mp.handin: %s   MPI_Barrier: %s   exec/barrier %.1fx",
  C.us(med.exec), C.us(med.handin), C.us(med.raw), med.exec / med.raw))
