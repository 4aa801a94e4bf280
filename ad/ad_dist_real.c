/* SPDX-License-Identifier: MIT */
/* Log densities on the real line: normal, std_normal, student_t, cauchy,
** double_exponential, logistic, gumbel, skew_normal. Value and gradient by
** hand (the recorded fast path), Hessians by hand or on jets (ad_jet.h).
** Arguments in Stan's order; full normalizing constants, as Stan's _lpdf. */
#include <math.h>
#include <string.h>
#include "ad_dist_impl.h"
#include "ad_jet.h"


AD_ELEM void el_normal(const double *x, double *f, double *g, double *h) {
  double s = x[2], inv = 1 / s, z = (x[0] - x[1]) * inv;
  *f = -0.5 * z * z - log(s) - AD_HALF_LOG_2PI;
  g[0] = -z * inv; g[1] = z * inv; g[2] = (z * z - 1) * inv;
  if (!h) return;
  double i2 = inv * inv;
  H(0, 0) = -i2; H(1, 0) = i2; H(1, 1) = -i2;
  H(2, 0) = 2 * z * i2; H(2, 1) = -2 * z * i2; H(2, 2) = (1 - 3 * z * z) * i2;
  ad_dist_sym(h, 3);
}
AD_DIST_DEFINE(NORMAL, el_normal, 3, 0, 0, AD_CNT_NONE, 0)

AD_ELEM void el_std_normal(const double *x, double *f, double *g, double *h) {
  *f = -0.5 * x[0] * x[0] - AD_HALF_LOG_2PI;
  g[0] = -x[0];
  if (h) memset(h, 0, 16 * sizeof *h), H(0, 0) = -1;
}
AD_DIST_DEFINE(STD_NORMAL, el_std_normal, 1, 0, 0, AD_CNT_NONE, 0)

/* student_t(y | nu, mu, s) = A(nu) + nu log s - c log D,
** D = nu s^2 + (y - mu)^2, c = (nu + 1) / 2,
** A(nu) = lgamma(c) - lgamma(nu/2) - log(pi)/2 + (nu/2) log nu. */
AD_ELEM void el_student_t(const double *x, double *f, double *g, double *h) {
  double nu = x[1], u = x[0] - x[2], s = x[3], c = 0.5 * (nu + 1);
  double D = nu * s * s + u * u, lD = log(D), ls = log(s);
  *f = lgamma(c) - lgamma(0.5 * nu) - 0.5 * AD_LOG_PI + 0.5 * nu * log(nu) + nu * ls - c * lD;
  /* index order: 0 y, 1 nu, 2 mu, 3 s */
  double Da[4] = {2 * u, s * s, -2 * u, 2 * nu * s};
  double A1 = 0.5 * ad_digamma(c) - 0.5 * ad_digamma(0.5 * nu) + 0.5 * log(nu) + 0.5;
  g[0] = -c * Da[0] / D;
  g[1] = A1 + ls - 0.5 * lD - c * Da[1] / D;
  g[2] = -c * Da[2] / D;
  g[3] = nu / s - c * Da[3] / D;
  if (!h) return;
  double Dab[4][4] = {{2, 0, -2, 0}, {0, 0, 0, 2 * s}, {-2, 0, 2, 0}, {0, 2 * s, 0, 2 * nu}};
  double A2 = 0.25 * ad_trigamma(c) - 0.25 * ad_trigamma(0.5 * nu) + 0.5 / nu;
  for (int k = 0; k < 4; k++)
    for (int l = 0; l <= k; l++) H(k, l) = -c * (Dab[k][l] / D - Da[k] * Da[l] / (D * D));
  for (int k = 0; k < 4; k++)
    if (k != 1) H(k > 1 ? k : 1, k > 1 ? 1 : k) += -0.5 * Da[k] / D;
  H(3, 1) += 1 / s;
  H(1, 1) = A2 - Da[1] / D + c * Da[1] * Da[1] / (D * D);
  H(3, 3) -= nu / (s * s);
  ad_dist_sym(h, 4);
}
AD_DIST_DEFINE(STUDENT_T, el_student_t, 4, 0, 0, AD_CNT_NONE, 0)

/* log s - log D with D = s^2 + u^2, u = y - mu (plus -log pi). */
AD_ELEM void el_cauchy(const double *x, double *f, double *g, double *h) {
  double u = x[0] - x[1], s = x[2], D = s * s + u * u;
  *f = -AD_LOG_PI + log(s) - log(D);
  g[0] = -2 * u / D; g[1] = 2 * u / D; g[2] = 1 / s - 2 * s / D;
  if (!h) return;
  double Da[3] = {2 * u, -2 * u, 2 * s};
  double Dab[3][3] = {{2, -2, 0}, {-2, 2, 0}, {0, 0, 2}};
  for (int k = 0; k < 3; k++)
    for (int l = 0; l <= k; l++) H(k, l) = -(Dab[k][l] / D - Da[k] * Da[l] / (D * D));
  H(2, 2) -= 1 / (s * s);
  ad_dist_sym(h, 3);
}
AD_DIST_DEFINE(CAUCHY, el_cauchy, 3, 0, 0, AD_CNT_NONE, 0)

/* The standardized z = (y - mu) / s of three jet variables. */
static inline ad_jet jet_z(const double *x) {
  return jet_div(jet_sub(jet_var(x[0], 0), jet_var(x[1], 1)), jet_var(x[2], 2));
}

/* -log 2 - log s - |y - mu| / s */
AD_ELEM void el_double_exponential(const double *x, double *f, double *g, double *h) {
  double s = x[2], u = x[0] - x[1], a = fabs(u), sg = u > 0 ? 1 : u < 0 ? -1 : 0;
  *f = -AD_LN2 - log(s) - a / s;
  g[0] = -sg / s; g[1] = sg / s; g[2] = -1 / s + a / (s * s);
  if (!h) return;
  ad_jet z = jet_z(x);
  ad_jet az = jet_chain(z, fabs(z.v), sg, 0);
  jet_out(jet_addc(jet_neg(jet_add(jet_log(jet_var(s, 2)), az)), -AD_LN2), f, NULL, h);
}
AD_DIST_DEFINE(DOUBLE_EXPONENTIAL, el_double_exponential, 3, 0, 0, AD_CNT_NONE, 0)

/* -z - log s - 2 log(1 + e^-z) */
AD_ELEM void el_logistic(const double *x, double *f, double *g, double *h) {
  double s = x[2], z = (x[0] - x[1]) / s, p = ad_inv_logit(z), dz = 1 - 2 * p;
  *f = -z - log(s) - 2 * ad_log1p_exp(-z);
  g[0] = dz / s; g[1] = -dz / s; g[2] = -(1 + z * dz) / s;
  if (!h) return;
  ad_jet z2 = jet_z(x);
  ad_jet r = jet_add(z2, jet_add(jet_log(jet_var(s, 2)), jet_scale(jet_log1p_exp(jet_neg(z2)), 2)));
  jet_out(jet_neg(r), f, NULL, h);
}
AD_DIST_DEFINE(LOGISTIC, el_logistic, 3, 0, 0, AD_CNT_NONE, 0)

/* -log beta - z - e^-z */
AD_ELEM void el_gumbel(const double *x, double *f, double *g, double *h) {
  double b = x[2], z = (x[0] - x[1]) / b, e = exp(-z), dz = e - 1;
  *f = -log(b) - z - e;
  g[0] = dz / b; g[1] = -dz / b; g[2] = -(1 + z * dz) / b;
  if (!h) return;
  ad_jet z2 = jet_z(x);
  ad_jet r = jet_add(jet_log(jet_var(b, 2)), jet_add(z2, jet_exp(jet_neg(z2))));
  jet_out(jet_neg(r), f, NULL, h);
}
AD_DIST_DEFINE(GUMBEL, el_gumbel, 3, 0, 0, AD_CNT_NONE, 0)

/* skew_normal(y | xi, omega, alpha) = log 2 - log(omega) - log(2 pi)/2 - z^2/2
** + log Phi(alpha z) */
AD_ELEM void el_skew_normal(const double *x, double *f, double *g, double *h) {
  double om = x[2], al = x[3], z = (x[0] - x[1]) / om, r;
  double lp = ad_log_Phi(al * z, &r);
  *f = AD_LN2 - AD_HALF_LOG_2PI - log(om) - 0.5 * z * z + lp;
  double dz = -z + al * r;
  g[0] = dz / om; g[1] = -dz / om; g[2] = -(1 + z * dz) / om; g[3] = z * r;
  if (!h) return;
  ad_jet z2 = jet_z(x);
  ad_jet t = jet_log_Phi(jet_mul(jet_var(al, 3), z2));
  ad_jet v = jet_sub(t, jet_add(jet_log(jet_var(om, 2)), jet_scale(jet_square(z2), 0.5)));
  jet_out(jet_addc(v, AD_LN2 - AD_HALF_LOG_2PI), f, NULL, h);
}
AD_DIST_DEFINE(SKEW_NORMAL, el_skew_normal, 4, 0, 0, AD_CNT_NONE, 0)
