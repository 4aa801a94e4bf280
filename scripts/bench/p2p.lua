-- SPDX-License-Identifier: MIT
-- Point-to-point benchmark: mp.send/mp.recv against two raw-MPI baselines in
-- the same job, interleaved: blocking MPI_Send/MPI_Recv, and the
-- interruptible scheme (MPI_Isend, poll MPI_Improbe until a match,
-- MPI_Mrecv), which is the anchor for a runtime that never blocks outside its
-- wait. Bandwidth: 1 MiB strings and f64 arrays, 8 MiB arrays, 64 MiB strings.
-- Run: mpiexec -n 2 build/mpbench scripts/bench/p2p.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
assert(mp.size >= 2, "run with at least 2 ranks")
local rounds = tonumber(arg and arg[1]) or 9
local N = 20000

local mp_pingpong, mp_stream = C.pingpong, C.stream

local MiB = 1 << 20
local big = string.rep("b", MiB)
local huge = string.rep("h", 64 * MiB)
-- An f64 array of n elements, written before it is sent as the raw side's
-- buffer is (an untouched array is the kernel's zero page).
local function mp_astream(iters, n)
  local a = mp.array("f64", n)
  a:fill(1)
  return mp_stream(iters, a)
end

local med = C.interleave(rounds, {
  {"raw_rt", function() return mp.exec(bench.pingpong, N, 8) end},
  {"iraw_rt", function() return mp.exec(bench.ipingpong, N, 8) end},
  {"mp_rt", function() return mp.exec(mp_pingpong, N, 1.5) end},
  {"raw_bw", function() return mp.exec(bench.stream, 200, MiB) end},
  {"mp_bw", function() return mp.exec(mp_stream, 200, big) end},
  {"mp_abw", function() return mp.exec(mp_astream, 200, MiB // 8) end},
  {"raw_8", function() return mp.exec(bench.stream, 50, 8 * MiB) end},
  {"mp_8", function() return mp.exec(mp_astream, 50, MiB) end},
  {"raw_huge", function() return mp.exec(bench.stream, 8, 64 * MiB) end},
  {"mp_huge", function() return mp.exec(mp_stream, 8, huge) end},
})
print(string.format("ranks %d, %d rounds (medians)", mp.size, rounds))
print(string.format("round trip, one number: mp %s  interruptible C %s  blocking C %s",
  C.us(med.mp_rt), C.us(med.iraw_rt), C.us(med.raw_rt)))
print(string.format("  ratio to the interruptible scheme %.2fx (goal 1.5x, floor 2.2x), to blocking C %.2fx",
  med.mp_rt / med.iraw_rt, med.mp_rt / med.raw_rt))
local function bw(name, bytes, mp_t, raw_t)
  print(string.format("%s: mp %.0f MB/s  raw %.0f MB/s  ratio %.2f (goal 0.9, floor 0.85)",
    name, bytes / mp_t / 1e6, bytes / raw_t / 1e6, raw_t / mp_t))
end
bw("1 MiB string", MiB, med.mp_bw, med.raw_bw)
bw("1 MiB f64 array", MiB, med.mp_abw, med.raw_bw)
bw("8 MiB f64 array", 8 * MiB, med.mp_8, med.raw_8)
print(string.format("64 MiB string: mp %.0f MB/s  raw %.0f MB/s  = %.0f%% of raw",
  64 * MiB / med.mp_huge / 1e6, 64 * MiB / med.raw_huge / 1e6, 100 * med.raw_huge / med.mp_huge))
