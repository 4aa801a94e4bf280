/* SPDX-License-Identifier: MIT */
/* Log densities on the positive reals: lognormal, gamma, inv_gamma,
** exponential, weibull, frechet, pareto, chi_square, inv_chi_square. Value
** and gradient by hand, Hessians by hand or on jets (ad_jet.h). */
#include <math.h>
#include <string.h>
#include "ad_dist_impl.h"
#include "ad_jet.h"


AD_ELEM void el_lognormal(const double *x, double *f, double *g, double *h) {
  double y = x[0], s = x[2], inv = 1 / s, ly = log(y), z = (ly - x[1]) * inv;
  *f = -0.5 * z * z - log(s) - ly - AD_HALF_LOG_2PI;
  g[0] = -(z * inv + 1) / y; g[1] = z * inv; g[2] = (z * z - 1) * inv;
  if (!h) return;
  double i2 = inv * inv;
  H(0, 0) = (z * inv + 1 - i2) / (y * y);
  H(1, 0) = i2 / y; H(1, 1) = -i2;
  H(2, 0) = 2 * z * i2 / y; H(2, 1) = -2 * z * i2; H(2, 2) = (1 - 3 * z * z) * i2;
  ad_dist_sym(h, 3);
}
AD_DIST_DEFINE(LOGNORMAL, el_lognormal, 3, 0, 0, AD_CNT_NONE, 0)

AD_ELEM void el_gamma(const double *x, double *f, double *g, double *h) {
  double y = x[0], a = x[1], b = x[2], ly = log(y);
  *f = a * log(b) - lgamma(a) + (a - 1) * ly - b * y;
  g[0] = (a - 1) / y - b; g[1] = log(b) - ad_digamma(a) + ly; g[2] = a / b - y;
  if (!h) return;
  H(0, 0) = -(a - 1) / (y * y);
  H(1, 0) = 1 / y; H(1, 1) = -ad_trigamma(a);
  H(2, 0) = -1; H(2, 1) = 1 / b; H(2, 2) = -a / (b * b);
  ad_dist_sym(h, 3);
}
AD_DIST_DEFINE(GAMMA, el_gamma, 3, 0, 0, AD_CNT_NONE, 0)

/* a log b - lgamma(a) - (a + 1) log y - b / y */
AD_ELEM void el_inv_gamma(const double *x, double *f, double *g, double *h) {
  double y = x[0], a = x[1], b = x[2], ly = log(y), lb = log(b);
  *f = a * lb - lgamma(a) - (a + 1) * ly - b / y;
  g[0] = -(a + 1) / y + b / (y * y); g[1] = lb - ad_digamma(a) - ly; g[2] = a / b - 1 / y;
  if (!h) return;
  ad_jet Y = jet_var(y, 0), A = jet_var(a, 1), B = jet_var(b, 2);
  ad_jet r = jet_sub(jet_mul(A, jet_log(B)), jet_lgamma(A));
  r = jet_sub(r, jet_add(jet_mul(jet_addc(A, 1), jet_log(Y)), jet_div(B, Y)));
  jet_out(r, f, NULL, h);
}
AD_DIST_DEFINE(INV_GAMMA, el_inv_gamma, 3, 0, 0, AD_CNT_NONE, 0)

AD_ELEM void el_exponential(const double *x, double *f, double *g, double *h) {
  double y = x[0], b = x[1];
  *f = log(b) - b * y;
  g[0] = -b; g[1] = 1 / b - y;
  if (!h) return;
  H(0, 0) = 0; H(1, 0) = -1; H(1, 1) = -1 / (b * b);
  ad_dist_sym(h, 2);
}
AD_DIST_DEFINE(EXPONENTIAL, el_exponential, 2, 0, 0, AD_CNT_NONE, 0)

/* log alpha + (alpha - 1) log y - alpha log sigma - (y / sigma)^alpha */
AD_ELEM void el_weibull(const double *x, double *f, double *g, double *h) {
  double y = x[0], al = x[1], sg = x[2], ly = log(y), ls = log(sg), lr = ly - ls, w = exp(al * lr);
  *f = log(al) + (al - 1) * ly - al * ls - w;
  g[0] = (al - 1 - al * w) / y; g[1] = 1 / al + lr - w * lr; g[2] = al * (w - 1) / sg;
  if (!h) return;
  ad_jet Y = jet_var(y, 0), A = jet_var(al, 1), S = jet_var(sg, 2);
  ad_jet LR = jet_sub(jet_log(Y), jet_log(S));
  ad_jet r = jet_add(jet_log(A), jet_sub(jet_mul(jet_addc(A, -1), jet_log(Y)), jet_mul(A, jet_log(S))));
  jet_out(jet_sub(r, jet_exp(jet_mul(A, LR))), f, NULL, h);
}
AD_DIST_DEFINE(WEIBULL, el_weibull, 3, 0, 0, AD_CNT_NONE, 0)

/* log alpha + alpha log sigma - (1 + alpha) log y - (y / sigma)^-alpha */
AD_ELEM void el_frechet(const double *x, double *f, double *g, double *h) {
  double y = x[0], al = x[1], sg = x[2], ly = log(y), ls = log(sg), lr = ls - ly, w = exp(al * lr);
  *f = log(al) + al * ls - (1 + al) * ly - w;
  g[0] = (al * w - 1 - al) / y; g[1] = 1 / al + lr - w * lr; g[2] = al * (1 - w) / sg;
  if (!h) return;
  ad_jet Y = jet_var(y, 0), A = jet_var(al, 1), S = jet_var(sg, 2);
  ad_jet LR = jet_sub(jet_log(S), jet_log(Y));
  ad_jet r = jet_add(jet_log(A), jet_sub(jet_mul(A, jet_log(S)), jet_mul(jet_addc(A, 1), jet_log(Y))));
  jet_out(jet_sub(r, jet_exp(jet_mul(A, LR))), f, NULL, h);
}
AD_DIST_DEFINE(FRECHET, el_frechet, 3, 0, 0, AD_CNT_NONE, 0)

/* pareto(y | y_min, alpha) = log alpha + alpha log y_min - (alpha + 1) log y, y >= y_min */
AD_ELEM void el_pareto(const double *x, double *f, double *g, double *h) {
  double y = x[0], ym = x[1], al = x[2], ly = log(y), lm = log(ym);
  if (h) memset(h, 0, 16 * sizeof *h);
  if (y < ym) {
    *f = -INFINITY;
    g[0] = g[1] = g[2] = 0;
    return;
  }
  *f = log(al) + al * lm - (al + 1) * ly;
  g[0] = -(al + 1) / y; g[1] = al / ym; g[2] = 1 / al + lm - ly;
  if (!h) return;
  H(0, 0) = (al + 1) / (y * y); H(1, 1) = -al / (ym * ym); H(2, 2) = -1 / (al * al);
  H(2, 0) = -1 / y; H(2, 1) = 1 / ym;
  ad_dist_sym(h, 3);
}
AD_DIST_DEFINE(PARETO, el_pareto, 3, 0, 0, AD_CNT_NONE, 0)

/* chi_square(y | nu) = -(nu/2) log 2 - lgamma(nu/2) + (nu/2 - 1) log y - y/2 */
AD_ELEM void el_chi_square(const double *x, double *f, double *g, double *h) {
  double y = x[0], hn = 0.5 * x[1], ly = log(y);
  *f = -hn * AD_LN2 - lgamma(hn) + (hn - 1) * ly - 0.5 * y;
  g[0] = (hn - 1) / y - 0.5; g[1] = 0.5 * (ly - AD_LN2 - ad_digamma(hn));
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(0, 0) = -(hn - 1) / (y * y); H(1, 0) = 0.5 / y; H(1, 1) = -0.25 * ad_trigamma(hn);
  ad_dist_sym(h, 2);
}
AD_DIST_DEFINE(CHI_SQUARE, el_chi_square, 2, 0, 0, AD_CNT_NONE, 0)

/* inv_chi_square(y | nu) = -(nu/2) log 2 - lgamma(nu/2) - (nu/2 + 1) log y - 1/(2y) */
AD_ELEM void el_inv_chi_square(const double *x, double *f, double *g, double *h) {
  double y = x[0], hn = 0.5 * x[1], ly = log(y);
  *f = -hn * AD_LN2 - lgamma(hn) - (hn + 1) * ly - 0.5 / y;
  g[0] = -(hn + 1) / y + 0.5 / (y * y); g[1] = -0.5 * (ly + AD_LN2 + ad_digamma(hn));
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(0, 0) = (hn + 1) / (y * y) - 1 / (y * y * y); H(1, 0) = -0.5 / y; H(1, 1) = -0.25 * ad_trigamma(hn);
  ad_dist_sym(h, 2);
}
AD_DIST_DEFINE(INV_CHI_SQUARE, el_inv_chi_square, 2, 0, 0, AD_CNT_NONE, 0)
