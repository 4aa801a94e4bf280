-- SPDX-License-Identifier: MIT
-- The soak: chaos rounds (see tests/lua/lib/mpchaos.lua) for as long as you like; prints
-- the median recovery time (failed task + the next usable task) and memory
-- before/after on every rank.
-- Run: mpiexec -n 4 build/mplua scripts/bench/chaos.lua [rounds] [seed]  (not -b: a fault
-- there ends the job)
package.path = "scripts/bench/?.lua;tests/lua/lib/?.lua;" .. package.path
local C = require("common")
local chaos = require("mpchaos")
local rounds = tonumber(arg and arg[1]) or 10000
local seed = tonumber(arg and arg[2]) or 7
local function mem()
  return mp.exec(function()
    collectgarbage()
    local f = io.open("/proc/self/status")
    local rss = f and f:read("a"):match("VmRSS:%s*(%d+)") or "?"
    if f then f:close() end
    local t = {}
    for r = 0, mp.size - 1 do t[r + 1] = 0 end
    t[mp.rank + 1] = tonumber(rss) or 0
    return mp.handin(t)
  end)
end
local before = mem()
local c = chaos.new(seed)
local rec, faults, t0 = {}, 0, mp.wtime()
local marks = {}
for k = 1, rounds do
  local f, _, secs = c:round(k)
  if f then
    faults = faults + 1
    rec[#rec + 1] = secs
  end
  if k % (rounds // 5) == 0 then marks[#marks + 1] = {k, mem()} end
end
local after = mem()
print(("chaos soak: %d ranks, seed %d, %d rounds in %.1f s, %d aborts, nothing lost"):format(
  mp.size, seed, rounds, mp.wtime() - t0, faults))
print(("recovery (failed task + next task): median %.2f ms"):format(C.median(rec) * 1e3))
-- RSS after each fifth of the run: a leak grows steadily, warm-up does not
for r = 1, #before do
  local t = {}
  for _, m in ipairs(marks) do t[#t + 1] = ("%d"):format(m[2][r]) end
  print(("rank %d RSS (kB): start %d, then %s"):format(r - 1, before[r], table.concat(t, ", ")))
end
