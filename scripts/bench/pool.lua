-- SPDX-License-Identifier: MIT
-- Pool throughput: empty tasks through mp.pool, tasks per second (floor
-- 20 000 at 4 ranks on 2 cores; MPY's mpool does 7 000), beside the raw
-- barrier of bench.barrier for scale. Run: mpiexec -n 4 build/mpbench scripts/bench/pool.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 7
local N = tonumber(arg and arg[2]) or 100000

local function run_pool()
  local t = mp.wtime()
  local got = 0
  mp.pool{sow = function(n) if n <= N then return n end end,
          work = function(x) return x end,
          reap = function() got = got + 1 end, progress = false}
  assert(got == N)
  return (mp.wtime() - t) / N
end

local med = C.interleave(rounds, {
  {"raw_barrier", function() return mp.exec(bench.barrier, 1000) end},
  {"pool", run_pool},
})
print(string.format("ranks %d, %d rounds of %d empty tasks (medians)", mp.size, rounds, N))
print(string.format("pool: %.0f tasks/s (floor 20000)  [raw MPI_Barrier %s]",
  1 / med.pool, C.us(med.raw_barrier)))

-- ~1 ms tasks (a fixed loop, not a clock) through the pool against the
-- same tasks in a plain loop on rank 0: the speedup (issue floor 1.7x at
-- 2 ranks, where rank 0 is one of the two workers)
local M, K = 300, 1
local function task(k)
  local s = 0
  for i = 1, k do s = s + i % 7 end
  return s
end
do -- K: iterations for about 1 ms
  local t = mp.wtime()
  K = 200000
  task(K)
  K = math.max(1000, math.floor(K * 0.001 / (mp.wtime() - t)))
end
local med2 = C.interleave(rounds, {
  {"serial", function()
    local t = mp.wtime()
    for _ = 1, M do task(K) end
    return mp.wtime() - t
  end},
  {"pool_1ms", function()
    local t = mp.wtime()
    local got = 0
    mp.pool{sow = function(n) if n <= M then return K end end, work = task,
            reap = function() got = got + 1 end, progress = false}
    assert(got == M)
    return mp.wtime() - t
  end},
})
print(string.format("%d tasks of ~1 ms: serial %.3f s, pool %.3f s: speedup %.2fx (floor 1.7x at 2 ranks)",
  M, med2.serial, med2.pool_1ms, med2.serial / med2.pool_1ms))
