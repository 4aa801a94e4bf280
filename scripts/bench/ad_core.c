/* SPDX-License-Identifier: MIT */
/*
** Autodiff core benchmarks (plain C, no Lua), each baseline in the same run,
** interleaved, repeated; medians and ratios printed.
**   1. record + reverse sweep cost per binary op (floor: <= 3 ns), on a large
**      tape (2e6 ops, memory-bound) and on one that stays in cache (1e5 ops)
**   2. gradient of normal_lpdf over 1e6 points / the plain C log density
**      (floor: <= 1.5x)
**   3. Hessian of a 50-parameter function / its gradient (reported)
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_clock.h"
#include "ad_dist.h"
#include "ad_hess.h"
#include "ad_scalar.h"

#define REPS 15
static volatile double sink;

/* 1. n binary ops (mul and add alternating), then one reverse sweep.
** chain = 1: one serial dependency chain s = s*x1 + x0 (latency-bound, the
** worst case); chain = 0: independent ops over 64 leaves (throughput). */
static double binop_run(ad_tape *t, size_t n, int chain) {
  double t0 = bench_now();
  ad_region_begin(t);
  ad_idx x, s, p, in[2];
  ad_vars_new(t, 2, (double[]){1.0000001, 0.9999999}, &x);
  in[0] = x; in[1] = x + 1;
  s = x;
  if (chain) {
    for (size_t i = 0; i < n / 2; i++) {
      ad_binary(t, AD_OP_MUL, s, x + 1, &p);
      ad_binary(t, AD_OP_ADD, p, x, &s);
    }
  } else {
    ad_idx leaves;
    ad_vars_new(t, 64, NULL, &leaves);
    for (size_t i = 0; i < n / 2; i++) {
      ad_binary(t, AD_OP_MUL, leaves + (ad_idx)(i & 63), leaves + (ad_idx)((i + 7) & 63), &p);
      ad_binary(t, AD_OP_ADD, p, leaves + (ad_idx)((i + 13) & 63), &s);
    }
  }
  double g[2];
  ad_grad(t, s, 2, in, g);
  sink = g[0];
  ad_region_end(t);
  return bench_now() - t0;
}

#define HALF_LOG_2PI 0.91893853320467274178
static double normal_plain(const double *y, size_t n, double mu, double sigma) {
  double t0 = bench_now(), lp = 0, inv = 1 / sigma, ls = log(sigma);
  for (size_t i = 0; i < n; i++) {
    double z = (y[i] - mu) * inv;
    lp += -0.5 * z * z - ls - HALF_LOG_2PI;
  }
  sink = lp;
  return bench_now() - t0;
}

static double normal_grad(ad_tape *t, const double *y, size_t n, double mu, double sigma) {
  double t0 = bench_now();
  ad_region_begin(t);
  ad_idx p, out;
  ad_vars_new(t, 2, (double[]){mu, sigma}, &p);
  ad_arg args[3] = {ad_arg_const(y, n), ad_arg_var(p, 1), ad_arg_var(p + 1, 1)};
  double v, g[2];
  ad_idx in[2] = {p, p + 1};
  ad_dist(t, AD_DIST_NORMAL, args, &v, &out, NULL);
  ad_grad(t, out, 2, in, g);
  sink = v + g[0] + g[1];
  ad_region_end(t);
  return bench_now() - t0;
}

/* a 50-parameter function: a chain of scalar ops plus vector nodes */
static ad_idx f50(ad_tape *t, ad_idx x, size_t n) {
  ad_idx acc, a, b;
  double v;
  ad_var_new(t, 0, &acc);
  for (size_t i = 0; i + 1 < n; i++) {
    ad_unary(t, AD_OP_TANH, x + (ad_idx)i, &a);
    ad_binary(t, AD_OP_MUL, a, x + (ad_idx)i + 1, &a);
    ad_unary(t, AD_OP_EXP, x + (ad_idx)i + 1, &b);
    ad_binary(t, AD_OP_DIV, a, b, &a);
    ad_binary(t, AD_OP_ADD, acc, a, &acc);
  }
  ad_log_sum_exp(t, ad_arg_var(x, n), &v, &a);
  ad_binary(t, AD_OP_ADD, acc, a, &acc);
  ad_dot(t, ad_arg_var(x, n), ad_arg_var(x, n), &v, &a);
  ad_binary(t, AD_OP_SUB, acc, a, &acc);
  return acc;
}

static double hess_run(ad_tape *t, const double *x0, size_t n, int hessian) {
  static double g[50], H[2500];
  ad_idx in[50], x;
  double t0 = bench_now();
  ad_region_begin(t);
  ad_vars_new(t, n, x0, &x);
  for (size_t i = 0; i < n; i++) in[i] = x + (ad_idx)i;
  ad_idx y = f50(t, x, n);
  if (hessian) ad_hessian(t, y, n, in, g, H);
  else ad_grad(t, y, n, in, g);
  sink = g[0] + H[0];
  ad_region_end(t);
  return bench_now() - t0;
}

int main(int argc, char **argv) {
  ad_tape t;
  ad_tape_init(&t);
  double a[REPS], b[REPS];

  /* Two tape sizes: the default 2e6 ops (an ~80 MB tape: memory-bound) and
  ** 1e5 ops (~4 MB: the tape stays in cache), interleaved. */
  const size_t nops = argc > 1 ? (size_t)atol(argv[1]) : 2000000, small = 100000;
  double c[REPS], d[REPS];
  binop_run(&t, nops, 0); /* warm: the tape's arrays reach size once */
  for (int r = 0; r < REPS; r++) {
    a[r] = binop_run(&t, nops, 0);
    b[r] = binop_run(&t, nops, 1);
    c[r] = binop_run(&t, small, 0);
    d[r] = binop_run(&t, small, 1);
  }
  double ma = bench_median(a, REPS), mb = bench_median(b, REPS);
  printf("core: record+sweep per binary op: independent %.2f ns (min %.2f), "
         "serial chain %.2f ns (min %.2f); median of %d runs of %zu ops\n",
         ma / (double)nops * 1e9, a[0] / (double)nops * 1e9, mb / (double)nops * 1e9,
         b[0] / (double)nops * 1e9, REPS, nops);
  ma = bench_median(c, REPS);
  mb = bench_median(d, REPS);
  printf("core: record+sweep per binary op: independent %.2f ns (min %.2f), "
         "serial chain %.2f ns (min %.2f); median of %d runs of %zu ops (tape in cache)\n",
         ma / (double)small * 1e9, c[0] / (double)small * 1e9, mb / (double)small * 1e9,
         d[0] / (double)small * 1e9, REPS, small);

  const size_t N = 1000000;
  double *y = malloc(N * sizeof *y);
  for (size_t i = 0; i < N; i++) y[i] = sin((double)i) * 3 + 1;
  normal_grad(&t, y, N, 0.5, 2.0);
  for (int r = 0; r < REPS; r++) {
    a[r] = normal_plain(y, N, 0.5, 2.0);
    b[r] = normal_grad(&t, y, N, 0.5, 2.0);
  }
  double pa = bench_median(a, REPS), pb = bench_median(b, REPS);
  printf("normal_lpdf 1e6 points: plain C %.3f ms, value+gradient %.3f ms, ratio %.2fx\n",
         pa * 1e3, pb * 1e3, pb / pa);

  double x0[50];
  for (int i = 0; i < 50; i++) x0[i] = 0.1 * sin(i + 1.0);
  hess_run(&t, x0, 50, 1);
  for (int r = 0; r < REPS; r++) {
    a[r] = hess_run(&t, x0, 50, 0);
    b[r] = hess_run(&t, x0, 50, 1);
  }
  pa = bench_median(a, REPS);
  pb = bench_median(b, REPS);
  printf("hessian of a 50-parameter function: gradient %.2f us, hessian %.2f us, ratio %.1fx\n",
         pa * 1e6, pb * 1e6, pb / pa);
  free(y);
  ad_tape_free(&t);
  return 0;
}
