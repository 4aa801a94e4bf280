-- SPDX-License-Identifier: MIT
-- Distributed arrays: a transpose plan (mp.transpose, pack + point-to-point, unpack on
-- arrival) against a C pack + MPI_Alltoall + unpack kernel, the same with MPI_Alltoallv
-- (balanced blocks, what C writes for any number of ranks) and a raw MPI_Alltoall of the
-- same bytes; a 2-D periodic width-1 halo exchange (mp.halo) against a hand-written
-- MPI_Isend/MPI_Irecv halo in C. Interleaved rounds in one job, medians.
--   mpiexec -n 2 build/distbench scripts/bench/dist.lua [rounds=9] [n=1024] [halo_n=512]
-- n x n f64 global for the transpose (n*n*8/P bytes per rank); halo_n x halo_n local blocks.
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 9
local n = tonumber(arg and arg[2]) or 1024
local hn = tonumber(arg and arg[3]) or 512
local P = mp.size
local ITERS, HITERS = 10, 200
local grid = mp.dims(P, 2)

local function mp_transpose(iters, n1, n2)
  local A = mp.layout(string.format("f64[a=%d, b=%d@1]", n1, n2))
  local B = mp.layout(string.format("f64[a=%d@1, b=%d]", n1, n2))
  local plan = mp.transpose(A, B)
  local a, out = A:alloc(), B:alloc()
  local len = #a
  for i = 1, len do a[i] = mp.rank * len + (i - 1) end
  plan:forward(a, out)
  mp.barrier()
  local t = mp.wtime()
  for _ = 1, iters do plan:forward(a, out) end
  return (mp.wtime() - t) / iters, mp.Array.sum(out), plan:info() -- this rank's block
end

local function mp_halo(iters, nx, ny, px, py)
  local topo = mp.cart({px, py}, {periodic = true})
  local lay = topo:layout(string.format("f64[x=%d@1, y=%d@2]", nx * px, ny * py))
  local h = mp.halo(lay, 1, topo)
  local a = lay:alloc(1)
  for i = 1, #a, 97 do a[i] = i end
  h:exchange(a)
  mp.barrier()
  local t = mp.wtime()
  for _ = 1, iters do h:exchange(a) end
  return (mp.wtime() - t) / iters
end

-- the halo's traffic on a 2x1 grid as plain mp.send/mp.recv pairs (2 ranks): what a round of
-- mplua messages costs, to tell the plan's overhead from the messages'
local function mp_pairs(iters, len)
  local a, o = mp.array("f64", len), 1 - mp.rank
  mp.barrier()
  local t = mp.wtime()
  for _ = 1, iters do mp.send(o, a); mp.send(o, a); mp.recv(o); mp.recv(o) end
  return (mp.wtime() - t) / iters
end

local sums = {}
local cases = {
  {"c_tr", function() local t, s = mp.exec(bench.transpose, ITERS, n, n); sums.c = s; return t end},
  {"c_trv", function() local t, s = mp.exec(bench.transposev, ITERS, n, n); sums.cv = s; return t end},
  {"mp_tr", function() local t, s = mp.exec(mp_transpose, ITERS, n, n); sums.mp = s; return t end},
  {"raw_a2a", function() return mp.exec(bench.alltoall, ITERS, n * n * 8 // P) end},
  {"c_halo", function() return mp.exec(bench.halo, HITERS, hn, hn, grid[1], grid[2]) end},
  {"mp_halo", function() return mp.exec(mp_halo, HITERS, hn, hn, grid[1], grid[2]) end},
}
if P == 2 then
  cases[#cases + 1] = {"mp_pairs", function() return mp.exec(mp_pairs, HITERS, hn + 2) end}
end
local med = C.interleave(rounds, cases)
local _, _, info = mp.exec(mp_transpose, 1, n, n)
assert(math.abs(sums.c - sums.mp) <= 1e-9 * math.abs(sums.c), "the transposes disagree")
assert(math.abs(sums.cv - sums.mp) <= 1e-9 * math.abs(sums.c), "the Alltoallv transpose disagrees")
print(string.format("ranks %d, %d rounds (medians); transpose %dx%d f64 (%.2f MiB per rank), "
                    .. "halo %dx%d per rank on a %dx%d periodic grid", P, rounds, n, n,
                    n * n * 8 / P / 2 ^ 20, hn, hn, grid[1], grid[2]))
print(string.format("transpose: mp %.3f ms  C pack+Alltoall+unpack %.3f ms  raw Alltoall %.3f ms"
                    .. "  ratio C/mp %.2f (floor 0.9, goal 1.0)  raw/mp %.2f",
                    med.mp_tr * 1e3, med.c_tr * 1e3, med.raw_a2a * 1e3, med.c_tr / med.mp_tr,
                    med.raw_a2a / med.mp_tr))
print(string.format("  C pack+Alltoallv+unpack %.3f ms  ratio C(v)/mp %.2f (floor 0.9)",
                    med.c_trv * 1e3, med.c_trv / med.mp_tr))
print(string.format("  plan on rank 0: %d peers, %d messages, %d bytes sent, %d kept, peak extra %d",
                    info.peers, info.messages, info.send_bytes, info.self_bytes, info.peak_extra))
print(string.format("halo: mp %.1f us  C Isend/Irecv %.1f us  ratio C/mp %.2f (floor 0.8, goal 0.95)",
                    med.mp_halo * 1e6, med.c_halo * 1e6, med.c_halo / med.mp_halo))
if med.mp_pairs then
  print(string.format("  the halo's traffic as mp.send/mp.recv pairs: %.1f us (the messages' own cost)",
                      med.mp_pairs * 1e6))
end
