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
