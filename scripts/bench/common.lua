-- SPDX-License-Identifier: MIT
-- Shared helpers of the benchmark scripts: medians of interleaved rounds.
local M = {}

function M.median(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  local n = #s
  if n == 0 then return 0 / 0 end
  if n % 2 == 1 then return s[(n + 1) // 2] end
  return (s[n // 2] + s[n // 2 + 1]) / 2
end

-- Run each named case once per round, cases interleaved, `rounds` rounds;
-- returns the medians by name.
function M.interleave(rounds, cases)
  local got = {}
  for _, c in ipairs(cases) do got[c[1]] = {} end
  for _ = 1, rounds do
    for _, c in ipairs(cases) do table.insert(got[c[1]], c[2]()) end
  end
  local med = {}
  for k, v in pairs(got) do med[k] = M.median(v) end
  return med
end

-- The mp side of the p2p benchmarks (tasks; rank 0 and 1 take part).
-- pingpong: n round trips of v, each sent back as received; stream: n
-- sends of s, each answered by `true` (so the time covers delivery). As
-- their raw twins in mpbench.c: a barrier starts the clock, and stream runs
-- one round first (the receiver's first buffer is faulted in, not timed).
function M.pingpong(n, v)
  mp.barrier()
  local t = mp.wtime()
  if mp.rank == 0 then
    for _ = 1, n do mp.send(1, v); mp.recv(1) end
  elseif mp.rank == 1 then
    for _ = 1, n do mp.send(0, (mp.recv(0))) end
  end
  return (mp.wtime() - t) / n
end

function M.stream(n, s)
  local t
  if mp.rank == 0 then
    mp.send(1, s); mp.recv(1)
    mp.barrier(); t = mp.wtime()
    for _ = 1, n do mp.send(1, s); mp.recv(1) end
  elseif mp.rank == 1 then
    mp.recv(0); mp.send(0, true)
    mp.barrier(); t = mp.wtime()
    for _ = 1, n do mp.recv(0); mp.send(0, true) end
  else
    mp.barrier(); t = mp.wtime()
  end
  return (mp.wtime() - t) / n
end

-- An abort and the next task (recovery is part of the cost), as scale.lua and
-- scale_cost.lua measure it: the last rank raises while the others wait in mp.barrier.
function M.abort_round()
  local ok, e = pcall(mp.exec, function()
    if mp.rank == mp.size - 1 then error("scale: on purpose") end
    mp.barrier()
  end)
  assert(not ok and e.rank == mp.size - 1, tostring(e))
  mp.exec(function() end)
end

function M.us(x) return string.format("%.3f us", x * 1e6) end

return M
