/* SPDX-License-Identifier: MIT */
/* mpi_empty: MPI_Init and MPI_Finalize, nothing else: the start-up floor that
** scripts/bench/embed.sh holds `lua5.4 -l mp -e ''` to. */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Finalize();
  return 0;
}
