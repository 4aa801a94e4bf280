-- SPDX-License-Identifier: MIT
-- A 3-D complex FFT (c128, forward) of N^3 on a pencil grid of the ranks: mp.fft against a
-- C program that does the same with FFTW and MPI_Alltoall transposes (fftbench.c: the same
-- stages, transposes and buffers), both with FFTW_MEASURE plans, interleaved rounds in one
-- job; medians and the ratio C/mp (floor 0.8, goal 0.95).
--   mpiexec -n P build/fftbench scripts/bench/fft.lua [rounds=7] [N=128] [iters=5]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 7
local n = tonumber(arg and arg[2]) or 128
local iters = tonumber(arg and arg[3]) or 5
local P = mp.size
local grid = mp.dims(P, 2)

-- plan once (outside the clock), then run: the mp side keeps its plan between rounds
mp.exec(function(n, grid)
  local lay = mp.layout(("c128[x=%d, y=%d@1, z=%d@2]"):format(n, n, n), {grid = grid})
  _G.fft_plan = mp.fft(lay, {effort = "measure"})
  local a = lay:alloc()
  local rg, sh = lay:range(), lay:local_shape()
  local i = 0
  for z = rg[3][1] - 1, rg[3][2] - 1 do
    for y = rg[2][1] - 1, rg[2][2] - 1 do
      for x = 0, n - 1 do
        i = i + 1
        a[i] = mp.complex(((x + 3 * y + 7 * z) % 17) / 17, ((x * y + z) % 13) / 13)
      end
    end
  end
  assert(i == #a and sh[1] == n)
  _G.fft_in, _G.fft_out = a, _G.fft_plan.output:alloc()
end, n, grid)

local function mp_fft(iters)
  local p, a, out = _G.fft_plan, _G.fft_in, _G.fft_out
  p:forward(a, out)
  mp.barrier()
  local t = mp.wtime()
  for _ = 1, iters do p:forward(a, out) end
  t = (mp.wtime() - t) / iters
  return t, out:norm(), mp.bcast(mp.rank == 0 and out[1].re or 0, 0)
end

local sums = {}
local cases = {
  {"c", function()
    local t, re, im = mp.exec(bench.fft3d, iters, n, grid[1], grid[2], "measure")
    sums.c = {re, im}
    return t
  end},
  {"mp", function()
    local t, re, im = mp.exec(mp_fft, iters)
    sums.mp = {re, im}
    return t
  end},
}
local med = C.interleave(rounds, cases)
for k = 1, 2 do -- the output's norm, and its first element
  assert(math.abs(sums.c[k] - sums.mp[k]) <= 1e-12 * sums.c[1],
         ("the transforms disagree: %.17g vs %.17g"):format(sums.c[k], sums.mp[k]))
end
local info = mp.exec(function() return _G.fft_plan:info() end)
print(("ranks %d (grid %dx%d), %d^3 c128 forward, %d rounds of %d (medians), FFTW_MEASURE"):format(
  P, grid[1], grid[2], n, rounds, iters))
print(("fft: mp %.2f ms  C FFTW+MPI_Alltoall %.2f ms  ratio C/mp %.3f (floor 0.8, goal 0.95)"):format(
  med.mp * 1e3, med.c * 1e3, med.c / med.mp))
print(("  plan on rank 0: %d stages, %d transposes, %d messages, %d bytes sent"):format(
  #info.stages, #info.transposes, info.messages, info.send_bytes))
