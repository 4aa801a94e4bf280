-- SPDX-License-Identifier: MIT
-- What the runtime's own protocols cost the whole job, in measures the machine's load does
-- not change: CPU time of all ranks together (user + system), context switches (voluntary:
-- a rank went to sleep; involuntary: it was preempted), nap wake-ups by datagram, naps and
-- naps that ran out their time, per empty task and per abort + recovery (as scale.lua's:
-- an abort, then an empty task). Rank 0's own share beside the sums. Each figure is the
-- reading after n operations minus the one before, less a probe's own cost (two probes in a
-- row), divided by n. scale.sh's wall times at many ranks on few cores mostly measure the
-- other programs on the machine; these do not.
-- Run: mpiexec -n P build/mpbench scripts/bench/scale_cost.lua [n]
local n = tonumber(arg and arg[1]) or 50
local P = mp.size

-- This rank's readings: CPU seconds, context switches, wake-ups, naps.
local function reading()
  local r = {cpu = os.clock(), vcsw = 0, ivcsw = 0}
  local f = io.open("/proc/self/status")
  if f then
    for line in f:lines() do
      local k, v = line:match("^(%w+)_ctxt_switches:%s*(%d+)")
      if k == "voluntary" then r.vcsw = tonumber(v) elseif k == "nonvoluntary" then r.ivcsw = tonumber(v) end
    end
    f:close()
  end
  local s = mp.stats()
  r.wakeups, r.naps, r.naps_out = s.wakeups, s.naps or 0, s.naps_timed_out or 0
  return r
end

-- Every rank's readings summed (rank 0's apart), in one task.
local function probe()
  return mp.exec(function()
    local r = reading()
    local sum = mp.handin(r)
    if mp.rank == 0 then return sum, r end
  end)
end

local KEYS = {"cpu", "vcsw", "ivcsw", "wakeups", "naps", "naps_out"}
local function diff(a, b)
  local d = {}
  for _, k in ipairs(KEYS) do d[k] = b[k] - a[k] end
  return d
end

-- (sum, rank 0) per operation of f, run n times between two probes.
local function cost(f)
  local s0, z0 = probe()
  local s1, z1 = probe() -- a probe's own cost: s1 - s0
  for _ = 1, n do f() end
  local s2, z2 = probe()
  local ps, pz, fs, fz = diff(s0, s1), diff(z0, z1), diff(s1, s2), diff(z1, z2)
  local sum, zero = {}, {}
  for _, k in ipairs(KEYS) do
    sum[k] = (fs[k] - ps[k]) / n
    zero[k] = (fz[k] - pz[k]) / n
  end
  return sum, zero
end

local empty = function() end
package.path = "scripts/bench/?.lua;" .. package.path
local abort_round = require("common").abort_round

for _ = 1, 5 do mp.exec(empty); abort_round() end -- warm: first uses, the first abort
local rows = {{"empty task", cost(function() mp.exec(empty) end)}}
local s, z = cost(abort_round)
rows[2] = {"abort + recovery", s, z}
print(("ranks %d, %d operations each: per operation, all ranks (rank 0's share)"):format(P, n))
print("| ranks | operation | CPU ms | voluntary cs | involuntary cs | datagram wake-ups | naps | "
      .. "naps timed out |")
local f1 = function(x, y) return ("%.3g (%.2g)"):format(x, y) end
for _, r in ipairs(rows) do
  local sum, zero = r[2], r[3]
  print(("| %d | %s | %s | %s | %s | %s | %s | %s |"):format(P, r[1],
    f1(sum.cpu * 1e3, zero.cpu * 1e3), f1(sum.vcsw, zero.vcsw), f1(sum.ivcsw, zero.ivcsw),
    f1(sum.wakeups, zero.wakeups), f1(sum.naps, zero.naps), f1(sum.naps_out, zero.naps_out)))
end
