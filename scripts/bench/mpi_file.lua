-- SPDX-License-Identifier: MIT
-- mp.mpi's collective write against C's: every rank writes its contiguous
-- part of MiB (default 64) at rank * part, mpi.File_open + f:Write_at_all +
-- f:Close against C's MPI_File_open + MPI_File_write_at_all +
-- MPI_File_close of the same bytes (distbench.c's bench.write_at_all), each
-- from a barrier to a barrier, into a fresh file of a temporary directory;
-- interleaved rounds in one job, medians, the ratio C/mp (goal >= 0.8).
--   mpiexec -n 4 build/distbench scripts/bench/mpi_file.lua [rounds=7] [MiB=64] [dir]
-- dir: where the temporary directory is made (default: mktemp's, $TMPDIR or /tmp).
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 7
local mib = tonumber(arg and arg[2]) or 64
local base = arg and arg[3]
local P = mp.size
local part = mib * 2 ^ 20 // P
assert(part % 8 == 0 and part * P == mib * 2 ^ 20, "the ranks must divide the size in f64s")
local p = io.popen(base and ("mktemp -d -p '" .. base .. "'") or "mktemp -d")
local dir = p:read("l")
p:close()
assert(dir and #dir > 0, "mktemp -d failed")
local cpath, mpath = dir .. "/c.bin", dir .. "/mp.bin"

mp.exec(function(n)
  _G.file_a = mp.array("f64", n):fill(mp.rank + 1) -- written, so its pages exist
end, part // 8)

local function mp_write(path, part)
  local mpi = mp.mpi
  mpi.Barrier()
  local t = mp.wtime()
  local f = mpi.File_open(mpi.COMM_WORLD, path, mpi.MODE_CREATE | mpi.MODE_WRONLY)
  f:Write_at_all(mpi.Comm_rank() * part, _G.file_a)
  f:Close()
  mpi.Barrier()
  return mp.wtime() - t
end

local cases = {
  {"c", function() os.remove(cpath); return mp.exec(bench.write_at_all, cpath, part) end},
  {"mp", function() os.remove(mpath); return mp.exec(mp_write, mpath, part) end},
}
local med = C.interleave(rounds, cases)
for _, path in ipairs({cpath, mpath}) do
  local f = assert(io.open(path, "rb"))
  assert(f:seek("end") == mib * 2 ^ 20, "the file's size")
  f:close()
  os.remove(path)
end
os.remove(dir)
print(("ranks %d, %d MiB (%d MiB per rank) into %s, %d rounds (medians)"):format(
  P, mib, part // 2 ^ 20, dir, rounds))
print(("open + Write_at_all + close: mp.mpi %.1f ms (%.2f GB/s)  C %.1f ms (%.2f GB/s)  " ..
  "ratio C/mp %.3f (goal >= 0.8)"):format(med.mp * 1e3, mib * 2 ^ 20 / med.mp / 1e9,
  med.c * 1e3, mib * 2 ^ 20 / med.c / 1e9, med.c / med.mp))
