-- SPDX-License-Identifier: MIT
-- What the poll hook costs a tight Lua loop: the same loop timed inside a task
-- (periodic SIGALRM arms a count hook that polls the control channel) and
-- outside one (no timer), interleaved.
-- Run: mpiexec -n 2 build/mplua scripts/bench/hook.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 9
local N = 30000000
local function loop(n)
  local t, x = mp.wtime(), 0
  for i = 1, n do x = x + i % 7 end
  return mp.wtime() - t, x
end
local med = C.interleave(rounds, {
  {"plain", function() return (loop(N)) end},
  {"hooked", function() return (mp.exec(function(n) if mp.rank == 0 then return loop(n) end end, N)) end},
})
print(string.format("ranks %d: tight loop of %d iterations: %.1f ms without the hook timer, %.1f ms with it: ratio %.4f",
  mp.size, N, med.plain * 1e3, med.hooked * 1e3, med.hooked / med.plain))
