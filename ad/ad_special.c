/* SPDX-License-Identifier: MIT */
/* Polygamma functions by upward recurrence to x >= 10, then the asymptotic
** series (error below 1e-13 there); reflection for negative x. */
#include <math.h>
#include "ad_special.h"

static const double PI = 3.14159265358979323846;

static int is_pole(double x) { return x <= 0 && x == floor(x); }

double ad_digamma(double x) {
  if (isnan(x) || is_pole(x)) return NAN;
  if (x < 0) return ad_digamma(1 - x) - PI / tan(PI * x);
  double r = 0;
  while (x < 10) r -= 1 / x++;
  double f = 1 / (x * x);
  return r + log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

double ad_trigamma(double x) {
  if (isnan(x) || is_pole(x)) return NAN;
  if (x < 0) {
    double s = sin(PI * x);
    return -ad_trigamma(1 - x) + PI * PI / (s * s);
  }
  double r = 0;
  while (x < 10) {
    r += 1 / (x * x);
    x++;
  }
  double f = 1 / (x * x);
  return r + 1 / x + f / 2 +
         f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (1.0 / 30 - f * 5.0 / 66))));
}

double ad_tetragamma(double x) {
  if (isnan(x) || is_pole(x)) return NAN;
  if (x < 0) {
    double s = sin(PI * x);
    return ad_tetragamma(1 - x) - 2 * PI * PI * PI * cos(PI * x) / (s * s * s);
  }
  double r = 0;
  while (x < 10) {
    r -= 2 / (x * x * x);
    x++;
  }
  double f = 1 / (x * x);
  return r - f - f / x -
         f * f * (0.5 - f * (1.0 / 6 - f * (1.0 / 6 - f * (3.0 / 10 - f * 5.0 / 6))));
}

double ad_pentagamma(double x) {
  if (isnan(x) || is_pole(x)) return NAN;
  if (x < 0) { /* reflection, differentiated three times: psi(1-x) - psi(x) = pi cot(pi x) */
    double s = sin(PI * x), c = cos(PI * x), p4 = PI * PI * PI * PI;
    return -ad_pentagamma(1 - x) + 2 * p4 * (s * s + 3 * c * c) / (s * s * s * s);
  }
  double r = 0;
  while (x < 10) {
    double x2 = x * x;
    r += 6 / (x2 * x2);
    x++;
  }
  double f = 1 / (x * x);
  return r + 2 * f / x + 3 * f * f +
         f * f / x * (2 - f * (1 - f * (4.0 / 3 - f * (3 - f * 10.0))));
}

double ad_inv_logit(double x) {
  if (x >= 0) return 1 / (1 + exp(-x));
  double e = exp(x);
  return e / (1 + e);
}

double ad_log1p_exp(double x) {
  if (x > 0) return x + log1p(exp(-x));
  return log1p(exp(x));
}

double ad_log_inv_logit(double x) { return -ad_log1p_exp(-x); }

double ad_log1m_exp(double x) {
  if (x > 0) return NAN;
  /* log(-expm1(x)) is accurate near 0, log1p(-exp(x)) far below */
  return x > -0.693147180559945309 ? log(-expm1(x)) : log1p(-exp(x));
}

double ad_lbeta(double a, double b) { return lgamma(a) + lgamma(b) - lgamma(a + b); }

double ad_lchoose(double n, double k) {
  return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}
