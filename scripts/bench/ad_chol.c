/* SPDX-License-Identifier: MIT */
/*
** Cholesky benchmark (plain C, no Lua): the factor of a 200x200 symmetric
** positive definite matrix with its gradient (record the factor on a tape,
** one reverse sweep of a weighted sum of its entries back to A) against a
** plain C Cholesky of the same matrix (value only). Floor: at most 4x.
** Rounds alternate between the two, 15 of them; medians and their ratio,
** and the fastest rounds' (on a shared machine a round is sometimes
** preempted for tens of milliseconds).
** Run: build/ad_chol [n]
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_clock.h"
#include "ad_mat.h"

#define REPS 15
static volatile double sink;

/* The baseline: a textbook right-looking Cholesky on column-major storage,
** inner loops down columns (contiguous). */
static double plain_chol(const double *A, size_t n, double *L) {
  double t0 = bench_now();
  for (size_t i = 0; i < n * n; i++) L[i] = A[i];
  for (size_t k = 0; k < n; k++) {
    double *ck = L + k * n, d = sqrt(ck[k]);
    ck[k] = d;
    for (size_t i = k + 1; i < n; i++) ck[i] /= d;
    for (size_t j = k + 1; j < n; j++) {
      double ljk = ck[j], *cj = L + j * n;
      for (size_t i = j; i < n; i++) cj[i] -= ck[i] * ljk;
    }
  }
  for (size_t j = 1; j < n; j++)
    for (size_t i = 0; i < j; i++) L[i + j * n] = 0;
  sink = L[n * n - 1];
  return bench_now() - t0;
}

/* value and gradient: leaves for A, the factor, sum_ij w_ij L_ij, the sweep */
static double ad_chol_grad(ad_tape *t, const double *A, const double *w, size_t n, double *g) {
  double t0 = bench_now();
  ad_region_begin(t);
  ad_idx a, L, y;
  double v;
  ad_vars_new(t, n * n, A, &a);
  ad_cholesky(t, n, ad_arg_var(a, n * n), NULL, &L);
  ad_dot(t, ad_arg_var(L, n * n), ad_arg_const(w, n * n), &v, &y);
  ad_vjp(t, 1, &y, (double[]){1.0}, 0, NULL, NULL); /* the sweep; read adj below */
  for (size_t i = 0; i < n * n; i++) g[i] = t->adj[a + i];
  sink = v + g[0];
  ad_region_end(t);
  return bench_now() - t0;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)atol(argv[1]) : 200;
  double *A = malloc(n * n * sizeof *A), *L = malloc(n * n * sizeof *L);
  double *w = malloc(n * n * sizeof *w), *g = malloc(n * n * sizeof *g);
  /* A = B B' + n I with B of sines: well conditioned, dense */
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j <= i; j++) {
      double s = i == j ? (double)n : 0;
      for (size_t k = 0; k < n; k++) s += sin((double)(i * n + k)) * sin((double)(j * n + k));
      A[i + j * n] = A[j + i * n] = s;
    }
  for (size_t i = 0; i < n * n; i++) w[i] = cos((double)i);
  ad_tape t;
  ad_tape_init(&t);
  ad_chol_grad(&t, A, w, n, g); /* warm: the tape reaches its size once */
  plain_chol(A, n, L);
  double a[REPS], b[REPS];
  for (int r = 0; r < REPS; r++) {
    a[r] = plain_chol(A, n, L);
    b[r] = ad_chol_grad(&t, A, w, n, g);
  }
  double pa = bench_median(a, REPS), pb = bench_median(b, REPS); /* bench_median() sorts: [0] is the min */
  printf("cholesky %zux%zu: plain C value %.3f ms, value+gradient %.3f ms, ratio %.2fx "
         "(fastest rounds: %.3f / %.3f ms, %.2fx)\n", n, n, pa * 1e3, pb * 1e3, pb / pa,
         a[0] * 1e3, b[0] * 1e3, b[0] / a[0]);
  ad_tape_free(&t);
  free(A), free(L), free(w), free(g);
  return 0;
}
