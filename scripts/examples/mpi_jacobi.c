/* SPDX-License-Identifier: MIT */
/*
** The C translation of mpi_jacobi.lua, call for call: MPI_Sendrecv halos with
** MPI_PROC_NULL at the edges, an MPI_Allreduce residual. It prints the same
** residuals as the Lua prototype, bit for bit (tests/sh/mpi_jacobi.sh).
**   mpiexec -n 4 build/mpi_jacobi [n iters]
*/
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int N = argc > 1 ? atoi(argv[1]) : 64, ITERS = argc > 2 ? atoi(argv[2]) : 50;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (N % size != 0) {
    if (rank == 0) fprintf(stderr, "the rows must split evenly over the ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int rows = N / size, W = N + 2;
  int up = rank == 0 ? MPI_PROC_NULL : rank - 1;
  int down = rank == size - 1 ? MPI_PROC_NULL : rank + 1;
  /* row i at u + i * W, i = 0..rows+1 (halos 0 and rows+1); column 0 and N+1
  ** are the boundary (the Lua's 1 and N+2) */
  double *u = calloc((size_t)(rows + 2) * W, sizeof *u);
  double *nu = calloc((size_t)(rows + 2) * W, sizeof *nu);
  if (!u || !nu) MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank == 0)
    for (int j = 0; j < W; j++) u[j] = 1.0;
  for (int it = 1; it <= ITERS; it++) {
    MPI_Sendrecv(u + 1 * W, W, MPI_DOUBLE, up, 1, u + (rows + 1) * W, W, MPI_DOUBLE, down, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(u + rows * W, W, MPI_DOUBLE, down, 2, u, W, MPI_DOUBLE, up, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    double res = 0.0;
    for (int j = 0; j < W; j++) {
      nu[j] = u[j];
      nu[(rows + 1) * W + j] = u[(rows + 1) * W + j];
    }
    for (int i = 1; i <= rows; i++) {
      const double *a = u + (i - 1) * W, *b = u + i * W, *c = u + (i + 1) * W;
      double *r = nu + i * W;
      r[0] = r[N + 1] = 0.0;
      for (int j = 1; j <= N; j++) {
        double v = 0.25 * (a[j] + c[j] + b[j - 1] + b[j + 1]);
        double d = v - b[j];
        res = res + d * d;
        r[j] = v;
      }
    }
    double *t = u;
    u = nu;
    nu = t;
    double all;
    MPI_Allreduce(&res, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (it % 10 == 0 && rank == 0) printf("%d %a\n", it, all);
  }
  free(u);
  free(nu);
  MPI_Finalize();
  return 0;
}
