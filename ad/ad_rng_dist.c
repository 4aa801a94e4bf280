/* SPDX-License-Identifier: MIT */
/* The univariate _rng functions by AD_RNG_OPS: argument checks and one
** draw each, from the basic variates of ad_rng.c. See ad_rng.h. */
#include <math.h>
#include <string.h>
#include "ad_rng.h"
#include "ad_special.h"

#define PI 3.14159265358979323846

static const struct { const char *name, *kinds; int nargs, integer; } OPS[AD_RNG_COUNT_] = {
#define AD_X_(e, s, n, i, k) [AD_RNG_##e] = {s, k, n, i},
  AD_RNG_OPS(AD_X_)
#undef AD_X_
};

const char *ad_rng_name(int d) { return d >= 0 && d < AD_RNG_COUNT_ ? OPS[d].name : NULL; }
int ad_rng_nargs(int d) { return OPS[d].nargs; }
int ad_rng_integer(int d) { return OPS[d].integer; }

int ad_rng_check(int d, const double *a, const char **what) {
  for (int k = 0; k < OPS[d].nargs; k++) {
    double v = a[k];
    int ok = 1;
    switch (OPS[d].kinds[k]) {
      case 'r': ok = isfinite(v); *what = "finite"; break;
      case 'p': ok = v > 0 && isfinite(v); *what = "positive and finite"; break;
      case 'q': ok = v > 0; *what = "positive"; break;
      case 'n': ok = v >= 0 && isfinite(v); *what = "non-negative and finite"; break;
      case 'u': ok = v >= 0 && v <= 1; *what = "a probability in [0, 1]"; break;
      case 'c': ok = v >= 0 && v < 9e15 && v == floor(v); *what = "a non-negative integer"; break;
    }
    if (!ok) return k + 1;
  }
  if (d == AD_RNG_UNIFORM && !(a[0] < a[1])) {
    *what = "above the lower bound";
    return 2;
  }
  return 0;
}

/* Best & Fisher (1979) */
static double von_mises(ad_rng *r, double mu, double k) {
  double m = fmod(mu, 2 * PI);
  if (k < 1e-8) return m + PI * (2 * ad_rng_uniform(r) - 1);
  double tau = 1 + sqrt(1 + 4 * k * k), rho = (tau - sqrt(2 * tau)) / (2 * k);
  double s = (1 + rho * rho) / (2 * rho), f;
  for (;;) {
    double u1 = ad_rng_uniform(r), u2 = ad_rng_uniform(r);
    double z = cos(PI * u1);
    f = (1 + s * z) / (s + z);
    double c = k * (s - f);
    if (c * (2 - c) - u2 > 0 || log(c / u2) + 1 - c >= 0) break;
  }
  double th = acos(f > 1 ? 1 : f < -1 ? -1 : f);
  return m + (ad_rng_uniform(r) > 0.5 ? th : -th);
}

static double skew_normal(ad_rng *r, double xi, double om, double al) {
  double delta = al / sqrt(1 + al * al), u0 = ad_rng_std_normal(r), v = ad_rng_std_normal(r);
  double u1 = delta * u0 + sqrt(1 - delta * delta) * v;
  return xi + om * (u0 >= 0 ? u1 : -u1);
}

double ad_rng_draw(ad_rng *r, int d, const double *a) {
  double u, g;
  switch (d) {
    case AD_RNG_NORMAL: return a[0] + a[1] * ad_rng_std_normal(r);
    case AD_RNG_STD_NORMAL: return ad_rng_std_normal(r);
    case AD_RNG_STUDENT_T:
      g = 2 * ad_rng_gamma1(r, 0.5 * a[0]); /* chi-square(nu) */
      return a[1] + a[2] * ad_rng_std_normal(r) / sqrt(g / a[0]);
    case AD_RNG_CAUCHY: return a[0] + a[1] * tan(PI * (ad_rng_uniform(r) - 0.5));
    case AD_RNG_DOUBLE_EXPONENTIAL:
      u = ad_rng_uniform(r) - 0.5;
      return a[0] - a[1] * (u > 0 ? 1 : -1) * log1p(-2 * fabs(u));
    case AD_RNG_LOGISTIC: u = ad_rng_uniform(r); return a[0] + a[1] * log(u / (1 - u));
    case AD_RNG_GUMBEL: return a[0] - a[1] * log(-log(ad_rng_uniform(r)));
    case AD_RNG_SKEW_NORMAL: return skew_normal(r, a[0], a[1], a[2]);
    case AD_RNG_LOGNORMAL: return exp(a[0] + a[1] * ad_rng_std_normal(r));
    case AD_RNG_GAMMA: return ad_rng_gamma1(r, a[0]) / a[1];
    case AD_RNG_INV_GAMMA: return a[1] / ad_rng_gamma1(r, a[0]);
    case AD_RNG_EXPONENTIAL: return -log(ad_rng_uniform(r)) / a[0];
    case AD_RNG_WEIBULL: return a[1] * pow(-log(ad_rng_uniform(r)), 1 / a[0]);
    case AD_RNG_FRECHET: return a[1] * pow(-log(ad_rng_uniform(r)), -1 / a[0]);
    case AD_RNG_PARETO: return a[0] * pow(ad_rng_uniform(r), -1 / a[1]);
    case AD_RNG_CHI_SQUARE: return 2 * ad_rng_gamma1(r, 0.5 * a[0]);
    case AD_RNG_INV_CHI_SQUARE: return 1 / (2 * ad_rng_gamma1(r, 0.5 * a[0]));
    case AD_RNG_BETA: return ad_rng_beta1(r, a[0], a[1]);
    case AD_RNG_BETA_PROPORTION: return ad_rng_beta1(r, a[0] * a[1], (1 - a[0]) * a[1]);
    case AD_RNG_UNIFORM: return a[0] + (a[1] - a[0]) * ad_rng_uniform(r);
    case AD_RNG_VON_MISES: return von_mises(r, a[0], a[1]);
    case AD_RNG_POISSON: return ad_rng_poisson1(r, a[0]);
    case AD_RNG_POISSON_LOG: return ad_rng_poisson1(r, exp(a[0]));
    case AD_RNG_BINOMIAL: return ad_rng_binomial1(r, a[0], a[1]);
    case AD_RNG_BINOMIAL_LOGIT: return ad_rng_binomial1(r, a[0], ad_inv_logit(a[1]));
    case AD_RNG_BERNOULLI: return ad_rng_uniform(r) < a[0];
    case AD_RNG_BERNOULLI_LOGIT: return ad_rng_uniform(r) < ad_inv_logit(a[0]);
    case AD_RNG_NEG_BINOMIAL: return ad_rng_poisson1(r, ad_rng_gamma1(r, a[0]) / a[1]);
    case AD_RNG_NEG_BINOMIAL_2: return ad_rng_poisson1(r, ad_rng_gamma1(r, a[1]) * a[0] / a[1]);
    case AD_RNG_NEG_BINOMIAL_2_LOG:
      return ad_rng_poisson1(r, ad_rng_gamma1(r, a[1]) * exp(a[0]) / a[1]);
    case AD_RNG_BETA_BINOMIAL: return ad_rng_binomial1(r, a[0], ad_rng_beta1(r, a[1], a[2]));
    default: return NAN;
  }
}
