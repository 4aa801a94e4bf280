-- SPDX-License-Identifier: MIT
-- Collectives benchmark: mp.allreduce of 1e6 f64 against MPI_Allreduce, and
-- mp.send/recv of an 8 MiB f64 array against raw MPI_Send/Recv, interleaved
-- in the same job. Run: mpiexec -n N build/mpbench scripts/bench/coll.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 9
local N, ITERS = 1000000, 10
local BW_ITERS = 50
local MIB8 = 8 << 20

local function mp_allreduce(iters, n)
  local a = mp.array("f64", n)
  for i = 1, n, 4096 do a[i] = i end
  mp.barrier()
  local t = mp.wtime()
  for _ = 1, iters do a = mp.allreduce(a, "sum") end
  return (mp.wtime() - t) / iters
end

-- As bench.stream does for raw MPI: the array is written before it is sent
-- (an untouched one is the kernel's zero page, and the first send of each
-- round would fault its 2048 pages in: 0.5-0.7 of raw in this bench before)
-- and one round runs before the clock starts.
local function mp_stream(iters, n)
  local a = mp.array("f64", n)
  a:fill(1)
  local t
  for i = 0, iters do
    if i == 1 then
      mp.barrier()
      t = mp.wtime()
    end
    if mp.rank == 0 then
      mp.send(1, a); mp.recv(1)
    elseif mp.rank == 1 then
      mp.recv(0); mp.send(0, true)
    end
  end
  return (mp.wtime() - t) / iters
end

local cases = {
  {"raw_ar", function() return mp.exec(bench.allreduce, ITERS, N) end},
  {"mp_ar", function() return mp.exec(mp_allreduce, ITERS, N) end},
}
if mp.size >= 2 then
  table.insert(cases, {"raw_bw", function() return mp.exec(bench.stream, BW_ITERS, MIB8) end})
  table.insert(cases, {"mp_bw", function() return mp.exec(mp_stream, BW_ITERS, MIB8 // 8) end})
end
local med = C.interleave(rounds, cases)
print(string.format("ranks %d, %d rounds (medians)", mp.size, rounds))
print(string.format("allreduce 1e6 f64: mp %.3f ms  raw %.3f ms  speed ratio %.2f (floor 0.8)",
  med.mp_ar * 1e3, med.raw_ar * 1e3, med.raw_ar / med.mp_ar))
if med.mp_bw then
  print(string.format("8 MiB f64 send/recv: mp %.0f MB/s  raw %.0f MB/s  speed ratio %.2f (floor 0.85)",
    MIB8 / med.mp_bw / 1e6, MIB8 / med.raw_bw / 1e6, med.raw_bw / med.mp_bw))
end
