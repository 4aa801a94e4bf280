/* SPDX-License-Identifier: MIT */
/* The node data of the matrix operations (ad_mat.c, ad_chol.c) and their
** second-order sweeps (ad_mat_second.c), internal to the ad/ core. */
#ifndef AD_MAT_IMPL_H
#define AD_MAT_IMPL_H

#include "ad_mat.h"

typedef struct mm_aux {    /* C = A B */
  ad_custom c;
  size_t m, k, n;
  ad_arg A, B;
} mm_aux;

typedef struct chol_aux {  /* L = cholesky(A) */
  ad_custom c;
  size_t n;
  ad_idx A;
  double *work; /* 2 n^2: row-major copies of L and of its adjoint */
} chol_aux;

typedef struct tri_aux {   /* X = L \ B or L' \ B */
  ad_custom c;
  size_t n, k;
  int trans;
  ad_arg L, B;
  double *work; /* n k */
} tri_aux;

typedef struct logdet_aux { size_t n; } logdet_aux;
typedef struct mvn_aux { size_t n; ad_arg y, mu, L; } mvn_aux;

/* The values of an argument (contiguous, or one for a scalar). */
static inline const double *ad_mat_vals(const ad_tape *t, const ad_arg *a) {
  if (a->var != AD_NOVAR) return t->val + a->var;
  return a->c ? a->c : &a->cval;
}

/* ad_chol.c: dL, the tangent of L = cholesky(A) for the tangent dA (column-major) */
void ad_chol_tangent_values(const double *L, const double *dA, size_t n, double *D);

/* ad_mat_second.c: the second-order hooks of the custom nodes */
int ad_mm_tangent(const ad_tape *t, const ad_node *nd, double *tdot, size_t K);
int ad_mm_adjoint_dot(const ad_tape *t, const ad_node *nd, const double *tdot, double *adot, size_t K);
int ad_tri_tangent(const ad_tape *t, const ad_node *nd, double *tdot, size_t K);
int ad_tri_adjoint_dot(const ad_tape *t, const ad_node *nd, const double *tdot, double *adot, size_t K);
int ad_chol_tangent(const ad_tape *t, const ad_node *nd, double *tdot, size_t K);
int ad_chol_adjoint_dot(const ad_tape *t, const ad_node *nd, const double *tdot, double *adot, size_t K);
/* and of the nodes with stored partials: the directional derivatives of
** the partials (entry e0 + i at pent[i K + k]) given the tangents tdot */
int ad_logdet_pdot(const ad_tape *t, const ad_node *nd, const double *tdot, size_t K, double *pent);
int ad_mvn_pdot(const ad_tape *t, const ad_node *nd, const double *tdot, size_t K, double *pent);

#endif
