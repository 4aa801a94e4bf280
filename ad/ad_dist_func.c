/* SPDX-License-Identifier: MIT */
/* Elementwise functions of several arguments that ride on the density
** machinery (broadcasting, one node, exact gradients): log_mix and
** inc_beta. Only their per-element form exists (AD_DF_FUNC). */
#include <math.h>
#include "ad_dist_impl.h"
#include "ad_special.h"


/* log_mix(theta, l1, l2) = log(theta e^l1 + (1 - theta) e^l2) */
AD_ELEM void el_log_mix(const double *x, double *f, double *g, double *h) {
  double th = x[0], A = log(th) + x[1], B = log1p(-th) + x[2];
  double m = A > B ? A : B;
  double lse = m == -INFINITY ? m : m + log(exp(A - m) + exp(B - m));
  double wa = exp(A - lse), wb = exp(B - lse);
  *f = lse;
  g[0] = wa / th - wb / (1 - th);
  g[1] = wa;
  g[2] = wb;
  if (!h) return;
  H(0, 0) = -g[0] * g[0];
  H(1, 0) = wa / th - g[0] * wa;
  H(2, 0) = -wb / (1 - th) - g[0] * wb;
  H(1, 1) = wa * wb; H(2, 1) = -wa * wb; H(2, 2) = wa * wb;
  ad_dist_sym(h, 3);
}
AD_DIST_DEFINE(LOG_MIX, el_log_mix, 3, 0, 0, AD_CNT_NONE, AD_DF_FUNC)

/* inc_beta(a, b, x) = I_x(a, b), the regularized incomplete beta function */
AD_ELEM void el_inc_beta(const double *x, double *f, double *g, double *h) {
  double a = x[0], b = x[1], z = x[2];
  (void)h;
  *f = ad_inc_beta(a, b, z, &g[0], &g[1]);
  g[2] = (z <= 0 || z >= 1) ? 0 : exp((a - 1) * log(z) + (b - 1) * log1p(-z) - ad_lbeta(a, b));
}
AD_DIST_DEFINE(INC_BETA, el_inc_beta, 3, 0, AD_A0 | AD_A1 | AD_A2, AD_CNT_NONE, AD_DF_FUNC)
