/* SPDX-License-Identifier: MIT */
/*
** serve_idle: what mplua_serve costs a host's loop when nothing is typed,
** per call, next to an empty MPI_Iprobe on the same communicator (the
** cheapest thing a loop could do to look for work). Rank 0's stdin is a pipe
** that never has data, as at a prompt nobody types at. Prints, on rank 0:
**   serve_idle ranks N: mplua_serve X us, MPI_Iprobe Y us, ratio R
** Run: mpiexec -n 4 build/serve_idle [calls]     (scripts/bench/embed.sh)
*/
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>
#include "mplua.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long calls = argc > 1 ? atol(argv[1]) : 20000;
  int fds[2];
  if (rank == 0 && (pipe(fds) != 0 || dup2(fds[0], STDIN_FILENO) < 0)) MPI_Abort(MPI_COMM_WORLD, 1);
  mplua_config c;
  mplua_config_init(&c);
  c.out = MPLUA_OUT_ALL;
  lua_State *L = mplua_open_config(&argc, &argv, &c);
  if (!L) MPI_Abort(MPI_COMM_WORLD, 1);
  double best_s = 1e9, best_p = 1e9;
  for (int round = 0; round < 3; round++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < calls; i++)
      if (mplua_serve(L, 0) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    double ts = (MPI_Wtime() - t0) / (double)calls;
    MPI_Barrier(MPI_COMM_WORLD);
    int flag;
    t0 = MPI_Wtime();
    for (long i = 0; i < calls; i++)
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    double tp = (MPI_Wtime() - t0) / (double)calls;
    if (ts < best_s) best_s = ts;
    if (tp < best_p) best_p = tp;
  }
  double w[2] = {best_s, best_p}, m[2];
  MPI_Reduce(w, m, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD); /* the slowest rank */
  if (rank == 0)
    printf("serve_idle ranks %d: mplua_serve %.3f us, MPI_Iprobe %.3f us, ratio %.1f\n", size,
           m[0] * 1e6, m[1] * 1e6, m[0] / m[1]);
  mplua_close(L, 0);
  MPI_Finalize();
  return 0;
}
