-- SPDX-License-Identifier: MIT
-- Point-to-point benchmark: mp.send/mp.recv against raw MPI_Send/MPI_Recv in
-- the same job, interleaved. Run: mpiexec -n 2 build/mpbench scripts/bench/p2p.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
assert(mp.size >= 2, "run with at least 2 ranks")
local rounds = tonumber(arg and arg[1]) or 9
local N = 20000

local mp_pingpong, mp_stream = C.pingpong, C.stream

local MiB = 1 << 20
local big = string.rep("b", MiB)
local huge = string.rep("h", 64 * MiB)
local med = C.interleave(rounds, {
  {"raw_rt", function() return mp.exec(bench.pingpong, N, 8) end},
  {"mp_rt", function() return mp.exec(mp_pingpong, N, 1.5) end},
  {"raw_bw", function() return mp.exec(bench.stream, 200, MiB) end},
  {"mp_bw", function() return mp.exec(mp_stream, 200, big) end},
  {"raw_huge", function() return mp.exec(bench.stream, 8, 64 * MiB) end},
  {"mp_huge", function() return mp.exec(mp_stream, 8, huge) end},
})
print(string.format("ranks %d, %d rounds (medians)", mp.size, rounds))
print(string.format("round trip, one number: mp %s  raw %s  ratio %.2fx",
  C.us(med.mp_rt), C.us(med.raw_rt), med.mp_rt / med.raw_rt))
print(string.format("1 MiB string: mp %.0f MB/s  raw %.0f MB/s  = %.0f%% of raw",
  MiB / med.mp_bw / 1e6, MiB / med.raw_bw / 1e6, 100 * med.raw_bw / med.mp_bw))
print(string.format("64 MiB string: mp %.0f MB/s  raw %.0f MB/s  = %.0f%% of raw",
  64 * MiB / med.mp_huge / 1e6, 64 * MiB / med.raw_huge / 1e6, 100 * med.raw_huge / med.mp_huge))
