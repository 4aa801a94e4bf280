/* SPDX-License-Identifier: MIT */
/* The core's matrix nodes (custom sweeps), per-element densities and
** second-order precomputed nodes, without Lua: forward passes (jvp) agree
** with reverse sweeps (vjp) through every custom node, Hessian-vector
** products through them match differences of gradients, the Hessian passes
** go through precomputed second partials, and the per-element node sums to
** the summed one. */
#include <criterion/criterion.h>
#include <math.h>
#include "ad_dist.h"
#include "ad_hess.h"
#include "ad_mat.h"
#include "ad_scalar.h"

static int close_to(double a, double b, double tol) {
  return fabs(a - b) <= tol * fmax(1, fmax(fabs(a), fabs(b)));
}

/* The gradient of y[0] = (A trisolve(cholesky(A), B))[0] at (A, B) + s v. */
static void record_grad(int trans, const double *v, double s, double *g) {
  static const double A0[9] = {4, 2, 0.6, 2, 5, 1.5, 0.6, 1.5, 3}, B0[6] = {0.3, -1, 2, 1, 0, -0.5};
  double A[9], B[6];
  for (int i = 0; i < 9; i++) A[i] = A0[i] + s * v[i];
  for (int i = 0; i < 6; i++) B[i] = B0[i] + s * v[9 + i];
  ad_tape t;
  ad_tape_init(&t);
  ad_idx a, b, L, X, M, in[15];
  ad_vars_new(&t, 9, A, &a);
  ad_vars_new(&t, 6, B, &b);
  for (int i = 0; i < 9; i++) in[i] = a + (ad_idx)i;
  for (int i = 0; i < 6; i++) in[9 + i] = b + (ad_idx)i;
  ad_cholesky(&t, 3, ad_arg_var(a, 9), NULL, &L);
  ad_trisolve(&t, 3, 2, ad_arg_var(L, 9), ad_arg_var(b, 6), trans, NULL, &X);
  ad_matmul(&t, 3, 3, 2, ad_arg_var(a, 9), ad_arg_var(X, 6), NULL, &M);
  ad_grad(&t, M, 15, in, g);
  ad_tape_free(&t);
}

/* J v by one forward pass against the rows u_i' J by reverse sweeps, for
** y = trisolve(cholesky(A(x)), B(x)) with x the 9 + 6 inputs. */
Test(ad_mat, forward_and_reverse_agree_through_custom_nodes) {
  static const double A[9] = {4, 2, 0.6, 2, 5, 1.5, 0.6, 1.5, 3}, B[6] = {0.3, -1, 2, 1, 0, -0.5};
  for (int trans = 0; trans < 2; trans++) {
    ad_tape t;
    ad_tape_init(&t);
    ad_idx a, b, L, X, M, in[15], y[6];
    cr_assert_eq(ad_vars_new(&t, 9, A, &a), 0);
    cr_assert_eq(ad_vars_new(&t, 6, B, &b), 0);
    for (int i = 0; i < 9; i++) in[i] = a + (ad_idx)i;
    for (int i = 0; i < 6; i++) in[9 + i] = b + (ad_idx)i;
    cr_assert_eq(ad_cholesky(&t, 3, ad_arg_var(a, 9), NULL, &L), 0);
    cr_assert_eq(ad_trisolve(&t, 3, 2, ad_arg_var(L, 9), ad_arg_var(b, 6), trans, NULL, &X), 0);
    cr_assert_eq(ad_matmul(&t, 3, 3, 2, ad_arg_var(a, 9), ad_arg_var(X, 6), NULL, &M), 0);
    for (int i = 0; i < 6; i++) y[i] = M + (ad_idx)i;
    double v[15], jv[6], J[6 * 15];
    for (int j = 0; j < 15; j++) v[j] = sin(j + 1.0);
    cr_assert_eq(ad_jvp(&t, 6, y, 15, in, v, jv), 0);
    for (int i = 0; i < 6; i++) {
      double one = 1;
      cr_assert_eq(ad_vjp(&t, 1, &y[i], &one, 15, in, J + i * 15), 0);
      double s = 0;
      for (int j = 0; j < 15; j++) s += J[i * 15 + j] * v[j];
      cr_expect(close_to(jv[i], s, 1e-12), "trans %d: jvp[%d] %.17g vs J v %.17g", trans, i, jv[i], s);
    }
    /* second order through them: H v against central differences of the gradient */
    double hv[15], g0[15];
    cr_assert_eq(ad_hvp(&t, y[0], 15, in, 1, v, g0, hv), 0);
    ad_tape_free(&t);
    double gp[15], gm[15], h = 1e-6;
    record_grad(trans, v, h, gp);
    record_grad(trans, v, -h, gm);
    for (int j = 0; j < 15; j++)
      cr_expect(close_to(hv[j], (gp[j] - gm[j]) / (2 * h), 1e-6), "trans %d: (Hv)[%d] %.12g vs fd %.12g",
                trans, j, hv[j], (gp[j] - gm[j]) / (2 * h));
  }
}

/* A precomputed node with second partials: the Hessian pass contracts them
** with the inputs' tangents (here the inputs are functions of x). */
Test(ad_mat, precomputed_second_order) {
  ad_tape t;
  ad_tape_init(&t);
  ad_idx x, u[2], y;
  double xv[2] = {0.7, -0.4};
  cr_assert_eq(ad_vars_new(&t, 2, xv, &x), 0);
  ad_idx in[2] = {x, x + 1};
  cr_assert_eq(ad_unary(&t, AD_OP_EXP, x, &u[0]), 0);      /* u0 = e^x0 */
  cr_assert_eq(ad_binary(&t, AD_OP_MUL, x, x + 1, &u[1]), 0); /* u1 = x0 x1 */
  /* f(u) = u0^2 u1 at the current u: value, gradient, Hessian */
  double u0 = t.val[u[0]], u1 = t.val[u[1]];
  double g[2] = {2 * u0 * u1, u0 * u0}, H[4] = {2 * u1, 2 * u0, 2 * u0, 0};
  cr_assert_eq(ad_precomputed2(&t, u0 * u0 * u1, 2, u, g, H, &y), 0);
  double grad[2], Hx[4];
  cr_assert_eq(ad_hessian(&t, y, 2, in, grad, Hx), 0);
  /* f = e^(2 x0) x0 x1: d2/dx0^2 = e^(2x0) (4 x0 + 4) x1, d2/dx0dx1 = e^(2x0) (2 x0 + 1),
  ** d2/dx1^2 = 0 */
  double e2 = exp(2 * xv[0]);
  cr_expect(close_to(grad[0], e2 * (2 * xv[0] + 1) * xv[1], 1e-14));
  cr_expect(close_to(grad[1], e2 * xv[0], 1e-14));
  cr_expect(close_to(Hx[0], e2 * (4 * xv[0] + 4) * xv[1], 1e-13));
  cr_expect(close_to(Hx[1], e2 * (2 * xv[0] + 1), 1e-13) && close_to(Hx[2], Hx[1], 1e-15));
  cr_expect(close_to(Hx[3], 0, 1e-15));
  /* a first-order precomputed node still refuses */
  ad_idx z;
  cr_assert_eq(ad_precomputed(&t, 1.0, 2, u, g, &z), 0);
  cr_expect_eq(ad_hessian(&t, z, 2, in, grad, Hx), AD_ENOSECOND);
  ad_tape_free(&t);
}

/* ad_dist_each's outputs sum to ad_dist's value, its constants-only values
** go to cval, and counts are checked in both. */
Test(ad_mat, each_sums_to_the_summed_density) {
  ad_tape t;
  ad_tape_init(&t);
  double y[4] = {0.3, 1.2, -0.5, 2.0}, cval[4];
  ad_idx mu, out, s;
  size_t n, bad = 9;
  cr_assert_eq(ad_var_new(&t, 0.4, &mu), 0);
  ad_arg args[3] = {ad_arg_const(y, 4), ad_arg_var(mu, 1), ad_arg_scalar(1.3)};
  cr_assert_eq(ad_dist_each(&t, AD_DIST_NORMAL, args, cval, &out, &n, NULL), 0);
  cr_assert_eq(n, 4);
  double total, sum = 0;
  cr_assert_eq(ad_dist(&t, AD_DIST_NORMAL, args, &total, &s, NULL), 0);
  for (size_t i = 0; i < 4; i++) sum += t.val[out + i];
  cr_expect(close_to(sum, total, 1e-15));
  ad_arg cst[3] = {ad_arg_const(y, 4), ad_arg_scalar(0.4), ad_arg_scalar(1.3)};
  cr_assert_eq(ad_dist_each(&t, AD_DIST_NORMAL, cst, cval, &out, &n, NULL), 0);
  cr_expect_eq(out, AD_NOVAR);
  for (size_t i = 0; i < 4; i++) {
    double x[3] = {y[i], 0.4, 1.3}, f, g[3];
    ad_dist_elem(AD_DIST_NORMAL, x, &f, g, NULL);
    cr_expect_eq(cval[i], f, "element %zu", i);
  }
  cr_expect(close_to(cval[0] + cval[1] + cval[2] + cval[3], total, 1e-15));
  double k[2] = {1, 2.5};
  ad_arg cnt[2] = {ad_arg_const(k, 2), ad_arg_var(mu, 1)};
  size_t elem = 9;
  cr_expect_eq(ad_dist(&t, AD_DIST_POISSON_LOG, cnt, &total, &s, &bad), AD_ECOUNT);
  cr_expect_eq(ad_dist_each(&t, AD_DIST_POISSON_LOG, cnt, cval, &out, &n, &bad), AD_ECOUNT);
  cr_expect_eq(ad_dist_check_counts(&t, AD_DIST_POISSON_LOG, cnt, 2, &bad, &elem), AD_ECOUNT);
  cr_expect(bad == 0 && elem == 1);
  ad_tape_free(&t);
}
