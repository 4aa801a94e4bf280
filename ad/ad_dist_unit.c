/* SPDX-License-Identifier: MIT */
/* Log densities on bounded supports: beta, beta_proportion (mean mu,
** precision kappa), uniform, von_mises. Value and gradient by hand, Hessians
** by hand or on jets (ad_jet.h). */
#include <math.h>
#include <string.h>
#include "ad_dist_impl.h"
#include "ad_jet.h"


/* beta(y | a, b) = (a-1) log y + (b-1) log(1-y) - log B(a, b) */
AD_ELEM void el_beta(const double *x, double *f, double *g, double *h) {
  double y = x[0], a = x[1], b = x[2], ly = log(y), l1y = log1p(-y);
  double pab = ad_digamma(a + b);
  *f = (a - 1) * ly + (b - 1) * l1y - ad_lbeta(a, b);
  g[0] = (a - 1) / y - (b - 1) / (1 - y);
  g[1] = ly - ad_digamma(a) + pab;
  g[2] = l1y - ad_digamma(b) + pab;
  if (!h) return;
  double tab = ad_trigamma(a + b);
  H(0, 0) = -(a - 1) / (y * y) - (b - 1) / ((1 - y) * (1 - y));
  H(1, 0) = 1 / y; H(2, 0) = -1 / (1 - y);
  H(1, 1) = tab - ad_trigamma(a); H(2, 1) = tab; H(2, 2) = tab - ad_trigamma(b);
  ad_dist_sym(h, 3);
}
AD_DIST_DEFINE(BETA, el_beta, 3, 0, 0, AD_CNT_NONE, 0)

/* beta_proportion(y | mu, kappa) = beta(y | mu kappa, (1 - mu) kappa) */
AD_ELEM void el_beta_proportion(const double *x, double *f, double *g, double *h) {
  double y = x[0], mu = x[1], k = x[2], a = mu * k, b = (1 - mu) * k, ly = log(y), l1y = log1p(-y);
  double pk = ad_digamma(k), fa = ly - ad_digamma(a) + pk, fb = l1y - ad_digamma(b) + pk;
  *f = (a - 1) * ly + (b - 1) * l1y - ad_lbeta(a, b);
  g[0] = (a - 1) / y - (b - 1) / (1 - y);
  g[1] = k * (fa - fb);
  g[2] = mu * fa + (1 - mu) * fb;
  if (!h) return;
  ad_jet Y = jet_var(y, 0), M = jet_var(mu, 1), K = jet_var(k, 2);
  ad_jet A = jet_mul(M, K), B = jet_sub(K, A);
  ad_jet r = jet_add(jet_mul(jet_addc(A, -1), jet_log(Y)), jet_mul(jet_addc(B, -1), jet_log1p(jet_neg(Y))));
  r = jet_add(r, jet_sub(jet_lgamma(K), jet_add(jet_lgamma(A), jet_lgamma(B))));
  jet_out(r, f, NULL, h);
}
AD_DIST_DEFINE(BETA_PROPORTION, el_beta_proportion, 3, 0, 0, AD_CNT_NONE, 0)

/* uniform(y | a, b) = -log(b - a) on [a, b] */
AD_ELEM void el_uniform(const double *x, double *f, double *g, double *h) {
  double y = x[0], a = x[1], b = x[2], w = b - a;
  if (h) memset(h, 0, 16 * sizeof *h);
  g[0] = 0;
  if (!(y >= a && y <= b)) {
    *f = -INFINITY;
    g[1] = g[2] = 0;
    return;
  }
  *f = -log(w);
  g[1] = 1 / w; g[2] = -1 / w;
  if (!h) return;
  H(1, 1) = H(2, 2) = 1 / (w * w);
  H(2, 1) = -1 / (w * w);
  ad_dist_sym(h, 3);
}
AD_DIST_DEFINE(UNIFORM, el_uniform, 3, 0, 0, AD_CNT_NONE, 0)

/* von_mises(y | mu, kappa) = kappa cos(y - mu) - log(2 pi) - log I0(kappa) */
AD_ELEM void el_von_mises(const double *x, double *f, double *g, double *h) {
  double u = x[0] - x[1], k = x[2], c = cos(u), s = sin(u);
  *f = k * c - AD_LOG_2PI - ad_log_bessel_i0(k);
  g[0] = -k * s; g[1] = k * s; g[2] = c - ad_bessel_i1_i0(k);
  if (!h) return;
  ad_jet U = jet_sub(jet_var(x[0], 0), jet_var(x[1], 1)), K = jet_var(k, 2);
  jet_out(jet_addc(jet_sub(jet_mul(K, jet_cos(U)), jet_log_i0(K)), -AD_LOG_2PI), f, NULL, h);
}
AD_DIST_DEFINE(VON_MISES, el_von_mises, 3, 0, 0, AD_CNT_NONE, 0)
