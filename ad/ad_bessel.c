/* SPDX-License-Identifier: MIT */
/* The modified Bessel functions of the first kind I0 and I1 (von Mises
** densities): their power series up to x = 30, where every term is positive
** and the sum is accurate to rounding, and the asymptotic series of
** e^-x I_nu(x) beyond. See ad_special.h. */
#include <math.h>
#include "ad_special.h"

#define SERIES_MAX 30.0
#define LOG_2PI 1.83787706640934548356

/* sum_k (x^2/4)^k / (k! (k+nu)!) for nu = 0, 1 */
static double series(double x, int nu) {
  double q = 0.25 * x * x, t = 1, s = 1;
  for (int k = 1; k < 500; k++) {
    t *= q / (k * (double)(k + nu));
    s += t;
    if (t < 1e-17 * s) break;
  }
  return s;
}

/* e^-x sqrt(2 pi x) I_nu(x) for large x: 1 - (mu-1)/(8x) + (mu-1)(mu-9)/(2!(8x)^2) - ...
** with mu = 4 nu^2 */
static double asymptotic(double x, int nu) {
  double mu = 4.0 * nu * nu, t = 1, s = 1;
  for (int k = 1; k < 30; k++) {
    double odd = 2 * k - 1;
    t *= -(mu - odd * odd) / (k * 8 * x);
    s += t;
    if (fabs(t) < 1e-17 * s) break;
  }
  return s;
}

double ad_log_bessel_i0(double x) {
  x = fabs(x);
  if (isnan(x)) return x;
  if (x <= SERIES_MAX) return log(series(x, 0));
  return x - 0.5 * (LOG_2PI + log(x)) + log(asymptotic(x, 0));
}

double ad_bessel_i1_i0(double x) {
  double ax = fabs(x), r;
  if (isnan(x)) return x;
  if (ax <= SERIES_MAX) r = 0.5 * ax * series(ax, 1) / series(ax, 0);
  else r = asymptotic(ax, 1) / asymptotic(ax, 0);
  return x < 0 ? -r : r;
}
