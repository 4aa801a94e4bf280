/* SPDX-License-Identifier: MIT */
/* Log cdfs and log ccdfs on the real line: normal, std_normal, student_t,
** cauchy, double_exponential, logistic, gumbel, lognormal. Each lcdf /
** lccdf pair is one function of the standardized value, written on jets
** (value, gradient and Hessian by the chain rule) where it is elementary;
** the normal and t ones by hand. */
#include <math.h>
#include <string.h>
#include "ad_dist_impl.h"
#include "ad_jet.h"

#define PI 3.14159265358979323846

/* log Phi(w) for w = sgn (y - mu) / sigma, sgn = +1 (lcdf) or -1 (lccdf):
** f'(w) = r, f''(w) = -r (w + r), then the chain rule through w. */
static inline void lcdf_normal(double sgn, const double *x, double *f, double *g, double *h) {
  double s = x[2], w = sgn * (x[0] - x[1]) / s, r;
  *f = ad_log_Phi(w, &r);
  double wa[3] = {sgn / s, -sgn / s, -w / s};
  for (int k = 0; k < 3; k++) g[k] = r * wa[k];
  if (!h) return;
  double r2 = -r * (w + r), s2 = s * s;
  double wab[3][3] = {{0, 0, -sgn / s2}, {0, 0, sgn / s2}, {-sgn / s2, sgn / s2, 2 * w / s2}};
  for (int k = 0; k < 3; k++)
    for (int l = 0; l < 3; l++) H(k, l) = r2 * wa[k] * wa[l] + r * wab[k][l];
}
AD_ELEM void el_normal_lcdf(const double *x, double *f, double *g, double *h) {
  lcdf_normal(1, x, f, g, h);
}
AD_ELEM void el_normal_lccdf(const double *x, double *f, double *g, double *h) {
  lcdf_normal(-1, x, f, g, h);
}
AD_DIST_DEFINE(NORMAL_LCDF, el_normal_lcdf, 3, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(NORMAL_LCCDF, el_normal_lccdf, 3, 0, 0, AD_CNT_NONE, 0)

AD_ELEM void el_std_normal_lcdf(const double *x, double *f, double *g, double *h) {
  jet_out(jet_log_Phi(jet_var(x[0], 0)), f, g, h);
}
AD_ELEM void el_std_normal_lccdf(const double *x, double *f, double *g, double *h) {
  jet_out(jet_log_Phi(jet_neg(jet_var(x[0], 0))), f, g, h);
}
AD_DIST_DEFINE(STD_NORMAL_LCDF, el_std_normal_lcdf, 1, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(STD_NORMAL_LCCDF, el_std_normal_lccdf, 1, 0, 0, AD_CNT_NONE, 0)

/* student_t_lccdf(y | nu, mu, s) = log P(T > t), t = (y - mu)/s:
** P(T > t) = I_x(nu/2, 1/2) / 2 for t >= 0 (1 minus that below), x = nu/(nu+t^2). */
AD_ELEM void el_student_t_lccdf(const double *x, double *f, double *g, double *h) {
  double nu = x[1], s = x[3], t = (x[0] - x[2]) / s, a = 0.5 * nu;
  double lS, dt, dnu, q = nu + t * t;
  if (t == 0) {
    lS = -AD_LN2;
    dt = -exp(lgamma(a + 0.5) - lgamma(a) - 0.5 * (log(nu) + AD_LOG_PI)) / 0.5;
    dnu = 0;
  } else {
    double Ia, I = ad_inc_beta(a, 0.5, nu / q, &Ia, NULL);
    double S = t > 0 ? 0.5 * I : 1 - 0.5 * I;
    lS = t > 0 ? log(0.5 * I) : log1p(-0.5 * I);
    /* log pdf of T at t, and dI/dx dx/dnu by logs: both tails stay finite */
    double lp = lgamma(a + 0.5) - lgamma(a) - 0.5 * (log(nu) + AD_LOG_PI) - (a + 0.5) * log1p(t * t / nu);
    double ldIx = (a - 1) * log(nu / q) - 0.5 * log(t * t / q) - ad_lbeta(a, 0.5);
    double ldx = 2 * log(fabs(t)) - 2 * log(q);
    dt = -exp(lp - lS);
    double dS = (t > 0 ? 0.5 : -0.5) * (0.5 * Ia + exp(ldIx + ldx));
    dnu = dS / S;
  }
  *f = lS;
  g[0] = dt / s; g[1] = dnu; g[2] = -dt / s; g[3] = -dt * t / s;
  if (!h) return;
  /* in t: (log S)'' = -r ((nu+1) t / (nu + t^2) + r) with r = -p/S = dt */
  double d2 = -dt * ((nu + 1) * t / q + dt), s2 = s * s;
  double ta[4] = {1 / s, 0, -1 / s, -t / s};
  double tab[4][4] = {{0, 0, 0, -1 / s2}, {0}, {0, 0, 0, 1 / s2}, {-1 / s2, 0, 1 / s2, 2 * t / s2}};
  for (int k = 0; k < 4; k++)
    for (int l = 0; l < 4; l++)
      H(k, l) = (k == 1 || l == 1) ? NAN : d2 * ta[k] * ta[l] + dt * tab[k][l];
}
AD_DIST_DEFINE(STUDENT_T_LCCDF, el_student_t_lccdf, 4, 0, AD_A1, AD_CNT_NONE, 0)

/* P(T <= t) = P(T > -t): the lccdf at (-y, nu, -mu, s), signs flipped back */
AD_ELEM void el_student_t_lcdf(const double *x, double *f, double *g, double *h) {
  static const double sg[4] = {-1, 1, -1, 1};
  double y[4] = {-x[0], x[1], -x[2], x[3]};
  el_student_t_lccdf(y, f, g, h);
  for (int k = 0; k < 4; k++) g[k] *= sg[k];
  if (h)
    for (int k = 0; k < 4; k++)
      for (int l = 0; l < 4; l++) H(k, l) *= sg[k] * sg[l];
}
AD_DIST_DEFINE(STUDENT_T_LCDF, el_student_t_lcdf, 4, 0, AD_A1, AD_CNT_NONE, 0)

/* the standardized (y - mu) / s of three jet variables, times sgn */
static inline ad_jet jet_zs(const double *x, double sgn) {
  ad_jet z = jet_div(jet_sub(jet_var(x[0], 0), jet_var(x[1], 1)), jet_var(x[2], 2));
  return sgn < 0 ? jet_neg(z) : z;
}

/* cauchy: P(Z <= z) = atan2(1, -z) / pi (the upper tail without cancellation) */
static inline void cauchy(double sgn, const double *x, double *f, double *g, double *h) {
  ad_jet z = jet_zs(x, sgn);
  double q = 1 + z.v * z.v;
  ad_jet F = jet_chain(z, atan2(1, -z.v) / PI, 1 / (PI * q), -2 * z.v / (PI * q * q));
  jet_out(jet_log(F), f, g, h);
}
AD_ELEM void el_cauchy_lcdf(const double *x, double *f, double *g, double *h) { cauchy(1, x, f, g, h); }
AD_ELEM void el_cauchy_lccdf(const double *x, double *f, double *g, double *h) { cauchy(-1, x, f, g, h); }
AD_DIST_DEFINE(CAUCHY_LCDF, el_cauchy_lcdf, 3, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(CAUCHY_LCCDF, el_cauchy_lccdf, 3, 0, 0, AD_CNT_NONE, 0)

/* double_exponential: log P(Z <= z) = log(1/2) + z below 0, log(1 - e^-z / 2) above */
static inline void dexp(double sgn, const double *x, double *f, double *g, double *h) {
  ad_jet z = jet_zs(x, sgn);
  ad_jet r = z.v < 0 ? jet_addc(z, -AD_LN2) : jet_log1p(jet_scale(jet_exp(jet_neg(z)), -0.5));
  jet_out(r, f, g, h);
}
AD_ELEM void el_dexp_lcdf(const double *x, double *f, double *g, double *h) { dexp(1, x, f, g, h); }
AD_ELEM void el_dexp_lccdf(const double *x, double *f, double *g, double *h) { dexp(-1, x, f, g, h); }
AD_DIST_DEFINE(DOUBLE_EXPONENTIAL_LCDF, el_dexp_lcdf, 3, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(DOUBLE_EXPONENTIAL_LCCDF, el_dexp_lccdf, 3, 0, 0, AD_CNT_NONE, 0)

/* logistic: log inv_logit(+-z) */
AD_ELEM void el_logistic_lcdf(const double *x, double *f, double *g, double *h) {
  jet_out(jet_log_inv_logit(jet_zs(x, 1)), f, g, h);
}
AD_ELEM void el_logistic_lccdf(const double *x, double *f, double *g, double *h) {
  jet_out(jet_log_inv_logit(jet_zs(x, -1)), f, g, h);
}
AD_DIST_DEFINE(LOGISTIC_LCDF, el_logistic_lcdf, 3, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(LOGISTIC_LCCDF, el_logistic_lccdf, 3, 0, 0, AD_CNT_NONE, 0)

/* gumbel: F = exp(-exp(-z)) */
AD_ELEM void el_gumbel_lcdf(const double *x, double *f, double *g, double *h) {
  jet_out(jet_neg(jet_exp(jet_zs(x, -1))), f, g, h);
}
AD_ELEM void el_gumbel_lccdf(const double *x, double *f, double *g, double *h) {
  jet_out(jet_log1m_exp(jet_neg(jet_exp(jet_zs(x, -1)))), f, g, h);
}
AD_DIST_DEFINE(GUMBEL_LCDF, el_gumbel_lcdf, 3, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(GUMBEL_LCCDF, el_gumbel_lccdf, 3, 0, 0, AD_CNT_NONE, 0)

/* lognormal: log Phi(+-(log y - mu) / sigma) */
static inline void lognormal(double sgn, const double *x, double *f, double *g, double *h) {
  ad_jet z = jet_div(jet_sub(jet_log(jet_var(x[0], 0)), jet_var(x[1], 1)), jet_var(x[2], 2));
  if (x[0] <= 0) { /* the cdf is 0 at and below 0 */
    memset(g, 0, 3 * sizeof *g);
    if (h) memset(h, 0, 16 * sizeof *h);
    *f = sgn > 0 ? -INFINITY : 0;
    return;
  }
  jet_out(jet_log_Phi(sgn < 0 ? jet_neg(z) : z), f, g, h);
}
AD_ELEM void el_lognormal_lcdf(const double *x, double *f, double *g, double *h) { lognormal(1, x, f, g, h); }
AD_ELEM void el_lognormal_lccdf(const double *x, double *f, double *g, double *h) { lognormal(-1, x, f, g, h); }
AD_DIST_DEFINE(LOGNORMAL_LCDF, el_lognormal_lcdf, 3, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(LOGNORMAL_LCCDF, el_lognormal_lccdf, 3, 0, 0, AD_CNT_NONE, 0)
