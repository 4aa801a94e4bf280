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
