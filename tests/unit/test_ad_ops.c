/* SPDX-License-Identifier: MIT */
/* Every primitive's value and partials (first and second) against finite
** differences at several points, including domain edges. */
#include <criterion/criterion.h>
#include <math.h>
#include "ad_dist.h"
#include "ad_fd.h"
#include "ad_hess.h"
#include "ad_scalar.h"
#include "ad_special.h"


static double unary_val(double x, const void *op) {
  double d;
  return ad_unary_eval(*(const int *)op, x, &d);
}
static double unary_d1(double x, const void *op) {
  double d;
  ad_unary_eval(*(const int *)op, x, &d);
  return d;
}

Test(ad_ops, unary_partials_match_fd_and_tape) {
  static const double pts[] = {-2.5, -0.7, 0.3, 1.0, 2.2, 7.5};
  for (int op = AD_OP_NEG; op < AD_OP_UNARY_END_; op++) {
    for (size_t k = 0; k < sizeof pts / sizeof pts[0]; k++) {
      double x = pts[k];
      if ((op == AD_OP_LOG || op == AD_OP_SQRT || op == AD_OP_LGAMMA || op == AD_OP_DIGAMMA) && x <= 0)
        continue;
      if (op == AD_OP_LOG1P && x <= -1) continue;
      if (op == AD_OP_LOGIT && (x <= 0 || x >= 1)) continue;
      if (op == AD_OP_LOG1M && x >= 1) continue;
      if (op == AD_OP_LOG1M_EXP && x >= 0) continue;
      if (op == AD_OP_TAN && fabs(x) > 1.3) continue;
      if ((op == AD_OP_INV_PHI) && (x <= 0 || x >= 1)) continue;
      if ((op == AD_OP_ATANH || op == AD_OP_ASIN || op == AD_OP_ACOS) && fabs(x) >= 1) continue;
      if (op == AD_OP_ACOSH && x <= 1) continue;
      if ((op == AD_OP_INV_SQRT || op == AD_OP_LOG2 || op == AD_OP_LOG10 || op == AD_OP_TRIGAMMA ||
           op == AD_OP_TGAMMA) && x <= 0)
        continue;
      if ((op == AD_OP_TGAMMA || op == AD_OP_EXP2 || op == AD_OP_SINH || op == AD_OP_COSH) && x > 5) continue;
      double d1 = unary_d1(x, &op), y = unary_val(x, &op);
      cr_expect(close_to(d1, fd6(unary_val, x, &op), 1e-7), "%s'(%g): %g vs fd %g",
                ad_op_name(op), x, d1, fd6(unary_val, x, &op));
      double d2 = ad_unary_d2(op, x, y);
      cr_expect(close_to(d2, fd6(unary_d1, x, &op), 1e-6), "%s''(%g): %g vs fd %g",
                ad_op_name(op), x, d2, fd6(unary_d1, x, &op));
      /* the tape gives the same gradient and Hessian */
      ad_tape t;
      ad_tape_init(&t);
      ad_idx xv, yv;
      double g, H;
      cr_assert_eq(ad_var_new(&t, x, &xv), 0);
      cr_assert_eq(ad_unary(&t, op, xv, &yv), 0);
      cr_expect_eq(t.val[yv], y);
      cr_assert_eq(ad_hessian(&t, yv, 1, &xv, &g, &H), 0);
      cr_expect_eq(g, d1);
      cr_expect(close_to(H, d2, 1e-12));
      ad_tape_free(&t);
    }
  }
}

Test(ad_ops, domain_edges) {
  double d;
  cr_expect(isnan(ad_unary_eval(AD_OP_LOG, -1, &d)));
  cr_expect(isinf(ad_unary_eval(AD_OP_LOG, 0, &d)) && isinf(d));
  cr_expect(isnan(ad_unary_eval(AD_OP_SQRT, -1, &d)));
  cr_expect_eq(ad_unary_eval(AD_OP_ABS, 0, &d), 0);
  cr_expect_eq(d, 0);
  /* stable at the extremes */
  cr_expect_eq(ad_unary_eval(AD_OP_LOG1P_EXP, 800, &d), 800);
  cr_expect_eq(d, 1);
  cr_expect_eq(ad_unary_eval(AD_OP_LOG_INV_LOGIT, -800, &d), -800);
  cr_expect_eq(d, 1);
  cr_expect_eq(ad_unary_eval(AD_OP_INV_LOGIT, -800, &d), 0);
  cr_expect(isnan(ad_digamma(0)) && isnan(ad_digamma(-2)));
  cr_expect(close_to(ad_digamma(1), -0.5772156649015329, 1e-13));
  cr_expect(close_to(ad_trigamma(1), 1.6449340668482264, 1e-13));
  cr_expect(close_to(ad_tetragamma(1), -2.4041138063191885, 1e-12));
  cr_expect(close_to(ad_digamma(-0.5), 0.03648997397857652, 1e-12));
  double pa, pb;
  cr_expect_eq(ad_binary_eval(AD_OP_POW, 0, 2, &pa, &pb), 0);
  cr_expect_eq(pa, 0);
  cr_expect_eq(pb, 0);
  cr_expect_eq(ad_binary_eval(AD_OP_LOG_SUM_EXP2, -INFINITY, -INFINITY, &pa, &pb), -INFINITY);
  cr_expect_eq(ad_binary_eval(AD_OP_LOG_SUM_EXP2, 1000, 1000, &pa, &pb), 1000 + log(2));
  cr_expect(close_to(pa, 0.5, 1e-15));
}

typedef struct { int op, which; double other; } bctx;
static double bin_val(double x, const void *c) {
  const bctx *b = c;
  double pa, pb;
  return b->which == 0 ? ad_binary_eval(b->op, x, b->other, &pa, &pb)
                       : ad_binary_eval(b->op, b->other, x, &pa, &pb);
}

Test(ad_ops, binary_partials_and_second_partials) {
  static const double pts[][2] = {{0.7, 1.9}, {2.5, -1.5}, {1.3, 0.4}, {-1.2, 3.0}};
  for (int op = AD_OP_ADD; op < AD_OP_BINARY_END_; op++) {
    for (size_t k = 0; k < 4; k++) {
      double a = pts[k][0], b = pts[k][1], pa, pb, h[3];
      if (op == AD_OP_POW && a < 0) a = -a;
      if ((op == AD_OP_LOG_DIFF_EXP || op == AD_OP_LOG_INV_LOGIT_DIFF) && a < b)
        a = pts[k][1], b = pts[k][0]; /* needs a > b */
      if (op == AD_OP_LBETA || op == AD_OP_LMULTIPLY) a = fabs(a), b = fabs(b); /* positive */
      if (op == AD_OP_LCHOOSE) a = fabs(a) + fabs(b) + 0.5, b = fabs(b); /* n > k > 0 */
      double y = ad_binary_eval(op, a, b, &pa, &pb);
      bctx ca = {op, 0, b}, cb = {op, 1, a};
      cr_expect(close_to(pa, fd6(bin_val, a, &ca), 1e-7), "%s da", ad_op_name(op));
      cr_expect(close_to(pb, fd6(bin_val, b, &cb), 1e-7), "%s db", ad_op_name(op));
      /* second partials from the tape (var, var) against fd of the first */
      ad_binary_d2(op, a, b, y, h);
      ad_tape t;
      ad_tape_init(&t);
      ad_idx in[2], yv;
      double g[2], H[4];
      ad_vars_new(&t, 2, (double[]){a, b}, in);
      in[1] = in[0] + 1;
      cr_assert_eq(ad_binary(&t, op, in[0], in[1], &yv), 0);
      cr_assert_eq(ad_hessian(&t, yv, 2, in, g, H), 0);
      cr_expect(close_to(H[0], h[0], 1e-12) && close_to(H[1], h[1], 1e-12) &&
                close_to(H[3], h[2], 1e-12) && H[1] == H[2], "%s hessian", ad_op_name(op));
      double eps = 1e-6, pa2, pb2, pa1, pb1;
      ad_binary_eval(op, a + eps, b, &pa2, &pb2);
      ad_binary_eval(op, a - eps, b, &pa1, &pb1);
      cr_expect(close_to(h[0], (pa2 - pa1) / (2 * eps), 1e-5), "%s haa", ad_op_name(op));
      cr_expect(close_to(h[1], (pb2 - pb1) / (2 * eps), 1e-5), "%s hab", ad_op_name(op));
      /* mixed var/constant nodes give the same partials */
      ad_idx y1, y2;
      cr_assert_eq(ad_binary_vc(&t, op, in[0], b, &y1), 0);
      cr_assert_eq(ad_binary_cv(&t, op, a, in[1], &y2), 0);
      cr_assert_eq(ad_hessian(&t, y1, 1, &in[0], g, H), 0);
      cr_expect_eq(g[0], pa);
      cr_expect(close_to(H[0], h[0], 1e-12));
      cr_assert_eq(ad_hessian(&t, y2, 1, &in[1], g, H), 0);
      cr_expect_eq(g[0], pb);
      cr_expect(close_to(H[0], h[2], 1e-12));
      ad_tape_free(&t);
    }
  }
}

/* The densities element by element and as nodes: tests/unit/test_ad_dist.c. */

Test(ad_ops, data_only_and_sizes) {
  ad_tape t;
  ad_tape_init(&t);
  ad_idx v, y;
  double val;
  size_t bad = 9;
  ad_var_new(&t, 1, &v);
  ad_arg args[2] = {ad_arg_var(v, 1), ad_arg_scalar(0.5)};
  cr_expect_eq(ad_dist(&t, AD_DIST_POISSON_LOG, args, &val, &y, &bad), AD_EARG);
  cr_expect_eq(bad, 0);
  double a3[3] = {1, 2, 3}, a4[4] = {1, 2, 3, 4};
  ad_arg sz[3] = {ad_arg_const(a3, 3), ad_arg_const(a4, 4), ad_arg_var(v, 1)};
  cr_expect_eq(ad_dist(&t, AD_DIST_NORMAL, sz, &val, &y, &bad), AD_ESIZE);
  cr_expect_eq(bad, 1);
  ad_arg cst[3] = {ad_arg_const(a3, 3), ad_arg_scalar(0), ad_arg_scalar(1)};
  cr_expect_eq(ad_dist(&t, AD_DIST_NORMAL, cst, &val, &y, NULL), 0);
  cr_expect_eq(y, AD_NOVAR);
  cr_expect(close_to(val, -3 * 0.91893853320467274 - 7, 1e-14));
  ad_tape_free(&t);
}
