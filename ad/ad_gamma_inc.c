/* SPDX-License-Identifier: MIT */
/* The regularized incomplete gamma functions on the log scale, with their
** partials in the shape a and in x: the power series of P(a, x) below
** x = a + 1, the continued fraction of Q(a, x) above it (modified Lentz),
** each differentiated in a alongside its terms. See ad_special.h. */
#include <math.h>
#include "ad_special.h"

/* log P by its series: P = x^a e^-x / Gamma(a+1) * S, S = sum_k c_k,
** c_0 = 1, c_k = c_{k-1} x / (a + k); *dla = d log P / da. */
static double log_p_series(double a, double x, double *dla) {
  double c = 1, s = 1, D = 0, sd = 0;
  for (int k = 1; k < 100000; k++) {
    c *= x / (a + k);
    D -= 1 / (a + k);        /* d log c_k / da */
    s += c;
    sd += c * D;
    if (c <= 1e-17 * s && fabs(c * D) <= 1e-17 * fabs(sd) + 1e-300) break;
  }
  *dla = log(x) - ad_digamma(a + 1) + sd / s;
  return a * log(x) - x - lgamma(a + 1) + log(s);
}

/* log Q by its continued fraction: Q = x^a e^-x / Gamma(a) * h, h the
** fraction 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- ...))); derivatives in a
** carried through Lentz's recurrences. */
static double log_q_fraction(double a, double x, double *dla) {
  const double tiny = 1e-300;
  double b = x + 1 - a, db = -1;
  double c = 1 / tiny, dc = 0;
  double d = 1 / b, dd = -db / (b * b);
  double h = d, dh = dd;
  for (int i = 1; i < 100000; i++) {
    double an = -i * (i - a), dan = i;
    b += 2;
    /* d = 1 / (an d + b), c = b + an / c */
    double den = an * d + b, dden = dan * d + an * dd + db;
    if (fabs(den) < tiny) den = tiny;
    double cn = b + an / c, dcn = db + dan / c - an * dc / (c * c);
    if (fabs(cn) < tiny) cn = tiny;
    d = 1 / den;
    dd = -dden / (den * den);
    c = cn;
    dc = dcn;
    double del = d * c, ddel = dd * c + d * dc;
    dh = dh * del + h * ddel;
    h *= del;
    if (fabs(del - 1) <= 1e-16 && fabs(ddel) <= 1e-16 * fabs(dh / h) + 1e-300) break;
  }
  *dla = log(x) - ad_digamma(a) + dh / h;
  return a * log(x) - x - lgamma(a) + log(h);
}

double ad_log_gamma_inc(double a, double x, int upper, double *da, double *dx) {
  double ga = 0, gx = 0, r;
  if (isnan(a) || isnan(x) || !(a > 0) || x < 0) {
    r = ga = gx = NAN;
  } else if (x == 0) {
    r = upper ? 0 : -INFINITY;
    ga = 0;
    gx = upper ? 0 : INFINITY;
  } else if (x == INFINITY) {
    r = upper ? -INFINITY : 0;
  } else {
    /* d/dx P = x^(a-1) e^-x / Gamma(a) = -d/dx Q */
    double lpdf = (a - 1) * log(x) - x - lgamma(a), l, dl;
    if (x < a + 1) {
      l = log_p_series(a, x, &dl);
      if (!upper) {
        r = l, ga = dl, gx = exp(lpdf - l);
      } else { /* Q = 1 - P */
        double P = exp(l);
        r = log1p(-P);
        ga = -P * dl / (1 - P);
        gx = -exp(lpdf - r);
      }
    } else {
      l = log_q_fraction(a, x, &dl);
      if (upper) {
        r = l, ga = dl, gx = -exp(lpdf - l);
      } else {
        double Q = exp(l);
        r = log1p(-Q);
        ga = -Q * dl / (1 - Q);
        gx = exp(lpdf - r);
      }
    }
  }
  if (da) *da = ga;
  if (dx) *dx = gx;
  return r;
}
