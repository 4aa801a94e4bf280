/* SPDX-License-Identifier: MIT */
/* The generator and the basic variates (uniform, normal, gamma, beta,
** Poisson, binomial). See ad_rng.h. */
#include <math.h>
#include "ad_rng.h"
#include "ad_special.h"

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void ad_rng_seed(ad_rng *r, const int64_t *key, size_t n) {
  uint64_t x = 0x243F6A8885A308D3ull; /* pi's digits: a fixed start */
  for (size_t i = 0; i < n; i++) {
    x ^= (uint64_t)key[i];
    x = splitmix(&x);
  }
  for (int k = 0; k < 4; k++) r->s[k] = splitmix(&x);
  r->has_spare = 0;
  r->spare = 0;
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ad_rng_next(ad_rng *r) {
  uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return res;
}

double ad_rng_uniform(ad_rng *r) { return ((double)(ad_rng_next(r) >> 11) + 0.5) * 0x1p-53; }

double ad_rng_std_normal(ad_rng *r) {
  if (r->has_spare) {
    r->has_spare = 0;
    return r->spare;
  }
  double rad = sqrt(-2 * log(ad_rng_uniform(r))), t = 2 * 3.14159265358979323846 * ad_rng_uniform(r);
  r->spare = rad * sin(t);
  r->has_spare = 1;
  return rad * cos(t);
}

/* Marsaglia & Tsang (2000) for a >= 1 */
static double gamma_mt(ad_rng *r, double a) {
  double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
  for (;;) {
    double x = ad_rng_std_normal(r), v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = ad_rng_uniform(r), x2 = x * x;
    if (u < 1 - 0.0331 * x2 * x2) return d * v;
    if (log(u) < 0.5 * x2 + d * (1 - v + log(v))) return d * v;
  }
}

/* log of a gamma(a, 1) variate (exact for small a, where the variate underflows) */
static double log_gamma1(ad_rng *r, double a) {
  if (a >= 1) return log(gamma_mt(r, a));
  return log(gamma_mt(r, a + 1)) + log(ad_rng_uniform(r)) / a;
}

double ad_rng_gamma1(ad_rng *r, double a) {
  if (a >= 1) return gamma_mt(r, a);
  return exp(log_gamma1(r, a));
}

double ad_rng_beta1(ad_rng *r, double a, double b) {
  double lx = log_gamma1(r, a), ly = log_gamma1(r, b);
  double m = lx > ly ? lx : ly;
  return exp(lx - (m + log(exp(lx - m) + exp(ly - m))));
}

/* Hormann (1993), the transformed rejection PTRS, for lambda >= 10 */
static double poisson_ptrs(ad_rng *r, double lam) {
  double slam = sqrt(lam), loglam = log(lam);
  double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    double U = ad_rng_uniform(r) - 0.5, V = ad_rng_uniform(r), us = 0.5 - fabs(U);
    double k = floor((2 * a / us + b) * U + lam + 0.43);
    if (us >= 0.07 && V <= vr) return k;
    if (k < 0 || (us < 0.013 && V > us)) continue;
    if (log(V) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1)) return k;
  }
}

double ad_rng_poisson1(ad_rng *r, double lam) {
  if (lam == 0) return 0;
  if (lam >= 10) return poisson_ptrs(r, lam);
  double p = exp(-lam), s = p, u = ad_rng_uniform(r), k = 0;
  while (u > s && k < 1000) { /* inversion */
    k++;
    p *= lam / k;
    s += p;
  }
  return k;
}

/* Knuth (TAOCP 3.4.1): split a large n by a beta-distributed order
** statistic until it is small, then count successes. */
double ad_rng_binomial1(ad_rng *r, double n, double p) {
  double count = 0;
  while (n > 40) {
    double a = 1 + floor(n / 2), b = n + 1 - a, X = ad_rng_beta1(r, a, b);
    if (X >= p) {
      n = a - 1;
      p = p / X;
    } else {
      count += a;
      n = b - 1;
      p = (p - X) / (1 - X);
    }
  }
  for (double i = 0; i < n; i++) count += ad_rng_uniform(r) < p;
  return count;
}
