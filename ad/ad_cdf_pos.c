/* SPDX-License-Identifier: MIT */
/* Log cdfs and log ccdfs on the positive reals and bounded supports:
** exponential, weibull, frechet, pareto, uniform (elementary: on jets, with
** Hessians), gamma, inv_gamma, chi_square, inv_chi_square (the regularized
** incomplete gamma), beta, beta_proportion (the incomplete beta): their
** gradients exact, no Hessians (the incomplete functions' second
** derivatives in their shapes are not implemented). */
#include <math.h>
#include <string.h>
#include "ad_dist_impl.h"
#include "ad_jet.h"

#define ALL3 (AD_A0 | AD_A1 | AD_A2)

static void outside(double v, int nargs, double *f, double *g, double *h) {
  *f = v;
  memset(g, 0, (size_t)nargs * sizeof *g);
  if (h) memset(h, 0, 16 * sizeof *h);
}

/* exponential: F = 1 - e^(-beta y) */
AD_ELEM void el_exponential_lcdf(const double *x, double *f, double *g, double *h) {
  if (x[0] <= 0) return outside(-INFINITY, 2, f, g, h);
  jet_out(jet_log1m_exp(jet_neg(jet_mul(jet_var(x[0], 0), jet_var(x[1], 1)))), f, g, h);
}
AD_ELEM void el_exponential_lccdf(const double *x, double *f, double *g, double *h) {
  if (x[0] <= 0) return outside(0, 2, f, g, h);
  jet_out(jet_neg(jet_mul(jet_var(x[0], 0), jet_var(x[1], 1))), f, g, h);
}
AD_DIST_DEFINE(EXPONENTIAL_LCDF, el_exponential_lcdf, 2, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(EXPONENTIAL_LCCDF, el_exponential_lccdf, 2, 0, 0, AD_CNT_NONE, 0)

/* (y / sigma)^(sgn alpha) */
static inline ad_jet power_ratio(const double *x, double sgn) {
  ad_jet lr = jet_sub(jet_log(jet_var(x[0], 0)), jet_log(jet_var(x[2], 2)));
  return jet_exp(jet_scale(jet_mul(jet_var(x[1], 1), lr), sgn));
}

/* weibull: F = 1 - exp(-(y/sigma)^alpha) */
AD_ELEM void el_weibull_lcdf(const double *x, double *f, double *g, double *h) {
  if (x[0] <= 0) return outside(-INFINITY, 3, f, g, h);
  jet_out(jet_log1m_exp(jet_neg(power_ratio(x, 1))), f, g, h);
}
AD_ELEM void el_weibull_lccdf(const double *x, double *f, double *g, double *h) {
  if (x[0] <= 0) return outside(0, 3, f, g, h);
  jet_out(jet_neg(power_ratio(x, 1)), f, g, h);
}
AD_DIST_DEFINE(WEIBULL_LCDF, el_weibull_lcdf, 3, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(WEIBULL_LCCDF, el_weibull_lccdf, 3, 0, 0, AD_CNT_NONE, 0)

/* frechet: F = exp(-(y/sigma)^-alpha) */
AD_ELEM void el_frechet_lcdf(const double *x, double *f, double *g, double *h) {
  if (x[0] <= 0) return outside(-INFINITY, 3, f, g, h);
  jet_out(jet_neg(power_ratio(x, -1)), f, g, h);
}
AD_ELEM void el_frechet_lccdf(const double *x, double *f, double *g, double *h) {
  if (x[0] <= 0) return outside(0, 3, f, g, h);
  jet_out(jet_log1m_exp(jet_neg(power_ratio(x, -1))), f, g, h);
}
AD_DIST_DEFINE(FRECHET_LCDF, el_frechet_lcdf, 3, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(FRECHET_LCCDF, el_frechet_lccdf, 3, 0, 0, AD_CNT_NONE, 0)

/* pareto(y | y_min, alpha): 1 - F = (y_min / y)^alpha above y_min */
static inline ad_jet pareto_lccdf(const double *x) {
  ad_jet lr = jet_sub(jet_log(jet_var(x[1], 1)), jet_log(jet_var(x[0], 0)));
  return jet_mul(jet_var(x[2], 2), lr);
}
AD_ELEM void el_pareto_lcdf(const double *x, double *f, double *g, double *h) {
  if (x[0] <= x[1]) return outside(-INFINITY, 3, f, g, h);
  jet_out(jet_log1m_exp(pareto_lccdf(x)), f, g, h);
}
AD_ELEM void el_pareto_lccdf(const double *x, double *f, double *g, double *h) {
  if (x[0] <= x[1]) return outside(0, 3, f, g, h);
  jet_out(pareto_lccdf(x), f, g, h);
}
AD_DIST_DEFINE(PARETO_LCDF, el_pareto_lcdf, 3, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(PARETO_LCCDF, el_pareto_lccdf, 3, 0, 0, AD_CNT_NONE, 0)

/* uniform(y | a, b): log((y - a)/(b - a)), log((b - y)/(b - a)) */
static inline void uniform(int upper, const double *x, double *f, double *g, double *h) {
  if (x[0] <= x[1]) return outside(upper ? 0 : -INFINITY, 3, f, g, h);
  if (x[0] >= x[2]) return outside(upper ? -INFINITY : 0, 3, f, g, h);
  ad_jet Y = jet_var(x[0], 0), A = jet_var(x[1], 1), B = jet_var(x[2], 2);
  ad_jet num = upper ? jet_sub(B, Y) : jet_sub(Y, A);
  jet_out(jet_sub(jet_log(num), jet_log(jet_sub(B, A))), f, g, h);
}
AD_ELEM void el_uniform_lcdf(const double *x, double *f, double *g, double *h) { uniform(0, x, f, g, h); }
AD_ELEM void el_uniform_lccdf(const double *x, double *f, double *g, double *h) { uniform(1, x, f, g, h); }
AD_DIST_DEFINE(UNIFORM_LCDF, el_uniform_lcdf, 3, 0, 0, AD_CNT_NONE, 0)
AD_DIST_DEFINE(UNIFORM_LCCDF, el_uniform_lccdf, 3, 0, 0, AD_CNT_NONE, 0)

/* log P or log Q (upper) of the incomplete gamma at shape a, argument z */
static inline double gamma_inc(int upper, double a, double z, double *da, double *dz) {
  return ad_log_gamma_inc(a, z, upper, da, dz);
}

/* gamma(y | a, b): F = P(a, b y) */
static inline void gamma_cdf(int upper, const double *x, double *f, double *g) {
  double da, dz;
  if (x[0] <= 0) return outside(upper ? 0 : -INFINITY, 3, f, g, NULL);
  *f = gamma_inc(upper, x[1], x[2] * x[0], &da, &dz);
  g[0] = dz * x[2]; g[1] = da; g[2] = dz * x[0];
}
AD_ELEM void el_gamma_lcdf(const double *x, double *f, double *g, double *h) { (void)h; gamma_cdf(0, x, f, g); }
AD_ELEM void el_gamma_lccdf(const double *x, double *f, double *g, double *h) { (void)h; gamma_cdf(1, x, f, g); }
AD_DIST_DEFINE(GAMMA_LCDF, el_gamma_lcdf, 3, 0, ALL3, AD_CNT_NONE, 0)
AD_DIST_DEFINE(GAMMA_LCCDF, el_gamma_lccdf, 3, 0, ALL3, AD_CNT_NONE, 0)

/* inv_gamma(y | a, b): F = Q(a, b / y) */
static inline void inv_gamma_cdf(int upper, const double *x, double *f, double *g) {
  double da, dz, y = x[0];
  if (y <= 0) return outside(upper ? 0 : -INFINITY, 3, f, g, NULL);
  *f = gamma_inc(!upper, x[1], x[2] / y, &da, &dz);
  g[0] = -dz * x[2] / (y * y); g[1] = da; g[2] = dz / y;
}
AD_ELEM void el_inv_gamma_lcdf(const double *x, double *f, double *g, double *h) { (void)h; inv_gamma_cdf(0, x, f, g); }
AD_ELEM void el_inv_gamma_lccdf(const double *x, double *f, double *g, double *h) { (void)h; inv_gamma_cdf(1, x, f, g); }
AD_DIST_DEFINE(INV_GAMMA_LCDF, el_inv_gamma_lcdf, 3, 0, ALL3, AD_CNT_NONE, 0)
AD_DIST_DEFINE(INV_GAMMA_LCCDF, el_inv_gamma_lccdf, 3, 0, ALL3, AD_CNT_NONE, 0)

/* chi_square(y | nu): F = P(nu/2, y/2); inv_chi_square: F = Q(nu/2, 1/(2y)) */
static inline void chi_square_cdf(int upper, int inv, const double *x, double *f, double *g) {
  double da, dz, y = x[0];
  if (y <= 0) return outside(upper ? 0 : -INFINITY, 2, f, g, NULL);
  *f = gamma_inc(inv ? !upper : upper, 0.5 * x[1], inv ? 0.5 / y : 0.5 * y, &da, &dz);
  g[0] = inv ? -0.5 * dz / (y * y) : 0.5 * dz; g[1] = 0.5 * da;
}
AD_ELEM void el_chi_square_lcdf(const double *x, double *f, double *g, double *h) { (void)h; chi_square_cdf(0, 0, x, f, g); }
AD_ELEM void el_chi_square_lccdf(const double *x, double *f, double *g, double *h) { (void)h; chi_square_cdf(1, 0, x, f, g); }
AD_ELEM void el_inv_chi_square_lcdf(const double *x, double *f, double *g, double *h) { (void)h; chi_square_cdf(0, 1, x, f, g); }
AD_ELEM void el_inv_chi_square_lccdf(const double *x, double *f, double *g, double *h) { (void)h; chi_square_cdf(1, 1, x, f, g); }
AD_DIST_DEFINE(CHI_SQUARE_LCDF, el_chi_square_lcdf, 2, 0, AD_A0 | AD_A1, AD_CNT_NONE, 0)
AD_DIST_DEFINE(CHI_SQUARE_LCCDF, el_chi_square_lccdf, 2, 0, AD_A0 | AD_A1, AD_CNT_NONE, 0)
AD_DIST_DEFINE(INV_CHI_SQUARE_LCDF, el_inv_chi_square_lcdf, 2, 0, AD_A0 | AD_A1, AD_CNT_NONE, 0)
AD_DIST_DEFINE(INV_CHI_SQUARE_LCCDF, el_inv_chi_square_lccdf, 2, 0, AD_A0 | AD_A1, AD_CNT_NONE, 0)

AD_ELEM void el_beta_lcdf(const double *x, double *f, double *g, double *h) {
  (void)h;
  ad_log_inc_beta(0, x[0], x[1], x[2], f, &g[0], &g[1], &g[2]);
}
AD_ELEM void el_beta_lccdf(const double *x, double *f, double *g, double *h) {
  (void)h;
  ad_log_inc_beta(1, x[0], x[1], x[2], f, &g[0], &g[1], &g[2]);
}
AD_DIST_DEFINE(BETA_LCDF, el_beta_lcdf, 3, 0, ALL3, AD_CNT_NONE, 0)
AD_DIST_DEFINE(BETA_LCCDF, el_beta_lccdf, 3, 0, ALL3, AD_CNT_NONE, 0)

/* beta_proportion(y | mu, kappa) = beta(y | mu kappa, (1 - mu) kappa) */
static inline void beta_proportion(int upper, const double *x, double *f, double *g) {
  double mu = x[1], k = x[2], ga, gb;
  ad_log_inc_beta(upper, x[0], mu * k, (1 - mu) * k, f, &g[0], &ga, &gb);
  g[1] = k * (ga - gb);
  g[2] = mu * ga + (1 - mu) * gb;
}
AD_ELEM void el_beta_proportion_lcdf(const double *x, double *f, double *g, double *h) { (void)h; beta_proportion(0, x, f, g); }
AD_ELEM void el_beta_proportion_lccdf(const double *x, double *f, double *g, double *h) { (void)h; beta_proportion(1, x, f, g); }
AD_DIST_DEFINE(BETA_PROPORTION_LCDF, el_beta_proportion_lcdf, 3, 0, ALL3, AD_CNT_NONE, 0)
AD_DIST_DEFINE(BETA_PROPORTION_LCCDF, el_beta_proportion_lccdf, 3, 0, ALL3, AD_CNT_NONE, 0)
