/* SPDX-License-Identifier: MIT */
/* Log mass functions of counts: poisson, poisson_log, binomial,
** binomial_logit, bernoulli, bernoulli_logit, neg_binomial, neg_binomial_2,
** neg_binomial_2_log, beta_binomial. Counts (n, N) are data; their partials
** are 0. Value and gradient by hand, Hessians by hand or on jets. */
#include <math.h>
#include <string.h>
#include "ad_dist_impl.h"
#include "ad_jet.h"


/* n log lambda - lambda - lgamma(n + 1) (0 log 0 = 0) */
AD_ELEM void el_poisson(const double *x, double *f, double *g, double *h) {
  double n = x[0], lam = x[1];
  *f = (n == 0 ? 0 : n * log(lam)) - lam - lgamma(n + 1);
  g[0] = 0; g[1] = n / lam - 1;
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(1, 1) = -n / (lam * lam);
}
AD_DIST_DEFINE(POISSON, el_poisson, 2, AD_A0, 0, AD_CNT_NONNEG, 0)

AD_ELEM void el_poisson_log(const double *x, double *f, double *g, double *h) {
  double n = x[0], a = x[1], ea = exp(a);
  *f = (n == 0 && a == -INFINITY) ? 0 : n * a - ea - lgamma(n + 1);
  g[0] = 0; g[1] = n - ea;
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(1, 1) = -ea;
}
AD_DIST_DEFINE(POISSON_LOG, el_poisson_log, 2, AD_A0, 0, AD_CNT_NONNEG, 0)

/* lchoose(N, n) + n log theta + (N - n) log(1 - theta) */
AD_ELEM void el_binomial(const double *x, double *f, double *g, double *h) {
  double n = x[0], N = x[1], th = x[2], m = N - n;
  *f = ad_lchoose(N, n) + (n == 0 ? 0 : n * log(th)) + (m == 0 ? 0 : m * log1p(-th));
  g[0] = g[1] = 0;
  g[2] = (n == 0 ? 0 : n / th) - (m == 0 ? 0 : m / (1 - th));
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(2, 2) = -(n == 0 ? 0 : n / (th * th)) - (m == 0 ? 0 : m / ((1 - th) * (1 - th)));
}
AD_DIST_DEFINE(BINOMIAL, el_binomial, 3, AD_A0 | AD_A1, 0, AD_CNT_BOUNDED, 0)

AD_ELEM void el_binomial_logit(const double *x, double *f, double *g, double *h) {
  double n = x[0], N = x[1], a = x[2], p = ad_inv_logit(a);
  *f = ad_lchoose(N, n) + n * a - N * ad_log1p_exp(a);
  g[0] = 0; g[1] = 0; g[2] = n - N * p;
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(2, 2) = -N * p * (1 - p);
}
AD_DIST_DEFINE(BINOMIAL_LOGIT, el_binomial_logit, 3, AD_A0 | AD_A1, 0, AD_CNT_BOUNDED, 0)

AD_ELEM void el_bernoulli(const double *x, double *f, double *g, double *h) {
  double n = x[0], th = x[1];
  *f = n == 1 ? log(th) : log1p(-th);
  g[0] = 0; g[1] = n == 1 ? 1 / th : -1 / (1 - th);
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(1, 1) = -g[1] * g[1];
}
AD_DIST_DEFINE(BERNOULLI, el_bernoulli, 2, AD_A0, 0, AD_CNT_BINARY, 0)

AD_ELEM void el_bernoulli_logit(const double *x, double *f, double *g, double *h) {
  double n = x[0], a = x[1], p = ad_inv_logit(a);
  *f = n * a - ad_log1p_exp(a);
  g[0] = 0; g[1] = n - p;
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(1, 1) = -p * (1 - p);
}
AD_DIST_DEFINE(BERNOULLI_LOGIT, el_bernoulli_logit, 2, AD_A0, 0, AD_CNT_BINARY, 0)

/* lgamma(n + phi) - lgamma(phi) as a short sum of logs for small n: the
** difference cancels for large phi */
static double lgamma_ratio(double n, double phi) {
  double lg = 0;
  if (n < 64)
    for (int k = 0; k < (int)n; k++) lg += log(phi + k);
  else
    lg = lgamma(n + phi) - lgamma(phi);
  return lg;
}

/* neg_binomial(n | alpha, beta): lgamma(n + alpha) - lgamma(n + 1) - lgamma(alpha)
** + alpha log beta - (alpha + n) log(1 + beta) */
AD_ELEM void el_neg_binomial(const double *x, double *f, double *g, double *h) {
  double n = x[0], a = x[1], b = x[2], l1b = log1p(b);
  *f = lgamma_ratio(n, a) - lgamma(n + 1) + a * log(b) - (a + n) * l1b;
  g[0] = 0;
  g[1] = ad_digamma(n + a) - ad_digamma(a) + log(b) - l1b;
  g[2] = a / b - (a + n) / (1 + b);
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(1, 1) = ad_trigamma(n + a) - ad_trigamma(a);
  H(2, 1) = 1 / b - 1 / (1 + b);
  H(2, 2) = -a / (b * b) + (a + n) / ((1 + b) * (1 + b));
  ad_dist_sym(h, 3);
}
AD_DIST_DEFINE(NEG_BINOMIAL, el_neg_binomial, 3, AD_A0, 0, AD_CNT_NONNEG, 0)

/* neg_binomial_2_log(n | eta, phi), mean mu = e^eta:
** lgamma(n+phi) - lgamma(n+1) - lgamma(phi) + phi (log phi - L) + n (eta - L),
** L = log(mu + phi) = log_sum_exp(eta, log phi). */
AD_ELEM void el_neg_binomial_2_log(const double *x, double *f, double *g, double *h) {
  double n = x[0], eta = x[1], phi = x[2], lphi = log(phi);
  double L = eta > lphi ? eta + log1p(exp(lphi - eta)) : lphi + log1p(exp(eta - lphi));
  double s = ad_inv_logit(eta - lphi), e = exp(-L); /* mu/(mu+phi), 1/(mu+phi) */
  /* phi (log phi - L) = -phi log1p(mu/phi) */
  *f = lgamma_ratio(n, phi) - lgamma(n + 1) - phi * log1p(exp(eta - lphi)) + n * (eta - L);
  g[0] = 0;
  g[1] = n - (phi + n) * s;
  g[2] = ad_digamma(n + phi) - ad_digamma(phi) + lphi + 1 - L - (phi + n) * e;
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  double mu = exp(eta);
  H(1, 1) = -(phi + n) * s * (1 - s);
  H(2, 1) = -s + (phi + n) * s * e;
  H(2, 2) = ad_trigamma(n + phi) - ad_trigamma(phi) + 1 / phi - e - (mu - n) * e * e;
  ad_dist_sym(h, 3);
}
AD_DIST_DEFINE(NEG_BINOMIAL_2_LOG, el_neg_binomial_2_log, 3, AD_A0, 0, AD_CNT_NONNEG, 0)

/* neg_binomial_2(n | mu, phi) = neg_binomial_2_log(n | log mu, phi) */
AD_ELEM void el_neg_binomial_2(const double *x, double *f, double *g, double *h) {
  double mu = x[1], y[3] = {x[0], log(mu), x[2]}, hh[16];
  el_neg_binomial_2_log(y, f, g, h ? hh : NULL);
  double ge = g[1];
  g[1] = ge / mu;
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(1, 1) = (hh[1 * 4 + 1] - ge) / (mu * mu);
  H(2, 1) = hh[2 * 4 + 1] / mu;
  H(2, 2) = hh[2 * 4 + 2];
  ad_dist_sym(h, 3);
}
AD_DIST_DEFINE(NEG_BINOMIAL_2, el_neg_binomial_2, 3, AD_A0, 0, AD_CNT_NONNEG, 0)

/* beta_binomial(n | N, a, b) = lchoose(N, n) + lbeta(n + a, N - n + b) - lbeta(a, b) */
AD_ELEM void el_beta_binomial(const double *x, double *f, double *g, double *h) {
  double n = x[0], N = x[1], a = x[2], b = x[3];
  *f = ad_lchoose(N, n) + ad_lbeta(n + a, N - n + b) - ad_lbeta(a, b);
  double t = ad_digamma(a + b) - ad_digamma(N + a + b);
  g[0] = g[1] = 0;
  g[2] = ad_digamma(n + a) - ad_digamma(a) + t;
  g[3] = ad_digamma(N - n + b) - ad_digamma(b) + t;
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  double u = ad_trigamma(a + b) - ad_trigamma(N + a + b);
  H(2, 2) = ad_trigamma(n + a) - ad_trigamma(a) + u;
  H(3, 3) = ad_trigamma(N - n + b) - ad_trigamma(b) + u;
  H(3, 2) = u;
  ad_dist_sym(h, 4);
}
AD_DIST_DEFINE(BETA_BINOMIAL, el_beta_binomial, 4, AD_A0 | AD_A1, 0, AD_CNT_BOUNDED, 0)
