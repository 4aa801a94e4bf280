/* SPDX-License-Identifier: MIT */
/*
** Reads the file scripts/examples/mpi_write.lua writes with MPI-IO (two i64
** extents nx, ny, then u(i, j) = i + j / 1000 as f64 in Fortran order) with
** plain C stdio, checks every value and prints the same line as the script.
**   build/mpi_read field.bin
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  FILE *fp = fopen(argv[1], "rb");
  if (!fp) {
    perror(argv[1]);
    return 1;
  }
  int64_t n[2];
  if (fread(n, sizeof n[0], 2, fp) != 2 || n[0] < 0 || n[1] < 0) {
    fprintf(stderr, "%s: no header\n", argv[1]);
    return 1;
  }
  double sum = 0;
  long bad = 0;
  for (int64_t j = 1; j <= n[1]; j++) {
    for (int64_t i = 1; i <= n[0]; i++) {
      double u;
      if (fread(&u, sizeof u, 1, fp) != 1) {
        fprintf(stderr, "%s: short at (%" PRId64 ", %" PRId64 ")\n", argv[1], i, j);
        return 1;
      }
      if (u != (double)i + (double)j / 1000) bad++;
      sum += u;
    }
  }
  if (fgetc(fp) != EOF) {
    fprintf(stderr, "%s: longer than its header says\n", argv[1]);
    return 1;
  }
  fclose(fp);
  if (bad) {
    fprintf(stderr, "%s: %ld values differ\n", argv[1], bad);
    return 1;
  }
  printf("wrote %s: %" PRId64 "x%" PRId64 " f64, sum %.3f\n", argv[1], n[0], n[1], sum);
  return 0;
}
