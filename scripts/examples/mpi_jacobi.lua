-- SPDX-License-Identifier: MIT
-- A 2-D Jacobi iteration prototyped with mp.mpi: the grid's rows split over
-- the ranks, halo rows exchanged with Sendrecv (PROC_NULL at the edges), the
-- residual summed with Allreduce. mpi_jacobi.c beside it is its line-by-line
-- C translation; both print the same residuals, bit for bit, at 4 ranks
-- (tests/sh/mpi_jacobi.sh).
--   mpiexec -n 4 build/mplua scripts/examples/mpi_jacobi.lua [n iters]
local n, iters = tonumber(arg and arg[1]) or 64, tonumber(arg and arg[2]) or 50

local residuals = {mp.exec(function(N, ITERS)
  local mpi = mp.mpi
  local rank, size = mpi.Comm_rank(), mpi.Comm_size()
  assert(N % size == 0, "the rows must split evenly over the ranks")
  local rows = N // size
  local up = rank == 0 and mpi.PROC_NULL or rank - 1
  local down = rank == size - 1 and mpi.PROC_NULL or rank + 1
  -- u[0] and u[rows + 1] are halo rows; columns 1 and N + 2 the fixed boundary
  local u = {}
  for i = 0, rows + 1 do u[i] = mp.array("f64", N + 2) end
  if rank == 0 then for j = 1, N + 2 do u[0][j] = 1.0 end end -- the hot top edge
  local out = {}
  for it = 1, ITERS do
    local below = mpi.Sendrecv(u[1], up, 1, down, 1)
    if below then u[rows + 1] = below end
    local above = mpi.Sendrecv(u[rows], down, 2, up, 2)
    if above then u[0] = above end
    local new, res = {[0] = u[0], [rows + 1] = u[rows + 1]}, 0.0
    for i = 1, rows do
      local a, b, c, r = u[i - 1], u[i], u[i + 1], mp.array("f64", N + 2)
      for j = 2, N + 1 do
        local v = 0.25 * (a[j] + c[j] + b[j - 1] + b[j + 1])
        local d = v - b[j]
        res = res + d * d
        r[j] = v
      end
      new[i] = r
    end
    u = new
    res = mpi.Allreduce(res, mpi.SUM)
    if it % 10 == 0 then out[#out + 1] = string.format("%d %a", it, res) end
  end
  return table.concat(out, "\n")
end, n, iters)}
print(residuals[1])
