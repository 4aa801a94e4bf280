-- Point-to-point benchmark: mp.send/mp.recv against raw MPI_Send/MPI_Recv in
-- the same job, interleaved. Run: mpiexec -n 2 build/mpbench scripts/bench/p2p.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
assert(mp.size >= 2, "run with at least 2 ranks")
local rounds = tonumber(arg and arg[1]) or 9
local N = 20000

local function mp_pingpong(n, v)
  local t = mp.wtime()
  if mp.rank == 0 then
    for _ = 1, n do mp.send(1, v); mp.recv(1) end
  elseif mp.rank == 1 then
    for _ = 1, n do mp.send(0, (mp.recv(0))) end
  end
  return (mp.wtime() - t) / n
end

local function mp_stream(n, s)
  local t = mp.wtime()
  if mp.rank == 0 then
    for _ = 1, n do mp.send(1, s); mp.recv(1) end
  elseif mp.rank == 1 then
    for _ = 1, n do mp.recv(0); mp.send(0, true) end
  end
  return (mp.wtime() - t) / n
end

local MiB = 1 << 20
local big = string.rep("b", MiB)
local med = C.interleave(rounds, {
  {"raw_rt", function() return mp.exec(bench.pingpong, N, 8) end},
  {"mp_rt", function() return mp.exec(mp_pingpong, N, 1.5) end},
  {"raw_bw", function() return mp.exec(bench.stream, 200, MiB) end},
  {"mp_bw", function() return mp.exec(mp_stream, 200, big) end},
})
print(string.format("ranks %d, %d rounds (medians)", mp.size, rounds))
print(string.format("round trip, one number: mp %s  raw %s  ratio %.2fx",
  C.us(med.mp_rt), C.us(med.raw_rt), med.mp_rt / med.raw_rt))
print(string.format("1 MiB string: mp %.0f MB/s  raw %.0f MB/s  = %.0f%% of raw",
  MiB / med.mp_bw / 1e6, MiB / med.raw_bw / 1e6, 100 * med.raw_bw / med.mp_bw))
