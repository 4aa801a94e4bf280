-- SPDX-License-Identifier: MIT
-- A parallel write with MPI-IO, prototyped with mp.mpi: a 2-D field
-- u(i, j) = i + j / 1000 (1-based global indices) distributed over a grid
-- of ranks by a layout, each rank's block written collectively under a view
-- of its box (Set_view with the layout, Write_at_all), then read back the
-- same way and checked. The file holds the whole array in Fortran order
-- (i fastest), raw f64 after a 16-byte header of the two extents (i64),
-- which rank 0 writes alone with Write_at: mpi_read.c beside this script
-- reads it with plain C stdio (tests/sh/mpi_write.sh).
--   mpiexec -n 4 build/mplua scripts/examples/mpi_write.lua field.bin [nx ny]
local path = assert(arg and arg[1], "usage: mpi_write.lua FILE [nx ny]")
local nx, ny = tonumber(arg[2]) or 40, tonumber(arg[3]) or 30

local sum = mp.exec(function(path, nx, ny)
  local mpi = mp.mpi
  local lay = mp.layout(("f64[i=%d@1, j=%d@2]"):format(nx, ny), {balanced = true})
  local u = lay:alloc()                  -- this rank's block, i fastest
  local rg, sh = lay:range(), lay:local_shape()
  for jj = 0, sh[2] - 1 do
    for ii = 0, sh[1] - 1 do
      u[1 + ii + jj * sh[1]] = (rg[1][1] + ii) + (rg[2][1] + jj) / 1000
    end
  end
  local f = mpi.File_open(mpi.COMM_WORLD, path, "w")
  if mpi.Comm_rank() == 0 then           -- the header: nx, ny
    local h = mp.array("i64", 2)
    h[1], h[2] = nx, ny
    f:Write_at(0, h)
  end
  f:Set_view(16, "f64", lay)             -- this rank's box of the array, after the header
  f:Write_at_all(0, u)
  f:Close()
  -- read back the same way and check
  f = mpi.File_open(mpi.COMM_WORLD, path, "r")
  f:Set_view(16, "f64", lay)
  local v, got = f:Read_at_all(0, #u)
  f:Close()
  local s = 0
  for k = 1, #u do
    assert(v[k] == u[k], "read back differs")
    s = s + u[k]
  end
  assert(got == #u)
  return mpi.Allreduce(s, mpi.SUM)
end, path, nx, ny)
print(("wrote %s: %dx%d f64, sum %.3f"):format(path, nx, ny, sum))
