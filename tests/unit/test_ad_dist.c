/* SPDX-License-Identifier: MIT */
/* Every elementwise function of ad_dist.h (densities, cdfs, log_mix,
** inc_beta), table-driven: the gradient against order-6 finite differences
** of the value and the Hessian against those of the gradient, at two points
** each; the recorded node (summed and per element, scalars broadcast and
** vectors) against the sum of its elements, in value, gradient and Hessian;
** counts that are not counts refused. Values against closed forms:
** tests/lua/ad_dists.lua. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "ad_dist.h"
#include "ad_fd.h"
#include "ad_hess.h"


/* two points in each function's support (counts first, as data) */
static const double PTS[AD_DIST_COUNT_][2][4] = {
  [AD_DIST_NORMAL] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_STD_NORMAL] = {{0.3}, {-2}},
  [AD_DIST_STUDENT_T] = {{0.3, 3.5, -0.2, 1.7}, {4, 1.2, 1, 0.6}},
  [AD_DIST_CAUCHY] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_DOUBLE_EXPONENTIAL] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_LOGISTIC] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_GUMBEL] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_SKEW_NORMAL] = {{0.3, -0.2, 1.7, 2.5}, {-2, 1, 0.4, -1.3}},
  [AD_DIST_LOGNORMAL] = {{0.3, -0.2, 1.7}, {2, 1, 0.4}},
  [AD_DIST_GAMMA] = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}},
  [AD_DIST_INV_GAMMA] = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}},
  [AD_DIST_EXPONENTIAL] = {{0.3, 2.5}, {2, 0.7}},
  [AD_DIST_WEIBULL] = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}},
  [AD_DIST_FRECHET] = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}},
  [AD_DIST_PARETO] = {{2.3, 1.5, 1.7}, {5, 0.7, 0.4}},
  [AD_DIST_CHI_SQUARE] = {{0.3, 2.5}, {4, 7}},
  [AD_DIST_INV_CHI_SQUARE] = {{0.3, 2.5}, {2, 0.7}},
  [AD_DIST_BETA] = {{0.3, 2.5, 1.7}, {0.8, 0.7, 0.4}},
  [AD_DIST_BETA_PROPORTION] = {{0.3, 0.4, 5}, {0.8, 0.7, 2.5}},
  [AD_DIST_UNIFORM] = {{0.3, -0.2, 1.7}, {2, 1, 4.5}},
  [AD_DIST_VON_MISES] = {{0.3, -0.2, 1.7}, {-2, 1, 40}},
  [AD_DIST_POISSON] = {{3, 2.5}, {0, 0.7}},
  [AD_DIST_POISSON_LOG] = {{3, 0.5}, {0, -1.5}},
  [AD_DIST_BINOMIAL] = {{3, 10, 0.35}, {0, 4, 0.8}},
  [AD_DIST_BINOMIAL_LOGIT] = {{3, 10, 0.5}, {0, 4, -1.5}},
  [AD_DIST_BERNOULLI] = {{1, 0.3}, {0, 0.7}},
  [AD_DIST_BERNOULLI_LOGIT] = {{1, 0.5}, {0, -1.5}},
  [AD_DIST_NEG_BINOMIAL] = {{3, 2.5, 0.7}, {0, 0.7, 1.5}},
  [AD_DIST_NEG_BINOMIAL_2] = {{3, 2.5, 1.7}, {0, 0.7, 0.4}},
  [AD_DIST_NEG_BINOMIAL_2_LOG] = {{3, 0.5, 2.5}, {0, -1.5, 0.7}},
  [AD_DIST_BETA_BINOMIAL] = {{3, 10, 2.5, 1.7}, {0, 4, 0.7, 0.4}},
  [AD_DIST_NORMAL_LCDF] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_NORMAL_LCCDF] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_STD_NORMAL_LCDF] = {{0.3}, {-2}},
  [AD_DIST_STD_NORMAL_LCCDF] = {{0.3}, {-2}},
  [AD_DIST_STUDENT_T_LCDF] = {{0.3, 3.5, -0.2, 1.7}, {-2, 1.2, 1, 0.6}},
  [AD_DIST_STUDENT_T_LCCDF] = {{0.3, 3.5, -0.2, 1.7}, {-2, 1.2, 1, 0.6}},
  [AD_DIST_CAUCHY_LCDF] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_CAUCHY_LCCDF] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_DOUBLE_EXPONENTIAL_LCDF] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_DOUBLE_EXPONENTIAL_LCCDF] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_LOGISTIC_LCDF] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_LOGISTIC_LCCDF] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_GUMBEL_LCDF] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_GUMBEL_LCCDF] = {{0.3, -0.2, 1.7}, {-2, 1, 0.4}},
  [AD_DIST_LOGNORMAL_LCDF] = {{0.3, -0.2, 1.7}, {2, 1, 0.4}},
  [AD_DIST_LOGNORMAL_LCCDF] = {{0.3, -0.2, 1.7}, {2, 1, 0.4}},
  [AD_DIST_EXPONENTIAL_LCDF] = {{0.3, 2.5}, {2, 0.7}},
  [AD_DIST_EXPONENTIAL_LCCDF] = {{0.3, 2.5}, {2, 0.7}},
  [AD_DIST_WEIBULL_LCDF] = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}},
  [AD_DIST_WEIBULL_LCCDF] = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}},
  [AD_DIST_FRECHET_LCDF] = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}},
  [AD_DIST_FRECHET_LCCDF] = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}},
  [AD_DIST_PARETO_LCDF] = {{2.3, 1.5, 1.7}, {5, 0.7, 0.4}},
  [AD_DIST_PARETO_LCCDF] = {{2.3, 1.5, 1.7}, {5, 0.7, 0.4}},
  [AD_DIST_UNIFORM_LCDF] = {{0.3, -0.2, 1.7}, {2, 1, 4.5}},
  [AD_DIST_UNIFORM_LCCDF] = {{0.3, -0.2, 1.7}, {2, 1, 4.5}},
  /* the incomplete gamma's series (b y < a + 1) and continued fraction */
  [AD_DIST_GAMMA_LCDF] = {{0.3, 2.5, 1.7}, {9, 0.7, 0.4}},
  [AD_DIST_GAMMA_LCCDF] = {{0.3, 2.5, 1.7}, {9, 0.7, 0.4}},
  [AD_DIST_INV_GAMMA_LCDF] = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}},
  [AD_DIST_INV_GAMMA_LCCDF] = {{0.3, 2.5, 1.7}, {2, 0.7, 0.4}},
  [AD_DIST_CHI_SQUARE_LCDF] = {{0.3, 2.5}, {9, 3}},
  [AD_DIST_CHI_SQUARE_LCCDF] = {{0.3, 2.5}, {9, 3}},
  [AD_DIST_INV_CHI_SQUARE_LCDF] = {{0.3, 2.5}, {0.05, 2.5}},
  [AD_DIST_INV_CHI_SQUARE_LCCDF] = {{0.3, 2.5}, {0.05, 2.5}},
  [AD_DIST_BETA_LCDF] = {{0.3, 2.5, 1.7}, {0.8, 0.7, 0.4}},
  [AD_DIST_BETA_LCCDF] = {{0.3, 2.5, 1.7}, {0.8, 0.7, 0.4}},
  [AD_DIST_BETA_PROPORTION_LCDF] = {{0.3, 0.4, 5}, {0.8, 0.7, 2.5}},
  [AD_DIST_BETA_PROPORTION_LCCDF] = {{0.3, 0.4, 5}, {0.8, 0.7, 2.5}},
  [AD_DIST_POISSON_LCDF] = {{3, 2.5}, {2, 9}},
  [AD_DIST_POISSON_LCCDF] = {{3, 2.5}, {2, 9}},
  [AD_DIST_BINOMIAL_LCDF] = {{3, 10, 0.35}, {1, 4, 0.8}},
  [AD_DIST_BINOMIAL_LCCDF] = {{3, 10, 0.35}, {1, 4, 0.8}},
  [AD_DIST_BERNOULLI_LCDF] = {{0, 0.3}, {0, 0.8}},
  [AD_DIST_BERNOULLI_LCCDF] = {{0, 0.3}, {0, 0.8}},
  [AD_DIST_NEG_BINOMIAL_LCDF] = {{3, 2.5, 0.7}, {0, 0.7, 1.5}},
  [AD_DIST_NEG_BINOMIAL_LCCDF] = {{3, 2.5, 0.7}, {0, 0.7, 1.5}},
  [AD_DIST_NEG_BINOMIAL_2_LCDF] = {{3, 2.5, 1.7}, {0, 0.7, 0.4}},
  [AD_DIST_NEG_BINOMIAL_2_LCCDF] = {{3, 2.5, 1.7}, {0, 0.7, 0.4}},
  [AD_DIST_BETA_BINOMIAL_LCDF] = {{3, 10, 2.5, 1.7}, {1, 4, 0.7, 0.4}},
  [AD_DIST_BETA_BINOMIAL_LCCDF] = {{3, 10, 2.5, 1.7}, {1, 4, 0.7, 0.4}},
  [AD_DIST_LOG_MIX] = {{0.3, -1.2, -0.4}, {0.8, 2, -3}},
  [AD_DIST_INC_BETA] = {{2.5, 1.7, 0.3}, {0.7, 0.4, 0.8}},
};

typedef struct { int dist, k, l; double x[4]; } ctx;
static double val_at(double v, const void *c) {
  const ctx *d = c;
  double x[4], g[4], f;
  memcpy(x, d->x, sizeof x);
  x[d->k] = v;
  ad_dist_elem(d->dist, x, &f, g, NULL);
  return f;
}
static double grad_at(double v, const void *c) {
  const ctx *d = c;
  double x[4], g[4], f;
  memcpy(x, d->x, sizeof x);
  x[d->l] = v;
  ad_dist_elem(d->dist, x, &f, g, NULL);
  return g[d->k];
}

Test(ad_dist, every_function_has_points) {
  for (int d = 0; d < AD_DIST_COUNT_; d++) {
    int any = 0;
    for (int k = 0; k < ad_dist_nargs(d); k++) any |= PTS[d][0][k] != 0;
    cr_expect(any, "%s has no test points", ad_dist_name(d));
  }
}

Test(ad_dist, gradients_and_hessians_match_fd) {
  for (int d = 0; d < AD_DIST_COUNT_; d++) {
    int na = ad_dist_nargs(d);
    for (int p = 0; p < 2; p++) {
      double f, g[4], h[16];
      ad_dist_elem(d, PTS[d][p], &f, g, h);
      cr_expect(isfinite(f), "%s point %d: value %g", ad_dist_name(d), p, f);
      for (int k = 0; k < na; k++) {
        if (ad_dist_data_only(d, k)) continue;
        ctx c = {d, k, 0, {0}};
        memcpy(c.x, PTS[d][p], sizeof c.x);
        double fd = fd6(val_at, c.x[k], &c);
        cr_expect(close_to(g[k], fd, 1e-7), "%s point %d: g[%d] %.12g, fd %.12g", ad_dist_name(d),
                  p, k, g[k], fd);
        if (!ad_dist_has_second(d, k)) continue;
        for (int l = 0; l < na; l++) {
          if (ad_dist_data_only(d, l) || !ad_dist_has_second(d, l)) continue;
          ctx e = {d, k, l, {0}};
          memcpy(e.x, PTS[d][p], sizeof e.x);
          double fh = fd6(grad_at, e.x[l], &e);
          cr_expect(close_to(h[k * 4 + l], fh, 1e-6), "%s point %d: h[%d][%d] %.12g, fd %.12g",
                    ad_dist_name(d), p, k, l, h[k * 4 + l], fh);
        }
      }
    }
  }
}

/* Five elements per argument around point 0 (data repeated as is). */
static void columns(int d, double col[4][5]) {
  for (int k = 0; k < ad_dist_nargs(d); k++)
    for (int i = 0; i < 5; i++)
      col[k][i] = ad_dist_data_only(d, k) ? PTS[d][0][k] : PTS[d][0][k] * (1 + 0.03 * i);
}

/* The node (summed, or per element and weighted) against the elements. */
Test(ad_dist, nodes_match_elements) {
  for (int d = 0; d < AD_DIST_COUNT_; d++) {
    int na = ad_dist_nargs(d), second = 1, func = ad_dist_is_function(d);
    double col[4][5];
    columns(d, col);
    for (int k = 0; k < na; k++) second &= ad_dist_data_only(d, k) || ad_dist_has_second(d, k);
    for (int pattern = 0; pattern < 2; pattern++) {
      ad_tape t;
      ad_tape_init(&t);
      ad_arg args[4];
      ad_idx vin[32];
      size_t nin = 0, pos[4][5];
      for (int k = 0; k < na; k++) {
        size_t len = (pattern == 0 && k > 0) ? 1 : 5;
        if (ad_dist_data_only(d, k)) {
          args[k] = ad_arg_const(col[k], len);
          continue;
        }
        ad_idx v;
        cr_assert_eq(ad_vars_new(&t, len, col[k], &v), 0);
        args[k] = ad_arg_var(v, len);
        for (size_t i = 0; i < 5; i++) pos[k][i] = nin + (len > 1 ? i : 0);
        for (size_t i = 0; i < len; i++) vin[nin++] = v + (ad_idx)i;
      }
      double value = 0, cv[5];
      ad_idx out;
      size_t n;
      if (!func) {
        cr_assert_eq(ad_dist(&t, d, args, &value, &out, NULL), 0, "%s", ad_dist_name(d));
      } else { /* per element, summed by a dot with weights 1 */
        ad_idx each;
        cr_assert_eq(ad_dist_each(&t, d, args, cv, &each, &n, NULL), 0);
        cr_assert_eq(n, 5);
        double ones[5] = {1, 1, 1, 1, 1};
        cr_assert_eq(ad_dot(&t, ad_arg_var(each, 5), ad_arg_const(ones, 5), &value, &out), 0);
      }
      double g[32], H[32 * 32];
      int rc = second ? ad_hessian(&t, out, nin, vin, g, H) : ad_grad(&t, out, nin, vin, g);
      cr_assert_eq(rc, 0, "%s: %d", ad_dist_name(d), rc);
      double ref = 0, rg[32] = {0}, rH[32 * 32] = {0};
      for (size_t i = 0; i < 5; i++) {
        double x[4], eg[4], eh[16], f;
        for (int k = 0; k < na; k++) x[k] = col[k][args[k].n > 1 ? i : 0];
        ad_dist_elem(d, x, &f, eg, second ? eh : NULL);
        ref += f;
        for (int k = 0; k < na; k++) {
          if (ad_dist_data_only(d, k)) continue;
          rg[pos[k][i]] += eg[k];
          if (!second) continue;
          for (int l = 0; l < na; l++)
            if (!ad_dist_data_only(d, l)) rH[pos[k][i] * nin + pos[l][i]] += eh[k * 4 + l];
        }
      }
      cr_expect(close_to(value, ref, 1e-12), "%s value %g vs %g", ad_dist_name(d), value, ref);
      for (size_t j = 0; j < nin; j++) {
        cr_expect(close_to(g[j], rg[j], 1e-12), "%s g[%zu] %g vs %g", ad_dist_name(d), j, g[j], rg[j]);
        for (size_t l = 0; second && l < nin; l++)
          cr_expect(close_to(H[j * nin + l], rH[j * nin + l], 1e-10), "%s H[%zu][%zu]",
                    ad_dist_name(d), j, l);
      }
      ad_tape_free(&t);
    }
  }
}

Test(ad_dist, counts_are_checked) {
  ad_tape t;
  ad_tape_init(&t);
  ad_idx v, y;
  double val;
  size_t bad = 9, elem = 9;
  ad_var_new(&t, 0.5, &v);
  double n1[2] = {1, 2.5}, n2[2] = {0, 2}, N[2] = {3, 1};
  ad_arg a1[2] = {ad_arg_const(n1, 2), ad_arg_var(v, 1)};
  cr_expect_eq(ad_dist(&t, AD_DIST_POISSON, a1, &val, &y, &bad), AD_ECOUNT);
  cr_expect_eq(ad_dist_check_counts(&t, AD_DIST_POISSON, a1, 2, &bad, &elem), AD_ECOUNT);
  cr_expect(bad == 0 && elem == 1);
  ad_arg a2[2] = {ad_arg_const(n2, 2), ad_arg_var(v, 1)};
  cr_expect_eq(ad_dist(&t, AD_DIST_BERNOULLI, a2, &val, &y, &bad), AD_ECOUNT);
  ad_arg a3[3] = {ad_arg_const(n2, 2), ad_arg_const(N, 2), ad_arg_var(v, 1)};
  cr_expect_eq(ad_dist(&t, AD_DIST_BINOMIAL, a3, &val, &y, &bad), AD_ECOUNT);
  cr_expect_eq(ad_dist_check_counts(&t, AD_DIST_BINOMIAL, a3, 2, &bad, &elem), AD_ECOUNT);
  cr_expect(bad == 0 && elem == 1);
  ad_arg a4[3] = {ad_arg_var(v, 1), ad_arg_scalar(3), ad_arg_var(v, 1)};
  cr_expect_eq(ad_dist(&t, AD_DIST_BINOMIAL, a4, &val, &y, &bad), AD_EARG);
  cr_expect_eq(bad, 0);
  /* functions have no summed form */
  ad_arg a5[3] = {ad_arg_var(v, 1), ad_arg_scalar(1), ad_arg_scalar(2)};
  cr_expect_eq(ad_dist(&t, AD_DIST_INC_BETA, a5, &val, &y, &bad), AD_EARG);
  ad_tape_free(&t);
}
