/* SPDX-License-Identifier: MIT */
/* Finite differences and tolerances shared by the ad unit tests. */
#ifndef TEST_AD_FD_H
#define TEST_AD_FD_H

#include <math.h>

/* order-6 central difference of f at x */
static inline double fd6(double (*f)(double, const void *), double x, const void *ctx) {
  double h = 1e-3 * fmax(1, fabs(x));
  return (45 * (f(x + h, ctx) - f(x - h, ctx)) - 9 * (f(x + 2 * h, ctx) - f(x - 2 * h, ctx)) +
          (f(x + 3 * h, ctx) - f(x - 3 * h, ctx))) / (60 * h);
}

/* |a - b| <= tol * max(1, |a|, |b|) */
static inline int close_to(double a, double b, double tol) {
  return fabs(a - b) <= tol * fmax(1, fmax(fabs(a), fabs(b)));
}

#endif
