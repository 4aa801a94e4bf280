/* SPDX-License-Identifier: MIT */
/* The tape: nested regions, growth across many blocks, sweeps, forward mode,
** Jacobians, Hessians against finite differences of gradients, precomputed
** nodes and error codes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include "ad_hess.h"
#include "ad_scalar.h"
#include "ad_vec.h"

static int close_to(double a, double b, double tol) {
  return fabs(a - b) <= tol * fmax(1, fmax(fabs(a), fabs(b)));
}

Test(ad_tape, error_codes_have_names_and_messages) {
  cr_expect_str_eq(ad_err_name(AD_ENOMEM), "AD_ENOMEM");
  cr_expect_str_eq(ad_strerror(AD_ESIZE), "lengths do not match");
  cr_expect_str_eq(ad_err_name(12345), "AD_UNKNOWN");
  cr_expect(AD_ENOMEM < 0 && AD_ESIZE < 0 && AD_ENOMEM != AD_ESIZE);
}

Test(ad_tape, nested_regions_recover_memory_and_stale_vars) {
  ad_tape t;
  ad_tape_init(&t);
  ad_idx a, b, c;
  cr_assert_eq(ad_var_new(&t, 2, &a), 0);
  uint32_t sa = ad_var_serial(&t, a);
  cr_assert_eq(ad_region_begin(&t), 0);
  ad_var_new(&t, 3, &b);
  uint32_t sb = ad_var_serial(&t, b);
  cr_expect_neq(sa, sb);
  ad_binary(&t, AD_OP_MUL, a, b, &c);
  ad_idx nv = t.nvar, ne = t.nent;
  cr_assert_eq(ad_region_begin(&t), 0);
  for (int i = 0; i < 1000; i++) ad_unary(&t, AD_OP_EXP, c, &c);
  cr_expect_gt(t.nvar, nv);
  cr_assert_eq(ad_region_end(&t), 0);
  cr_expect_eq(t.nvar, nv);
  cr_expect_eq(t.nent, ne);
  cr_expect(ad_var_live(&t, b, sb));
  cr_assert_eq(ad_region_end(&t), 0);
  cr_expect_eq(t.nvar, 1);
  cr_expect(!ad_var_live(&t, b, sb));
  cr_expect(ad_var_live(&t, a, sa));
  /* a new var reusing b's slot is a different var */
  ad_var_new(&t, 5, &c);
  cr_expect_eq(c, b);
  cr_expect(!ad_var_live(&t, c, sb));
  cr_expect_eq(ad_region_end(&t), AD_ENOREGION);
  for (int i = 1; i < AD_MAXDEPTH; i++) cr_assert_eq(ad_region_begin(&t), 0);
  cr_expect_eq(ad_region_begin(&t), AD_EDEPTH);
  ad_tape_free(&t);
}

Test(ad_tape, jacobian_inside_nested_region_of_outer_vars) {
  ad_tape t;
  ad_tape_init(&t);
  ad_idx x[2], y[2], u;
  ad_vars_new(&t, 2, (double[]){1.5, -0.5}, &x[0]);
  x[1] = x[0] + 1;
  ad_binary(&t, AD_OP_MUL, x[0], x[1], &u); /* outer work */
  cr_assert_eq(ad_region_begin(&t), 0);
  ad_binary(&t, AD_OP_MUL, x[0], x[0], &y[0]);      /* x0^2 */
  ad_unary(&t, AD_OP_SIN, x[1], &y[1]);             /* sin x1 */
  ad_binary(&t, AD_OP_ADD, y[1], x[0], &y[1]);      /* + x0 */
  double J[4];
  cr_assert_eq(ad_jacobian(&t, 2, y, 2, x, J), 0);
  cr_expect(close_to(J[0], 3.0, 1e-15) && J[1] == 0);
  cr_expect(close_to(J[2], 1.0, 1e-15) && close_to(J[3], cos(-0.5), 1e-15));
  /* forward mode (more outputs than inputs) agrees */
  ad_idx y3[3] = {y[0], y[1], y[0]};
  double J3[6];
  cr_assert_eq(ad_jacobian(&t, 3, y3, 2, x, J3), 0);
  for (int k = 0; k < 4; k++) cr_expect(close_to(J3[k], J[k], 1e-15));
  ad_region_end(&t);
  /* the outer gradient still works after the region is gone */
  double g[2];
  cr_assert_eq(ad_grad(&t, u, 2, x, g), 0);
  cr_expect(g[0] == -0.5 && g[1] == 1.5);
  ad_tape_free(&t);
}

Test(ad_tape, growth_across_many_blocks) {
  ad_tape t;
  ad_tape_init(&t);
  const size_t n = 300000;
  ad_idx x, s;
  ad_var_new(&t, 0.5, &x);
  s = x;
  for (size_t i = 0; i < n; i++) {
    ad_idx p;
    cr_assert_eq(ad_binary_vc(&t, AD_OP_MUL, x, (double)(i % 7), &p), 0);
    cr_assert_eq(ad_binary(&t, AD_OP_ADD, s, p, &s), 0);
    if (i % 1000 == 0) { /* side data in the arena too */
      double *c = ad_tape_alloc(&t, 40000);
      cr_assert_not_null(c);
      c[4999] = 1;
    }
  }
  cr_expect_gt(t.arena.nblocks, 100);
  double g, expect = 1;
  for (size_t i = 0; i < n; i++) expect += (double)(i % 7);
  cr_assert_eq(ad_grad(&t, s, 1, &x, &g), 0);
  cr_expect_eq(g, expect);
  /* rewinding keeps the storage: a second identical recording allocates no block */
  size_t blocks = t.arena.nblocks;
  ad_idx cap = t.capvar;
  ad_tape_reset(&t);
  ad_var_new(&t, 0.5, &x);
  for (size_t i = 0; i < 300; i++) cr_assert_not_null(ad_tape_alloc(&t, 40000));
  cr_expect_eq(t.arena.nblocks, blocks);
  cr_expect_eq(t.capvar, cap);
  ad_tape_free(&t);
}

/* f(x) = sum_i exp(x_i) * x_{i+1} / (1 + x_i^2) + lse(x) + log1p_exp(dot(x, x)) */
static ad_idx model(ad_tape *t, ad_idx x, size_t n) {
  ad_idx acc, a, b, c;
  ad_var_new(t, 0, &acc);
  for (size_t i = 0; i + 1 < n; i++) {
    ad_unary(t, AD_OP_EXP, x + (ad_idx)i, &a);
    ad_binary(t, AD_OP_MUL, a, x + (ad_idx)i + 1, &a);
    ad_unary(t, AD_OP_SQUARE, x + (ad_idx)i, &b);
    ad_binary_cv(t, AD_OP_ADD, 1, b, &b);
    ad_binary(t, AD_OP_DIV, a, b, &c);
    ad_binary(t, AD_OP_ADD, acc, c, &acc);
  }
  double v;
  ad_log_sum_exp(t, ad_arg_var(x, n), &v, &a);
  ad_binary(t, AD_OP_ADD, acc, a, &acc);
  ad_dot(t, ad_arg_var(x, n), ad_arg_var(x, n), &v, &a);
  ad_unary(t, AD_OP_LOG1P_EXP, a, &a);
  ad_binary(t, AD_OP_ADD, acc, a, &acc);
  ad_idx e;
  size_t m;
  ad_vec_binary(t, AD_OP_POW, ad_arg_var(x, n), ad_arg_scalar(2.0), &e, &m);
  ad_sum(t, ad_arg_var(e, n), &v, &a);
  ad_binary(t, AD_OP_SUB, acc, a, &acc);
  return acc;
}

static void grad_at(const double *x0, size_t n, double *g) {
  ad_tape t;
  ad_tape_init(&t);
  ad_idx x;
  ad_vars_new(&t, n, x0, &x);
  ad_idx y = model(&t, x, n);
  ad_idx in[8];
  for (size_t i = 0; i < n; i++) in[i] = x + (ad_idx)i;
  ad_grad(&t, y, n, in, g);
  ad_tape_free(&t);
}

Test(ad_tape, hessian_and_hvp_match_fd_of_gradient) {
  const size_t n = 5;
  double x0[5] = {0.3, -0.4, 0.8, 0.1, -0.2};
  ad_tape t;
  ad_tape_init(&t);
  ad_idx x, in[5];
  ad_vars_new(&t, n, x0, &x);
  for (size_t i = 0; i < n; i++) in[i] = x + (ad_idx)i;
  ad_idx y = model(&t, x, n);
  double g[5], H[25];
  cr_assert_eq(ad_hessian(&t, y, n, in, g, H), 0);
  for (size_t j = 0; j < n; j++) {
    double xp[5], xm[5], gp[5], gm[5], h = 1e-5;
    for (size_t i = 0; i < n; i++) xp[i] = xm[i] = x0[i];
    xp[j] += h;
    xm[j] -= h;
    grad_at(xp, n, gp);
    grad_at(xm, n, gm);
    for (size_t i = 0; i < n; i++) {
      cr_expect(close_to(H[i * n + j], (gp[i] - gm[i]) / (2 * h), 1e-7), "H[%zu][%zu]", i, j);
      cr_expect(close_to(H[i * n + j], H[j * n + i], 1e-13));
    }
  }
  /* hvp and jvp of the gradient direction */
  double v[5] = {1, -2, 0.5, 3, -1}, hv[5], jv;
  cr_assert_eq(ad_hvp(&t, y, n, in, 1, v, NULL, hv), 0);
  for (size_t i = 0; i < n; i++) {
    double s = 0;
    for (size_t j = 0; j < n; j++) s += H[i * n + j] * v[j];
    cr_expect(close_to(hv[i], s, 1e-12));
  }
  cr_assert_eq(ad_jvp(&t, 1, &y, n, in, v, &jv), 0);
  double s = 0;
  for (size_t j = 0; j < n; j++) s += g[j] * v[j];
  cr_expect(close_to(jv, s, 1e-13));
  ad_tape_free(&t);
}

Test(ad_tape, matvec_pack_and_vjp) {
  ad_tape t;
  ad_tape_init(&t);
  double A[6] = {1, 2, 3, 4, 5, 6}; /* 2x3 column-major: [[1,3,5],[2,4,6]] */
  ad_idx x, y, p;
  ad_vars_new(&t, 3, (double[]){1, -1, 2}, &x);
  cr_assert_eq(ad_matvec(&t, 2, 3, A, ad_arg_var(x, 3), &y), 0);
  cr_expect(t.val[y] == 8 && t.val[y + 1] == 10);
  ad_idx pv[3] = {x + 2, AD_NOVAR, x};
  cr_assert_eq(ad_pack(&t, 3, pv, (double[]){0, 7, 0}, &p), 0);
  cr_expect(t.val[p] == 2 && t.val[p + 1] == 7 && t.val[p + 2] == 1);
  ad_idx ys[2] = {y, y + 1}, in[3] = {x, x + 1, x + 2};
  double u[2] = {1, 10}, g[3];
  cr_assert_eq(ad_vjp(&t, 2, ys, u, 3, in, g), 0);
  cr_expect(g[0] == 21 && g[1] == 43 && g[2] == 65);
  cr_expect_eq(ad_matvec(&t, 2, 2, A, ad_arg_var(x, 3), &y), AD_ESIZE);
  ad_tape_free(&t);
}

Test(ad_tape, precomputed_node) {
  ad_tape t;
  ad_tape_init(&t);
  ad_idx x, y, z;
  ad_vars_new(&t, 2, (double[]){1, 2}, &x);
  ad_idx in[2] = {x, x + 1};
  cr_assert_eq(ad_precomputed(&t, 42, 2, in, (double[]){3, -4}, &y), 0);
  ad_binary_vc(&t, AD_OP_MUL, y, 2, &z);
  double g[2], H[4];
  cr_assert_eq(ad_grad(&t, z, 2, in, g), 0);
  cr_expect(t.val[z] == 84 && g[0] == 6 && g[1] == -8);
  cr_expect_eq(ad_hessian(&t, z, 2, in, g, H), AD_ENOSECOND);
  ad_idx bad = 99;
  cr_expect_eq(ad_precomputed(&t, 1, 1, &bad, g, &y), AD_ESTALE);
  cr_expect_eq(ad_grad(&t, 1000, 2, in, g), AD_ESTALE);
  ad_tape_free(&t);
}

/* A var-constant op keeps its constant in the slot's pb (operand b: the trash
** slot): an infinite constant must not leak into forward passes or Hessians. */
Test(ad_tape, infinite_constant_operand) {
  ad_tape t;
  ad_tape_init(&t);
  ad_idx x, a, b, y;
  ad_var_new(&t, 2, &x);
  ad_binary_vc(&t, AD_OP_ADD, x, INFINITY, &a);   /* a = x + inf */
  ad_binary_cv(&t, AD_OP_FMIN, INFINITY, x, &b);  /* b = min(inf, x) = x */
  ad_binary(&t, AD_OP_MUL, b, b, &y);             /* y = x^2 */
  double g, H, jv, v = 1;
  cr_assert_eq(ad_grad(&t, y, 1, &x, &g), 0);
  cr_expect_eq(g, 4);
  cr_assert_eq(ad_jvp(&t, 1, &y, 1, &x, &v, &jv), 0);
  cr_expect_eq(jv, 4);
  cr_assert_eq(ad_hessian(&t, y, 1, &x, &g, &H), 0);
  cr_expect(g == 4 && H == 2);
  cr_assert_eq(ad_grad(&t, a, 1, &x, &g), 0);
  cr_expect_eq(g, 1);
  ad_tape_free(&t);
}

/* Many leaves at once are one node the passes skip; scalar vars around it and
** vector nodes between scalar runs are swept in order. */
Test(ad_tape, leaf_nodes_and_interleaved_runs) {
  ad_tape t;
  ad_tape_init(&t);
  enum { N = 40 };
  double x0[N];
  for (int i = 0; i < N; i++) x0[i] = 0.1 * (i + 1);
  ad_idx x, s, q, in[N];
  cr_assert_eq(ad_region_begin(&t), 0);
  ad_vars_new(&t, N, x0, &x);
  for (int i = 0; i < N; i++) in[i] = x + (ad_idx)i;
  /* y = sum_i x_i^2 * x_{i+1} + lse(x * 3)  (scalar runs and vector nodes) */
  ad_var_new(&t, 0, &s);
  for (int i = 0; i + 1 < N; i++) {
    ad_binary(&t, AD_OP_MUL, x + (ad_idx)i, x + (ad_idx)i, &q);
    ad_binary(&t, AD_OP_MUL, q, x + (ad_idx)i + 1, &q);
    ad_binary(&t, AD_OP_ADD, s, q, &s);
    if (i % 10 == 0) { /* a vector node in the middle of the scalar run */
      ad_idx w;
      size_t n;
      double v;
      cr_assert_eq(ad_vec_binary(&t, AD_OP_MUL, ad_arg_var(x, N), ad_arg_scalar(3), &w, &n), 0);
      cr_assert_eq(ad_log_sum_exp(&t, ad_arg_var(w, N), &v, &w), 0);
      if (i == 0) ad_binary(&t, AD_OP_ADD, s, w, &s);
    }
  }
  double g[N], H[N * N], m = -INFINITY, z = 0;
  for (int i = 0; i < N; i++) m = fmax(m, 3 * x0[i]);
  for (int i = 0; i < N; i++) z += exp(3 * x0[i] - m);
  cr_assert_eq(ad_hessian(&t, s, N, in, g, H), 0);
  for (int i = 0; i < N; i++) {
    double sm = exp(3 * x0[i] - m) / z;
    double e = 3 * sm + (i + 1 < N ? 2 * x0[i] * x0[i + 1] : 0) + (i > 0 ? x0[i - 1] * x0[i - 1] : 0);
    cr_expect(close_to(g[i], e, 1e-12), "g[%d] = %g, expected %g", i, g[i], e);
    double hii = 9 * sm * (1 - sm) + (i + 1 < N ? 2 * x0[i + 1] : 0);
    cr_expect(close_to(H[i * N + i], hii, 1e-12), "H[%d][%d]", i, i);
  }
  double g2[N];
  cr_assert_eq(ad_grad(&t, s, N, in, g2), 0);
  for (int i = 0; i < N; i++) cr_expect(close_to(g2[i], g[i], 1e-14));
  cr_assert_eq(ad_region_end(&t), 0);
  ad_tape_free(&t);
}

/* A small region over a large older tape clears only what it reads. */
Test(ad_tape, small_region_over_large_tape) {
  ad_tape t;
  ad_tape_init(&t);
  ad_idx x, y, s;
  ad_var_new(&t, 1.5, &x);
  s = x;
  for (int i = 0; i < 10000; i++) ad_binary_vc(&t, AD_OP_MUL, s, 1.0, &s);
  cr_assert_eq(ad_region_begin(&t), 0);
  for (int rep = 0; rep < 2; rep++) { /* twice: adjoints left dirty are cleared */
    ad_idx u;
    ad_var_new(&t, 2, &u);
    ad_binary(&t, AD_OP_MUL, s, u, &y);
    ad_binary(&t, AD_OP_MUL, y, x, &y);
    ad_idx in[3] = {x, u, s};
    double g[3];
    cr_assert_eq(ad_grad(&t, y, 3, in, g), 0);
    cr_expect(g[0] == 2 * 1.5 && g[1] == 1.5 * 1.5 && g[2] == 2 * 1.5);
    double jv, v[3] = {1, 0, 0};
    cr_assert_eq(ad_jvp(&t, 1, &y, 3, in, v, &jv), 0);
    cr_expect_eq(jv, 3);
  }
  cr_assert_eq(ad_region_end(&t), 0);
  ad_tape_free(&t);
}
