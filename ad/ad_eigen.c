/* SPDX-License-Identifier: MIT */
/* Eigenvalues and eigenvectors of a symmetric matrix by cyclic Jacobi
** rotations (plain values, no tape): accurate to rounding for the small
** matrices models use, and simple. See ad_mat.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ad_error.h"
#include "ad_mat.h"

int ad_eigen_sym_values(const double *A, size_t n, double *lambda, double *V) {
  double *a = malloc(n * n * sizeof *a);
  if (!a) return AD_ENOMEM;
  for (size_t j = 0; j < n; j++) /* the symmetric part: (A + A') / 2 */
    for (size_t i = 0; i < n; i++) a[i + j * n] = 0.5 * (A[i + j * n] + A[j + i * n]);
  for (size_t j = 0; j < n; j++)
    for (size_t i = 0; i < n; i++) V[i + j * n] = i == j;
  for (int sweep = 0; sweep < 100; sweep++) {
    double off = 0, diag = 0;
    for (size_t j = 0; j < n; j++)
      for (size_t i = 0; i < n; i++) {
        if (i != j) off += a[i + j * n] * a[i + j * n];
        else diag += a[i + j * n] * a[i + j * n];
      }
    if (off <= 1e-30 * diag || off == 0) break;
    for (size_t p = 0; p < n; p++)
      for (size_t q = p + 1; q < n; q++) {
        double apq = a[p + q * n];
        if (apq == 0) continue;
        double theta = (a[q + q * n] - a[p + p * n]) / (2 * apq);
        double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
        double c = 1 / sqrt(t * t + 1), s = t * c;
        for (size_t k = 0; k < n; k++) { /* columns p, q */
          double akp = a[k + p * n], akq = a[k + q * n];
          a[k + p * n] = c * akp - s * akq;
          a[k + q * n] = s * akp + c * akq;
        }
        for (size_t k = 0; k < n; k++) { /* rows p, q */
          double apk = a[p + k * n], aqk = a[q + k * n];
          a[p + k * n] = c * apk - s * aqk;
          a[q + k * n] = s * apk + c * aqk;
        }
        for (size_t k = 0; k < n; k++) {
          double vkp = V[k + p * n], vkq = V[k + q * n];
          V[k + p * n] = c * vkp - s * vkq;
          V[k + q * n] = s * vkp + c * vkq;
        }
      }
  }
  /* ascending, as Stan's eigenvalues_sym; vectors with a positive largest entry */
  for (size_t i = 0; i < n; i++) lambda[i] = a[i + i * n];
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && lambda[j - 1] > lambda[j]; j--) {
      double tl = lambda[j - 1];
      lambda[j - 1] = lambda[j], lambda[j] = tl;
      for (size_t k = 0; k < n; k++) {
        double tv = V[k + (j - 1) * n];
        V[k + (j - 1) * n] = V[k + j * n], V[k + j * n] = tv;
      }
    }
  for (size_t j = 0; j < n; j++) {
    size_t big = 0;
    for (size_t k = 1; k < n; k++) if (fabs(V[k + j * n]) > fabs(V[big + j * n])) big = k;
    if (V[big + j * n] < 0)
      for (size_t k = 0; k < n; k++) V[k + j * n] = -V[k + j * n];
  }
  free(a);
  return 0;
}
