/* SPDX-License-Identifier: MIT */
/* The normal cdf on the log scale and the regularized incomplete beta
** function with its parameter derivatives (for normal_lcdf/lccdf and
** student_t_lccdf). See ad_special.h. */
#include <math.h>
#include "ad_special.h"

#define HALF_LOG_2PI 0.91893853320467274178
#define SQRT1_2 0.70710678118654752440

double ad_log_Phi(double z, double *dz) {
  if (isnan(z)) {
    *dz = z;
    return z;
  }
  if (z > 0) { /* Phi = 1 - q: log1p keeps the upper tail q */
    double q = 0.5 * erfc(z * SQRT1_2);
    *dz = exp(-0.5 * z * z - HALF_LOG_2PI) / (1 - q);
    return log1p(-q);
  }
  if (z > -37) {
    double lp = log(0.5 * erfc(-z * SQRT1_2));
    *dz = exp(-0.5 * z * z - HALF_LOG_2PI - lp);
    return lp;
  }
  if (z == -INFINITY) {
    *dz = INFINITY;
    return -INFINITY;
  }
  /* Phi(z) = phi(z)/(-z) * S, S = 1 - 1/z^2 + 3/z^4 - 15/z^6 + ...
  ** (asymptotic; terms keep shrinking far beyond the 30 used at |z| > 37) */
  double w = 1 / (z * z), term = 1, s = 1;
  for (int k = 1; k <= 30; k++) {
    term *= -(2 * k - 1) * w;
    s += term;
  }
  *dz = -z / s;
  return -0.5 * z * z - HALF_LOG_2PI - log(-z) + log(s);
}

/* The series part of I_x(a, b) = P * sum_k c_k, P = x^a (1-x)^b / (a B(a,b)),
** c_0 = 1, c_{k+1} = c_k (a+b+k) / (a+1+k) x; with sa = sum c_k dlog c_k/da
** and sb the same in b. */
static double series(double a, double b, double x, double *sa, double *sb) {
  double c = 1, s = 1, ta = 0, tb = 0, Da = 0, Db = 0;
  for (int k = 0; k < 10000000; k++) {
    double r = (a + b + k) / (a + 1 + k) * x;
    Da += 1 / (a + b + k) - 1 / (a + 1 + k);
    Db += 1 / (a + b + k);
    c *= r;
    s += c;
    ta += c * Da;
    tb += c * Db;
    if (c * (1 + fabs(Da) + Db) <= 1e-17 * (s + fabs(ta) + tb)) break;
  }
  *sa = ta;
  *sb = tb;
  return s;
}

double ad_inc_beta(double a, double b, double x, double *da, double *db) {
  double ga = 0, gb = 0, I;
  if (isnan(a) || isnan(b) || isnan(x) || !(a > 0) || !(b > 0) || x < 0 || x > 1) {
    I = NAN;
    ga = gb = NAN;
  } else if (x == 0 || x == 1) {
    I = x;
  } else if (x > (a + 1) / (a + b + 2)) {
    /* the series converges slowly here: I_x(a,b) = 1 - I_{1-x}(b,a) */
    double gb2, ga2;
    I = 1 - ad_inc_beta(b, a, 1 - x, &gb2, &ga2);
    ga = -ga2;
    gb = -gb2;
  } else {
    double sa, sb, s = series(a, b, x, &sa, &sb);
    double lab = lgamma(a + b);
    double lp = a * log(x) + b * log1p(-x) - log(a) - (lgamma(a) + lgamma(b) - lab);
    double P = exp(lp), psab = ad_digamma(a + b);
    I = P * s;
    ga = P * (s * (log(x) - 1 / a - ad_digamma(a) + psab) + sa);
    gb = P * (s * (log1p(-x) - ad_digamma(b) + psab) + sb);
  }
  if (da) *da = ga;
  if (db) *db = gb;
  return I;
}

/* Phi^-1(p): Acklam's rational approximation (relative error ~1e-9) as a
** start, then Newton steps on log Phi (accurate in the lower tail) to full
** precision; the upper half by symmetry. */
double ad_inv_Phi(double p) {
  static const double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                              1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                              6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                              -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[4] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                              3.754408661907416e+00};
  if (isnan(p) || p < 0 || p > 1) return NAN;
  if (p == 0) return -INFINITY;
  if (p == 1) return INFINITY;
  if (p > 0.5) return -ad_inv_Phi(1 - p);
  double x;
  if (p < 0.02425) {
    double q = sqrt(-2 * log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  double lp = log(p);
  for (int k = 0; k < 4; k++) {
    double r, step = (ad_log_Phi(x, &r) - lp) / r;
    x -= step;
    if (fabs(step) <= 1e-16 * fabs(x)) break;
  }
  return x;
}

/* log I_y(a, b) (upper: log(1 - I) = log I_(1-y)(b, a)) with its partials in
** y, a, b */
void ad_log_inc_beta(int upper, double y, double a, double b, double *f, double *gy, double *ga,
                     double *gb) {
  if (y <= 0 || y >= 1) {
    int low = y <= 0;
    *f = (low != upper) ? -INFINITY : 0;
    *gy = *ga = *gb = 0;
    return;
  }
  double da, db, I;
  if (!upper) I = ad_inc_beta(a, b, y, &da, &db);
  else I = ad_inc_beta(b, a, 1 - y, &db, &da);
  double lpdf = (a - 1) * log(y) + (b - 1) * log1p(-y) - ad_lbeta(a, b);
  *f = log(I);
  *gy = (upper ? -1 : 1) * exp(lpdf - *f);
  *ga = da / I;
  *gb = db / I;
}
