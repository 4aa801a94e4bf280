/* SPDX-License-Identifier: MIT */
/* The Cholesky factor and triangular solves as custom nodes (ad_mat.h):
** values by column-oriented loops (contiguous inner loops on column-major
** storage), adjoints by the reverse of the unblocked algorithm (Murray
** 2016; Stan's cholesky_decompose) on row-major copies, tangents by
** differentiating the forward loops. */
#include <math.h>
#include <string.h>
#include "ad_mat_impl.h"

/* ------------------------------------------------------------- values */

void ad_chol_values(const double *A, size_t n, double *L) {
  for (size_t j = 0; j < n; j++) {
    double *c = L + j * n;
    memset(c, 0, j * sizeof(double));
    for (size_t i = j; i < n; i++) c[i] = A[i + j * n];
    for (size_t k = 0; k < j; k++) { /* left-looking: column j -= L(j,k) column k */
      double ljk = L[j + k * n];
      const double *lk = L + k * n;
      for (size_t i = j; i < n; i++) c[i] -= lk[i] * ljk;
    }
    double d = sqrt(c[j]); /* NaN when A is not positive definite */
    c[j] = d;
    for (size_t i = j + 1; i < n; i++) c[i] /= d;
  }
}

void ad_trisolve_values(const double *L, size_t n, size_t k, int trans, double *B) {
  for (size_t c = 0; c < k; c++) {
    double *x = B + c * n;
    if (!trans) { /* forward substitution, column by column of L */
      for (size_t m = 0; m < n; m++) {
        double xm = x[m] /= L[m + m * n];
        const double *lm = L + m * n;
        for (size_t i = m + 1; i < n; i++) x[i] -= lm[i] * xm;
      }
    } else { /* back substitution with L' : row i of L' is column i of L */
      for (size_t i = n; i-- > 0;) {
        const double *li = L + i * n;
        double s = x[i];
        for (size_t m = i + 1; m < n; m++) s -= li[m] * x[m];
        x[i] = s / li[i];
      }
    }
  }
}

/* ----------------------------------------------------------- cholesky */

/* wi -= a lj, wj -= a li over k < j (rows i != j: no aliasing) */
static void axpy2(double *restrict wi, double *restrict wj, const double *restrict li,
                  const double *restrict lj, double a, size_t j) {
  for (size_t k = 0; k < j; k++) {
    wi[k] -= a * lj[k];
    wj[k] -= a * li[k];
  }
}

static void chol_reverse(ad_tape *t, const ad_node *nd) {
  const chol_aux *x = nd->u.aux;
  size_t n = x->n;
  const double *L = t->val + nd->out, *aL = t->adj + nd->out;
  double *Lr = x->work, *W = x->work + n * n;
  for (size_t k = 0; k < n; k++)
    for (size_t i = k; i < n; i++) {
      Lr[i * n + k] = L[i + k * n];
      W[i * n + k] = aL[i + k * n];
    }
  for (size_t i = n; i-- > 0;) {
    double *Wi = W + i * n;
    const double *Li = Lr + i * n;
    for (size_t j = i + 1; j-- > 0;) {
      double *Wj = W + j * n;
      const double *Lj = Lr + j * n;
      if (i == j) {
        double a = Wi[i] = 0.5 * Wi[i] / Li[i];
        for (size_t k = 0; k < i; k++) Wi[k] -= 2 * a * Li[k];
      } else {
        double a = Wi[j] /= Lj[j];
        Wj[j] -= a * Li[j];
        axpy2(Wi, Wj, Li, Lj, a, j);
      }
    }
  }
  double *aA = t->adj + x->A; /* W now holds the adjoint of A's lower triangle */
  for (size_t j = 0; j < n; j++)
    for (size_t i = j; i < n; i++) aA[i + j * n] += W[i * n + j];
}

/* the tangent of L: the forward sweep of the column algorithm, differentiated */
void ad_chol_tangent_values(const double *L, const double *dA, size_t n, double *D) {
  for (size_t j = 0; j < n; j++) {
    double *d = D + j * n;
    memset(d, 0, j * sizeof(double));
    for (size_t i = j; i < n; i++) d[i] = dA[i + j * n];
    for (size_t k = 0; k < j; k++) {
      double ljk = L[j + k * n], dljk = D[j + k * n];
      const double *lk = L + k * n, *dk = D + k * n;
      for (size_t i = j; i < n; i++) d[i] -= dk[i] * ljk + lk[i] * dljk;
    }
    double ljj = L[j + j * n], dljj = d[j] / (2 * ljj);
    d[j] = dljj;
    for (size_t i = j + 1; i < n; i++) d[i] = (d[i] - L[i + j * n] * dljj) / ljj;
  }
}

static void chol_forward(const ad_tape *t, const ad_node *nd, double *tan) {
  const chol_aux *x = nd->u.aux;
  size_t n = x->n;
  double *D = x->work; /* dL, column-major */
  ad_chol_tangent_values(t->val + nd->out, tan + x->A, n, D);
  double *dL = tan + nd->out;
  for (size_t i = 0; i < n * n; i++) dL[i] += D[i];
}

static const ad_custom_ops CHOL_OPS = {chol_reverse, chol_forward, ad_chol_tangent, ad_chol_adjoint_dot};

int ad_cholesky(ad_tape *t, size_t n, ad_arg A, double *cval, ad_idx *out) {
  int rc;
  if (A.n != n * n) return AD_ESIZE;
  if ((rc = ad_args_check(t, 1, &A))) return rc;
  *out = AD_NOVAR;
  if (!ad_arg_isvar(&A)) {
    ad_chol_values(A.c ? A.c : &A.cval, n, cval);
    return 0;
  }
  if (n && n > AD_MAXIDX / n) return AD_ETOOBIG;
  if ((rc = ad_reserve(t, n * n, 0, 1))) return rc;
  chol_aux *x = ad_tape_alloc(t, sizeof *x);
  double *work = ad_tape_alloc(t, 2 * n * n * sizeof(double));
  if (!x || !work) return AD_ENOMEM;
  *x = (chol_aux){{&CHOL_OPS, {A.var, AD_NOVAR}, {A.n, 0}}, n, A.var, work};
  ad_idx o = t->nvar;
  ad_chol_values(t->val + A.var, n, t->val + o);
  ad_push_node(t, AD_OP_CHOL, AD_NF_CUSTOM, o, (ad_idx)(n * n), t->nent, 0, x);
  t->nvar += (ad_idx)(n * n);
  *out = o;
  return 0;
}

/* ----------------------------------------------------------- trisolve */

static const double *argvals(const ad_tape *t, const ad_arg *a) {
  if (a->var != AD_NOVAR) return t->val + a->var;
  return a->c ? a->c : &a->cval;
}

/* X = op(L)^-1 B: G = op(L)^-T adjX; adjB += G; adjL -= lower(G X') for
** L X = B, lower(X G') for L' X = B. */
static void tri_reverse(ad_tape *t, const ad_node *nd) {
  const tri_aux *x = nd->u.aux;
  size_t n = x->n, k = x->k;
  const double *L = argvals(t, &x->L), *X = t->val + nd->out;
  double *G = x->work;
  memcpy(G, t->adj + nd->out, n * k * sizeof(double));
  ad_trisolve_values(L, n, k, !x->trans, G);
  if (ad_arg_isvar(&x->B)) {
    double *aB = t->adj + x->B.var;
    for (size_t i = 0; i < n * k; i++) aB[i] += G[i];
  }
  if (ad_arg_isvar(&x->L)) {
    const double *P = x->trans ? X : G, *Q = x->trans ? G : X;
    double *aL = t->adj + x->L.var;
    for (size_t c = 0; c < k; c++)
      for (size_t j = 0; j < n; j++) {
        double q = Q[j + c * n];
        const double *p = P + c * n;
        double *col = aL + j * n;
        for (size_t i = j; i < n; i++) col[i] -= p[i] * q;
      }
  }
}

/* dX = op(L)^-1 (dB - op(dL) X) */
static void tri_forward(const ad_tape *t, const ad_node *nd, double *tan) {
  const tri_aux *x = nd->u.aux;
  size_t n = x->n, k = x->k;
  const double *L = argvals(t, &x->L), *X = t->val + nd->out;
  double *R = x->work;
  if (ad_arg_isvar(&x->B)) memcpy(R, tan + x->B.var, n * k * sizeof(double));
  else memset(R, 0, n * k * sizeof(double));
  if (ad_arg_isvar(&x->L)) {
    const double *dL = tan + x->L.var;
    for (size_t c = 0; c < k; c++)
      for (size_t j = 0; j < n; j++) {
        const double *col = dL + j * n; /* dL(i, j), i >= j */
        if (!x->trans) {
          double xj = X[j + c * n];
          for (size_t i = j; i < n; i++) R[i + c * n] -= col[i] * xj;
        } else {
          double s = 0; /* (dL' X)(j) = sum_{i >= j} dL(i, j) X(i) */
          for (size_t i = j; i < n; i++) s += col[i] * X[i + c * n];
          R[j + c * n] -= s;
        }
      }
  }
  ad_trisolve_values(L, n, k, x->trans, R);
  double *dX = tan + nd->out;
  for (size_t i = 0; i < n * k; i++) dX[i] += R[i];
}

static const ad_custom_ops TRI_OPS = {tri_reverse, tri_forward, ad_tri_tangent, ad_tri_adjoint_dot};

int ad_trisolve(ad_tape *t, size_t n, size_t k, ad_arg L, ad_arg B, int trans, double *cval,
                ad_idx *out) {
  ad_arg lb[2] = {L, B};
  int rc;
  if (L.n != n * n || B.n != n * k) return AD_ESIZE;
  if ((rc = ad_args_check(t, 2, lb))) return rc;
  *out = AD_NOVAR;
  if (!ad_arg_isvar(&L) && !ad_arg_isvar(&B)) {
    memcpy(cval, argvals(t, &B), n * k * sizeof(double));
    ad_trisolve_values(argvals(t, &L), n, k, trans, cval);
    return 0;
  }
  if (k && n > AD_MAXIDX / k) return AD_ETOOBIG;
  if ((rc = ad_reserve(t, n * k, 0, 1))) return rc;
  tri_aux *x = ad_tape_alloc(t, sizeof *x);
  double *work = ad_tape_alloc(t, n * k * sizeof(double));
  if (!x || !work) return AD_ENOMEM;
  *x = (tri_aux){{&TRI_OPS, {L.var, B.var}, {L.n, B.n}}, n, k, trans != 0, L, B, work};
  ad_idx o = t->nvar;
  memcpy(t->val + o, argvals(t, &B), n * k * sizeof(double));
  ad_trisolve_values(argvals(t, &L), n, k, trans, t->val + o);
  ad_push_node(t, AD_OP_TRISOLVE, AD_NF_CUSTOM, o, (ad_idx)(n * k), t->nent, 0, x);
  t->nvar += (ad_idx)(n * k);
  *out = o;
  return 0;
}
