/* SPDX-License-Identifier: MIT */
/*
** Timing for the plain-C benchmarks: a monotonic clock and the median of
** repeated rounds (the figure they print, robust to a preempted round).
*/
#ifndef MPLUA_BENCH_CLOCK_H
#define MPLUA_BENCH_CLOCK_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts x. */
static inline double bench_median(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, bench_cmp);
  return x[n / 2];
}

#endif
