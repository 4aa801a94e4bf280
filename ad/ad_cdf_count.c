/* SPDX-License-Identifier: MIT */
/* Log cdfs and log ccdfs of counts: poisson (the incomplete gamma),
** binomial, neg_binomial, neg_binomial_2 (the incomplete beta), bernoulli,
** beta_binomial (a sum of its masses). The count n is data; P(X <= n) and
** P(X > n). Gradients exact; Hessians only for bernoulli. */
#include <math.h>
#include <string.h>
#include "ad_dist_impl.h"
#include "ad_special.h"

static void fixed(double v, double *f, double *g) {
  *f = v;
  memset(g, 0, 4 * sizeof *g);
}

/* poisson(n | lambda): P(X <= n) = Q(n + 1, lambda) */
static inline void poisson(int upper, const double *x, double *f, double *g) {
  double dl;
  *f = ad_log_gamma_inc(x[0] + 1, x[1], !upper, NULL, &dl);
  g[0] = 0; g[1] = dl;
}
AD_ELEM void el_poisson_lcdf(const double *x, double *f, double *g, double *h) { (void)h; poisson(0, x, f, g); }
AD_ELEM void el_poisson_lccdf(const double *x, double *f, double *g, double *h) { (void)h; poisson(1, x, f, g); }
AD_DIST_DEFINE(POISSON_LCDF, el_poisson_lcdf, 2, AD_A0, AD_A1, AD_CNT_NONNEG, 0)
AD_DIST_DEFINE(POISSON_LCCDF, el_poisson_lccdf, 2, AD_A0, AD_A1, AD_CNT_NONNEG, 0)

/* binomial(n | N, theta): P(X <= n) = I_(1-theta)(N - n, n + 1) */
static inline void binomial(int upper, const double *x, double *f, double *g) {
  double n = x[0], N = x[1], gy, ga, gb;
  if (n >= N) return fixed(upper ? -INFINITY : 0, f, g);
  ad_log_inc_beta(upper, 1 - x[2], N - n, n + 1, f, &gy, &ga, &gb);
  g[0] = g[1] = 0; g[2] = -gy;
}
AD_ELEM void el_binomial_lcdf(const double *x, double *f, double *g, double *h) { (void)h; binomial(0, x, f, g); }
AD_ELEM void el_binomial_lccdf(const double *x, double *f, double *g, double *h) { (void)h; binomial(1, x, f, g); }
AD_DIST_DEFINE(BINOMIAL_LCDF, el_binomial_lcdf, 3, AD_A0 | AD_A1, AD_A2, AD_CNT_BOUNDED, 0)
AD_DIST_DEFINE(BINOMIAL_LCCDF, el_binomial_lccdf, 3, AD_A0 | AD_A1, AD_A2, AD_CNT_BOUNDED, 0)

/* bernoulli(n | theta): P(X <= 0) = 1 - theta */
static inline void bernoulli(int upper, const double *x, double *f, double *g, double *h) {
  double th = x[1];
  if (h) memset(h, 0, 16 * sizeof *h);
  if (x[0] >= 1) return fixed(upper ? -INFINITY : 0, f, g);
  g[0] = 0;
  if (upper) {
    *f = log(th), g[1] = 1 / th;
  } else {
    *f = log1p(-th), g[1] = -1 / (1 - th);
  }
  if (h) h[5] = -g[1] * g[1];
}
AD_ELEM void el_bernoulli_lcdf(const double *x, double *f, double *g, double *h) { bernoulli(0, x, f, g, h); }
AD_ELEM void el_bernoulli_lccdf(const double *x, double *f, double *g, double *h) { bernoulli(1, x, f, g, h); }
AD_DIST_DEFINE(BERNOULLI_LCDF, el_bernoulli_lcdf, 2, AD_A0, 0, AD_CNT_BINARY, 0)
AD_DIST_DEFINE(BERNOULLI_LCCDF, el_bernoulli_lccdf, 2, AD_A0, 0, AD_CNT_BINARY, 0)

/* neg_binomial(n | alpha, beta): P(X <= n) = I_p(alpha, n + 1), p = beta / (1 + beta) */
static inline void neg_binomial(int upper, const double *x, double *f, double *g) {
  double a = x[1], b = x[2], gp, ga, gb, q = 1 + b;
  ad_log_inc_beta(upper, b / q, a, x[0] + 1, f, &gp, &ga, &gb);
  g[0] = 0; g[1] = ga; g[2] = gp / (q * q);
}
AD_ELEM void el_neg_binomial_lcdf(const double *x, double *f, double *g, double *h) { (void)h; neg_binomial(0, x, f, g); }
AD_ELEM void el_neg_binomial_lccdf(const double *x, double *f, double *g, double *h) { (void)h; neg_binomial(1, x, f, g); }
AD_DIST_DEFINE(NEG_BINOMIAL_LCDF, el_neg_binomial_lcdf, 3, AD_A0, AD_A1 | AD_A2, AD_CNT_NONNEG, 0)
AD_DIST_DEFINE(NEG_BINOMIAL_LCCDF, el_neg_binomial_lccdf, 3, AD_A0, AD_A1 | AD_A2, AD_CNT_NONNEG, 0)

/* neg_binomial_2(n | mu, phi): P(X <= n) = I_p(phi, n + 1), p = phi / (mu + phi) */
static inline void neg_binomial_2(int upper, const double *x, double *f, double *g) {
  double mu = x[1], phi = x[2], s = mu + phi, gp, ga, gb;
  ad_log_inc_beta(upper, phi / s, phi, x[0] + 1, f, &gp, &ga, &gb);
  g[0] = 0; g[1] = -gp * phi / (s * s); g[2] = ga + gp * mu / (s * s);
}
AD_ELEM void el_neg_binomial_2_lcdf(const double *x, double *f, double *g, double *h) { (void)h; neg_binomial_2(0, x, f, g); }
AD_ELEM void el_neg_binomial_2_lccdf(const double *x, double *f, double *g, double *h) { (void)h; neg_binomial_2(1, x, f, g); }
AD_DIST_DEFINE(NEG_BINOMIAL_2_LCDF, el_neg_binomial_2_lcdf, 3, AD_A0, AD_A1 | AD_A2, AD_CNT_NONNEG, 0)
AD_DIST_DEFINE(NEG_BINOMIAL_2_LCCDF, el_neg_binomial_2_lccdf, 3, AD_A0, AD_A1 | AD_A2, AD_CNT_NONNEG, 0)

/* beta_binomial(n | N, a, b): log of the sum of the masses of k = 0..n (or
** n+1..N), each lchoose(N, k) + lbeta(k + a, N - k + b) - lbeta(a, b), the
** gradient their mean weighted by mass */
static inline void beta_binomial(int upper, const double *x, double *f, double *g) {
  double n = x[0], N = x[1], a = x[2], b = x[3];
  if (n >= N) return fixed(upper ? -INFINITY : 0, f, g);
  double lo = upper ? n + 1 : 0, hi = upper ? N : n;
  double t = ad_digamma(a + b) - ad_digamma(N + a + b), lb = ad_lbeta(a, b);
  double m = -INFINITY, s = 0, sa = 0, sb = 0;
  for (double k = lo; k <= hi; k++) { /* running log-sum-exp with weighted gradients */
    double lk = ad_lchoose(N, k) + ad_lbeta(k + a, N - k + b) - lb;
    double ga = ad_digamma(k + a) - ad_digamma(a) + t, gb = ad_digamma(N - k + b) - ad_digamma(b) + t;
    if (lk > m) {
      double r = exp(m - lk);
      s *= r, sa *= r, sb *= r;
      m = lk;
    }
    double w = exp(lk - m);
    s += w, sa += w * ga, sb += w * gb;
  }
  *f = m + log(s);
  g[0] = g[1] = 0; g[2] = sa / s; g[3] = sb / s;
}
AD_ELEM void el_beta_binomial_lcdf(const double *x, double *f, double *g, double *h) { (void)h; beta_binomial(0, x, f, g); }
AD_ELEM void el_beta_binomial_lccdf(const double *x, double *f, double *g, double *h) { (void)h; beta_binomial(1, x, f, g); }
AD_DIST_DEFINE(BETA_BINOMIAL_LCDF, el_beta_binomial_lcdf, 4, AD_A0 | AD_A1, AD_A2 | AD_A3, AD_CNT_BOUNDED, 0)
AD_DIST_DEFINE(BETA_BINOMIAL_LCCDF, el_beta_binomial_lccdf, 4, AD_A0 | AD_A1, AD_A2 | AD_A3, AD_CNT_BOUNDED, 0)
