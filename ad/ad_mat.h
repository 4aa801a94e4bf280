/* SPDX-License-Identifier: MIT */
/*
** Dense matrix operations with adjoints. A matrix is an ad_arg of rows*cols
** elements in column-major order (vars or constants; constants are borrowed
** as in ad_vec.h). Each call records one node; when no argument is a var
** nothing is recorded, *out / *y is AD_NOVAR and the values go to cval
** (room for the result's elements).
**
** Products, the Cholesky factor and triangular solves are custom nodes
** (ad_tape.h): their sweeps are O(n^3) products, not stored partials. The
** scalar results (log-determinant, multi-normal density) store their
** partials. None of them has second-order information yet: ad_hvp returns
** AD_ENOSECOND_OP through them, except matvec.
**
** Only the lower triangle of a Cholesky argument and of a triangular factor
** is read (Stan's cholesky_decompose and mdivide_left_tri_low). A matrix
** that is not positive definite gives NaN factors (as log(-1) gives NaN):
** a sampler sees a non-finite density, nothing is raised.
*/
#ifndef AD_MAT_H
#define AD_MAT_H

#include "ad_vec.h"

/* y = A x, A m-by-n (vars or constants), x of length n; m outputs. */
int ad_matvec2(ad_tape *t, size_t m, size_t n, ad_arg A, ad_arg x, double *cval,
               ad_idx *out);
/* C = A B, A m-by-k, B k-by-n; m*n outputs. */
int ad_matmul(ad_tape *t, size_t m, size_t k, size_t n, ad_arg A, ad_arg B, double *cval,
              ad_idx *out);
/* L with L L' = A (n-by-n, lower triangular; the upper outputs are 0). */
int ad_cholesky(ad_tape *t, size_t n, ad_arg A, double *cval, ad_idx *out);
/* X = L \ B (trans = 0) or L' \ B (trans = 1); L n-by-n lower, B n-by-k. */
int ad_trisolve(ad_tape *t, size_t n, size_t k, ad_arg L, ad_arg B, int trans, double *cval,
                ad_idx *out);
/* log |det A| (A n-by-n, by LU with partial pivoting); partials A^-T. */
int ad_log_determinant(ad_tape *t, size_t n, ad_arg A, double *value, ad_idx *y);
/* sum_c multi_normal_cholesky_lpdf(y_c | mu_c, L): y has n*N elements (N
** columns), mu 1, n or n*N; L n-by-n lower. */
int ad_mvn_cholesky(ad_tape *t, size_t n, ad_arg y, ad_arg mu, ad_arg L, double *value,
                    ad_idx *out);
/* B = A + diag(d), A n-by-n, d of length 1 (broadcast) or n. */
int ad_add_diag(ad_tape *t, size_t n, ad_arg A, ad_arg d, double *cval, ad_idx *out);

/* Plain values (no tape), shared with the recording functions and the
** benchmarks: the lower Cholesky factor of A into L (column-major, upper
** part zeroed), and the solve of op(L) X = B in place of B. */
void ad_chol_values(const double *A, size_t n, double *L);
void ad_trisolve_values(const double *L, size_t n, size_t k, int trans, double *B);
/* ad_eigen.c: the eigenvalues (ascending) and eigenvectors (the columns of
** V, n x n) of the symmetric part of A. 0 or AD_ENOMEM. */
int ad_eigen_sym_values(const double *A, size_t n, double *lambda, double *V);

#endif
