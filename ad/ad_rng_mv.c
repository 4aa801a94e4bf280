/* SPDX-License-Identifier: MIT */
/* Multivariate draws: dirichlet, categorical, multinomial, multivariate
** normal and t on a Cholesky factor, the LKJ Cholesky factor (the C-vine of
** Lewandowski, Kurowicka & Joe 2009: canonical partial correlations from
** betas), the Wishart by Bartlett's decomposition. See ad_rng.h. */
#include <math.h>
#include <string.h>
#include "ad_error.h"
#include "ad_rng.h"

int ad_rng_dirichlet(ad_rng *r, size_t K, const double *alpha, double *out) {
  double s = 0;
  for (size_t k = 0; k < K; k++) {
    if (!(alpha[k] > 0 && isfinite(alpha[k]))) return AD_EARG;
    out[k] = ad_rng_gamma1(r, alpha[k]);
    s += out[k];
  }
  if (!(s > 0)) { /* every gamma underflowed (tiny alphas): one of them wins */
    double t = ad_rng_uniform(r);
    size_t k = (size_t)(t * (double)K);
    for (size_t j = 0; j < K; j++) out[j] = j == k;
    return 0;
  }
  for (size_t k = 0; k < K; k++) out[k] /= s;
  return 0;
}

int ad_rng_categorical(ad_rng *r, size_t K, const double *theta, double *out) {
  double s = 0;
  for (size_t k = 0; k < K; k++) {
    if (!(theta[k] >= 0)) return AD_EARG;
    s += theta[k];
  }
  if (K == 0 || fabs(s - 1) > 1e-8) return AD_EARG;
  double u = ad_rng_uniform(r) * s, c = 0;
  for (size_t k = 0; k < K; k++) {
    c += theta[k];
    if (u < c) {
      *out = (double)(k + 1);
      return 0;
    }
  }
  *out = (double)K;
  return 0;
}

int ad_rng_multinomial(ad_rng *r, size_t K, const double *theta, double N, double *out) {
  double s = 0, rest = 1;
  for (size_t k = 0; k < K; k++) {
    if (!(theta[k] >= 0)) return AD_EARG;
    s += theta[k];
  }
  if (K == 0 || fabs(s - 1) > 1e-8 || !(N >= 0 && N == floor(N))) return AD_EARG;
  for (size_t k = 0; k < K; k++) { /* conditional binomials */
    double p = k + 1 == K ? 1 : (rest > 0 ? theta[k] / rest : 0);
    out[k] = N > 0 ? ad_rng_binomial1(r, N, p > 1 ? 1 : p) : 0;
    N -= out[k];
    rest -= theta[k];
  }
  return 0;
}

int ad_rng_multi_normal_cholesky(ad_rng *r, size_t n, const double *mu, const double *L, double *out) {
  for (size_t i = 0; i < n; i++) out[i] = ad_rng_std_normal(r);
  for (size_t i = n; i-- > 0;) { /* out = mu + L z in place: row i reads z[0..i] */
    double s = mu[i];
    for (size_t j = 0; j <= i; j++) s += L[i + j * n] * out[j];
    out[i] = s;
  }
  return 0;
}

int ad_rng_multi_student_t_cholesky(ad_rng *r, size_t n, double nu, const double *mu, const double *L,
                                    double *out) {
  if (!(nu > 0)) return AD_EARG;
  double w = sqrt(nu / (2 * ad_rng_gamma1(r, 0.5 * nu)));
  for (size_t i = 0; i < n; i++) out[i] = w * ad_rng_std_normal(r);
  for (size_t i = n; i-- > 0;) {
    double s = mu[i];
    for (size_t j = 0; j <= i; j++) s += L[i + j * n] * out[j];
    out[i] = s;
  }
  return 0;
}

int ad_rng_lkj_corr_cholesky(ad_rng *r, size_t K, double eta, double *L) {
  if (!(eta > 0) || K == 0) return AD_EARG;
  memset(L, 0, K * K * sizeof *L);
  /* row i's 1 - sum of squares so far, kept in the upper triangle (row 0,
  ** column i) until the end */
  double *acc = L;
  for (size_t i = 1; i < K; i++) acc[i * K] = 1;
  double alpha = eta + 0.5 * (double)(K - 1);
  L[0] = 1;
  for (size_t j = 0; j + 1 < K; j++) { /* column j: partial correlations of rows below */
    alpha -= 0.5;
    if (j > 0) L[j + j * K] = sqrt(acc[j * K]);
    for (size_t i = j + 1; i < K; i++) {
      double z = 2 * ad_rng_beta1(r, alpha, alpha) - 1;
      L[i + j * K] = z * sqrt(acc[i * K]);
      acc[i * K] *= 1 - z * z;
    }
  }
  if (K > 1) L[(K - 1) * (K + 1)] = sqrt(acc[(K - 1) * K]);
  for (size_t i = 1; i < K; i++) acc[i * K] = 0;
  return 0;
}

int ad_rng_wishart_cholesky(ad_rng *r, size_t n, double nu, const double *L, double *W, double *work) {
  if (!(nu > (double)n - 1)) return AD_EARG;
  double *A = work, *B = work + n * n;
  memset(A, 0, n * n * sizeof *A);
  for (size_t i = 0; i < n; i++) {
    A[i + i * n] = sqrt(2 * ad_rng_gamma1(r, 0.5 * (nu - (double)i)));
    for (size_t j = 0; j < i; j++) A[i + j * n] = ad_rng_std_normal(r);
  }
  for (size_t i = 0; i < n; i++) /* B = L A, lower */
    for (size_t j = 0; j < n; j++) {
      double s = 0;
      for (size_t k = j; k <= i; k++) s += L[i + k * n] * A[k + j * n];
      B[i + j * n] = j <= i ? s : 0;
    }
  for (size_t i = 0; i < n; i++) /* W = B B' */
    for (size_t j = 0; j <= i; j++) {
      double s = 0;
      for (size_t k = 0; k <= j; k++) s += B[i + k * n] * B[j + k * n];
      W[i + j * n] = W[j + i * n] = s;
    }
  return 0;
}
