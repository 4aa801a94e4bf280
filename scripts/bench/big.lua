-- SPDX-License-Identifier: MIT
-- A message of several GiB: an f64 array sent by mp.send from rank 0 to rank
-- 1 (which answers with one value) against raw MPI_Send_c/MPI_Recv_c of the
-- same bytes, in the same job, interleaved; each side sends one message
-- before its clock starts. Run: mpiexec -n 2 build/mpbench scripts/bench/big.lua [GiB] [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
assert(mp.size >= 2, "run with at least 2 ranks")
local gib = tonumber(arg and arg[1]) or 3
local rounds = tonumber(arg and arg[2]) or 3
local BYTES = math.floor(gib * (1 << 30)) // 8 * 8

local function mp_stream(iters, n)
  local t
  if mp.rank == 0 then
    local a = rawget(_G, "big_array") or mp.array("f64", n):fill(1)
    rawset(_G, "big_array", a)
    for i = 0, iters do
      if i == 1 then t = mp.wtime() end
      mp.send(1, a)
      mp.recv(1)
    end
  elseif mp.rank == 1 then
    for i = 0, iters do
      if i == 1 then t = mp.wtime() end
      local a = mp.recv(0)
      a = nil
      mp.send(0, true)
    end
  end
  return t and (mp.wtime() - t) / iters or 0
end

local med = C.interleave(rounds, {
  {"raw", function() return mp.exec(bench.stream, 2, BYTES) end},
  {"mp", function() return mp.exec(mp_stream, 2, BYTES // 8) end},
})
print(string.format("ranks %d, %d rounds (medians)", mp.size, rounds))
print(string.format("%.2f GiB f64 array: mp %.2f GB/s  raw MPI_Send_c %.2f GB/s  ratio %.2f (floor 0.8)",
  BYTES / 2 ^ 30, BYTES / med.mp / 1e9, BYTES / med.raw / 1e9, med.raw / med.mp))
