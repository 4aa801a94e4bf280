-- SPDX-License-Identifier: MIT
-- How fast a job comes back, and what keeping it interruptible costs.
--   ctrlc: from an interrupt of rank 0 (SIGUSR1, what the front end's Ctrl-C
--          becomes) to the interrupted mp.exec returning there, while one
--          rank spins in pure Lua;
--   error: from an error on rank 1 to its report on rank 0, while two
--          other ranks spin in pure Lua (the times are MPI_Wtime's, one
--          clock for the ranks of one host);
--   spin:  a tight loop inside a task (the poll timer runs) over the same
--          loop outside one (no timer).
-- Prints one line of medians; scripts/bench/interrupt.sh compares builds.
-- Run: mpiexec -n 4 build/mplua scripts/bench/interrupt.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 15
assert(mp.size >= 4, "run at 4 ranks or more")
local pid = io.open("/proc/self/stat"):read("a"):match("^(%d+)")
local N = 30000000

local function loop(n)
  local t, x = mp.wtime(), 0
  for i = 1, n do x = x + i % 7 end
  return mp.wtime() - t, x
end

-- rank 0 has a shell signal it (as the front end's link thread does) and
-- ends its part of the task; it waits for the others there (globals of
-- rank 0: a task's upvalues travel)
KILLER = io.popen("while read -r _; do kill -USR1 " .. pid .. "; done", "w")
local function ctrlc_latency()
  local ok, e = pcall(mp.exec, function(size)
    if mp.rank == size - 1 then
      while true do end
    elseif mp.rank == 0 then
      local t = mp.wtime()
      while mp.wtime() - t < 0.05 do end -- the spinner spins by now
      SENT = mp.wtime()
      KILLER:write("\n")
      KILLER:flush()
    end
  end, mp.size)
  local back = mp.wtime()
  assert(not ok and tostring(e):find("interrupted!"), tostring(e))
  return back - SENT
end

local function error_latency()
  local ok, e = pcall(mp.exec, function()
    if mp.rank == 1 then
      local t = mp.wtime()
      while mp.wtime() - t < 0.05 do end -- the others spin by now
      error(string.format("at %.9f", mp.wtime()), 0)
    elseif mp.rank >= 2 then
      while true do end
    end
  end)
  local back = mp.wtime()
  assert(not ok, "the task did not fail")
  return back - tonumber(tostring(e):match("at ([%d.]+)"))
end

local med = C.interleave(rounds, {
  {"ctrlc", ctrlc_latency},
  {"error", error_latency},
  {"plain", function() return (loop(N)) end},
  {"hooked", function() return (mp.exec(function(n) if mp.rank == 0 then return loop(n) end end, N)) end},
})
KILLER:close()
print(string.format("ctrlc %.2f ms  error %.2f ms  spin %.4f", med.ctrlc * 1e3, med.error * 1e3,
  med.hooked / med.plain))
