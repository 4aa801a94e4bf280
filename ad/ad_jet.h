/* SPDX-License-Identifier: MIT */
/*
** Second-order jets: a value with its gradient and Hessian in up to four
** variables, and the arithmetic and functions the log densities use. The
** element functions (ad_dist_*.c) compute their first partials by hand (the
** fast path the tape records) and their Hessians, when asked, by writing the
** same formula once more on jets: f'' falls out of the chain rule
**   f(u): v = f(u.v), d = f' u.d, h = f'' u.d u.d' + f' u.h
** so no Hessian is derived by hand. The Hessian is packed symmetric (row k,
** column l <= k at h[k(k+1)/2 + l]).
*/
#ifndef AD_JET_H
#define AD_JET_H

#include <math.h>
#include "ad_special.h"

#define AD_JET_N 4
#define AD_JET_NH 10

typedef struct ad_jet {
  double v, d[AD_JET_N], h[AD_JET_NH];
} ad_jet;

static inline ad_jet jet_const(double c) {
  ad_jet r = {c, {0, 0, 0, 0}, {0}};
  return r;
}
/* The k-th variable at value x. */
static inline ad_jet jet_var(double x, int k) {
  ad_jet r = jet_const(x);
  r.d[k] = 1;
  return r;
}

/* f(u) given f(u.v) = v, f' = d1, f'' = d2. */
static inline ad_jet jet_chain(ad_jet u, double v, double d1, double d2) {
  ad_jet r;
  r.v = v;
  for (int k = 0; k < AD_JET_N; k++) r.d[k] = d1 * u.d[k];
  for (int k = 0, i = 0; k < AD_JET_N; k++)
    for (int l = 0; l <= k; l++, i++) r.h[i] = d2 * u.d[k] * u.d[l] + d1 * u.h[i];
  return r;
}

static inline ad_jet jet_add(ad_jet a, ad_jet b) {
  a.v += b.v;
  for (int k = 0; k < AD_JET_N; k++) a.d[k] += b.d[k];
  for (int i = 0; i < AD_JET_NH; i++) a.h[i] += b.h[i];
  return a;
}
static inline ad_jet jet_scale(ad_jet a, double c) {
  a.v *= c;
  for (int k = 0; k < AD_JET_N; k++) a.d[k] *= c;
  for (int i = 0; i < AD_JET_NH; i++) a.h[i] *= c;
  return a;
}
static inline ad_jet jet_sub(ad_jet a, ad_jet b) { return jet_add(a, jet_scale(b, -1)); }
static inline ad_jet jet_addc(ad_jet a, double c) { a.v += c; return a; }
static inline ad_jet jet_neg(ad_jet a) { return jet_scale(a, -1); }

static inline ad_jet jet_mul(ad_jet a, ad_jet b) {
  ad_jet r;
  r.v = a.v * b.v;
  for (int k = 0; k < AD_JET_N; k++) r.d[k] = a.v * b.d[k] + b.v * a.d[k];
  for (int k = 0, i = 0; k < AD_JET_N; k++)
    for (int l = 0; l <= k; l++, i++)
      r.h[i] = a.v * b.h[i] + b.v * a.h[i] + a.d[k] * b.d[l] + a.d[l] * b.d[k];
  return r;
}
static inline ad_jet jet_inv(ad_jet a) {
  double y = 1 / a.v;
  return jet_chain(a, y, -y * y, 2 * y * y * y);
}
static inline ad_jet jet_div(ad_jet a, ad_jet b) { return jet_mul(a, jet_inv(b)); }

static inline ad_jet jet_log(ad_jet a) { return jet_chain(a, log(a.v), 1 / a.v, -1 / (a.v * a.v)); }
static inline ad_jet jet_exp(ad_jet a) {
  double e = exp(a.v);
  return jet_chain(a, e, e, e);
}
static inline ad_jet jet_log1p(ad_jet a) {
  double s = 1 / (1 + a.v);
  return jet_chain(a, log1p(a.v), s, -s * s);
}
static inline ad_jet jet_expm1(ad_jet a) {
  double e = exp(a.v);
  return jet_chain(a, expm1(a.v), e, e);
}
static inline ad_jet jet_sqrt(ad_jet a) {
  double s = sqrt(a.v);
  return jet_chain(a, s, 0.5 / s, -0.25 / (s * a.v));
}
static inline ad_jet jet_square(ad_jet a) { return jet_chain(a, a.v * a.v, 2 * a.v, 2); }
/* a^c for a constant c */
static inline ad_jet jet_powc(ad_jet a, double c) {
  double p = pow(a.v, c);
  return jet_chain(a, p, c * p / a.v, c * (c - 1) * p / (a.v * a.v));
}
static inline ad_jet jet_lgamma(ad_jet a) {
  return jet_chain(a, lgamma(a.v), ad_digamma(a.v), ad_trigamma(a.v));
}
static inline ad_jet jet_digamma(ad_jet a) {
  return jet_chain(a, ad_digamma(a.v), ad_trigamma(a.v), ad_tetragamma(a.v));
}
static inline ad_jet jet_log1p_exp(ad_jet a) {
  double p = ad_inv_logit(a.v);
  return jet_chain(a, ad_log1p_exp(a.v), p, p * (1 - p));
}
static inline ad_jet jet_log_inv_logit(ad_jet a) {
  double q = ad_inv_logit(-a.v);
  return jet_chain(a, ad_log_inv_logit(a.v), q, -q * (1 - q));
}
static inline ad_jet jet_inv_logit(ad_jet a) {
  double p = ad_inv_logit(a.v);
  return jet_chain(a, p, p * (1 - p), p * (1 - p) * (1 - 2 * p));
}
static inline ad_jet jet_log1m_exp(ad_jet a) {
  double e = expm1(a.v);
  return jet_chain(a, ad_log1m_exp(a.v), -1 / expm1(-a.v), -exp(a.v) / (e * e));
}
static inline ad_jet jet_atan(ad_jet a) {
  double s = 1 + a.v * a.v;
  return jet_chain(a, atan(a.v), 1 / s, -2 * a.v / (s * s));
}
static inline ad_jet jet_cos(ad_jet a) { return jet_chain(a, cos(a.v), -sin(a.v), -cos(a.v)); }
static inline ad_jet jet_tanh(ad_jet a) {
  double t = tanh(a.v);
  return jet_chain(a, t, 1 - t * t, -2 * t * (1 - t * t));
}
/* log Phi(a) (the normal cdf): f' = r = phi/Phi, f'' = -r (a + r) */
static inline ad_jet jet_log_Phi(ad_jet a) {
  double r, f = ad_log_Phi(a.v, &r);
  return jet_chain(a, f, r, -r * (a.v + r));
}
/* log(I0(a)), the modified Bessel function of the first kind, order 0 */
static inline ad_jet jet_log_i0(ad_jet a) {
  double r = ad_bessel_i1_i0(a.v);
  return jet_chain(a, ad_log_bessel_i0(a.v), r, 1 - r / a.v - r * r);
}

/* Unpack into the 4x4 row-major Hessian h[k*4 + l] and the gradient. */
static inline void jet_out(ad_jet j, double *f, double *g, double *h) {
  *f = j.v;
  if (g)
    for (int k = 0; k < AD_JET_N; k++) g[k] = j.d[k];
  if (h)
    for (int k = 0, i = 0; k < AD_JET_N; k++)
      for (int l = 0; l <= k; l++, i++) h[k * 4 + l] = h[l * 4 + k] = j.h[i];
}

#endif
