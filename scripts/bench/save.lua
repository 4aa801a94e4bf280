-- SPDX-License-Identifier: MIT
-- A collective write of a distributed f64 array (contiguous blocks: the last dimension
-- split over the ranks): mp.save (a NumPy .npy file through MPI-IO, the agreement, the
-- header, nonblocking collective I/O, the rename) against C's MPI_File_open +
-- MPI_File_write_at_all + MPI_File_close of the same bytes per rank; interleaved rounds in
-- one job, each into a fresh file; medians and the ratio C/mp (floor 0.8).
--   mpiexec -n 4 build/distbench scripts/bench/save.lua [rounds=5] [MiB=256] [dir=/tmp]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 5
local mib = tonumber(arg and arg[2]) or 256
local dir = arg and arg[3] or "/tmp"
local P = mp.size
local nx = 4096
local ny = mib * 2 ^ 20 // 8 // nx
assert(ny % P == 0, "the ranks must divide " .. ny)
local cpath, mpath = dir .. "/mplua_bench_c.bin", dir .. "/mplua_bench_mp.npy"

mp.exec(function(nx, ny)
  local lay = mp.layout(("f64[x=%d, y=%d@1]"):format(nx, ny))
  _G.save_d = lay:alloc():fill(mp.rank + 1) -- written, so its pages exist
end, nx, ny)

local function mp_save(path)
  mp.barrier()
  local t = mp.wtime()
  mp.save(path, _G.save_d)
  return mp.wtime() - t
end

local cases = {
  {"c", function() os.remove(cpath); return mp.exec(bench.write_at_all, cpath, nx * ny * 8 // P) end},
  {"mp", function() os.remove(mpath); return mp.exec(mp_save, mpath) end},
}
local med = C.interleave(rounds, cases)
local f = assert(io.open(mpath, "rb"))
local size = f:seek("end")
f:close()
assert(size == nx * ny * 8 + 128, "the file's size")
os.remove(cpath)
os.remove(mpath)
print(("ranks %d, %d MiB f64 (%d x %d, %d MiB per rank) into %s, %d rounds (medians)"):format(
  P, mib, nx, ny, mib // P, dir, rounds))
print(("write: mp.save %.1f ms (%.2f GB/s)  C MPI_File_write_at_all %.1f ms (%.2f GB/s)  ratio C/mp %.3f (floor 0.8)"):format(
  med.mp * 1e3, nx * ny * 8 / med.mp / 1e9, med.c * 1e3, nx * ny * 8 / med.c / 1e9, med.c / med.mp))
