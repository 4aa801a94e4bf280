/* SPDX-License-Identifier: MIT */
/* Matrix-vector and matrix-matrix products, the log-determinant, the
** multi-normal density on a Cholesky factor and adding to a diagonal. See
** ad_mat.h; the Cholesky factor and triangular solves are in ad_chol.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ad_mat_impl.h"

#define HALF_LOG_2PI 0.91893853320467274178

/* The values of an argument: contiguous (a vector) or one (a scalar). */
static const double *vals(const ad_tape *t, const ad_arg *a) {
  if (a->var != AD_NOVAR) return t->val + a->var;
  return a->c ? a->c : &a->cval;
}

/* ------------------------------------------------------------- matvec */

int ad_matvec2(ad_tape *t, size_t m, size_t n, ad_arg A, ad_arg x, double *cval,
               ad_idx *out) {
  ad_arg ax[2] = {A, x};
  int rc, va = ad_arg_isvar(&A), vx = ad_arg_isvar(&x);
  if (A.n != m * n || x.n != n) return AD_ESIZE;
  if ((rc = ad_args_check(t, 2, ax))) return rc;
  *out = AD_NOVAR;
  const double *a = vals(t, &A), *xv = vals(t, &x);
  if (!va && !vx) {
    memset(cval, 0, m * sizeof(double));
    for (size_t j = 0; j < n; j++)
      for (size_t i = 0; i < m; i++) cval[i] += a[i + j * m] * xv[j];
    return 0;
  }
  if (!va) return ad_matvec(t, m, n, a, x, out);
  if (n && m > AD_MAXIDX / (2 * n)) return AD_ETOOBIG;
  if ((rc = ad_reserve(t, m, m * n * (size_t)(va + vx), 1))) return rc;
  ad_vec_aux *aux = ad_tape_alloc(t, sizeof *aux);
  if (!aux) return AD_ENOMEM;
  memset(aux, 0, sizeof *aux);
  aux->nargs = 2;
  aux->n = m;
  memcpy(aux->args, ax, sizeof ax);
  a = vals(t, &A), xv = vals(t, &x); /* the tape may have moved */
  /* per output i: entries for A's row i (partials x_j), then for x (A_ij) */
  ad_idx o = t->nvar, e = t->nent;
  for (size_t i = 0; i < m; i++) {
    double s = 0;
    for (size_t j = 0; j < n; j++) s += a[i + j * m] * xv[j];
    t->val[o + i] = s;
    for (size_t j = 0; j < n; j++) {
      t->ent[e].out = o + (ad_idx)i; t->ent[e].in = A.var + (ad_idx)(i + j * m);
      t->par[e++] = xv[j];
    }
    if (vx)
      for (size_t j = 0; j < n; j++) {
        t->ent[e].out = o + (ad_idx)i; t->ent[e].in = x.var + (ad_idx)j;
        t->par[e++] = a[i + j * m];
      }
  }
  ad_push_node(t, AD_OP_MATVEC2, AD_NF_AUX, o, (ad_idx)m, t->nent, e - t->nent, aux);
  t->nvar += (ad_idx)m;
  t->nent = e;
  *out = o;
  return 0;
}

/* ------------------------------------------------------------- matmul */

/* C (m-by-n) += A B */
static void mm_values(const double *A, const double *B, size_t m, size_t k, size_t n,
                      double *C) {
  for (size_t j = 0; j < n; j++)
    for (size_t l = 0; l < k; l++) {
      double b = B[l + j * k];
      if (b == 0) continue;
      const double *al = A + l * m;
      double *cj = C + j * m;
      for (size_t i = 0; i < m; i++) cj[i] += al[i] * b;
    }
}

/* adjA += adjC B', adjB += A' adjC */
static void mm_reverse(ad_tape *t, const ad_node *nd) {
  const mm_aux *x = nd->u.aux;
  size_t m = x->m, k = x->k, n = x->n;
  const double *A = vals(t, &x->A), *B = vals(t, &x->B), *aC = t->adj + nd->out;
  if (ad_arg_isvar(&x->A)) {
    double *aA = t->adj + x->A.var;
    for (size_t j = 0; j < n; j++)
      for (size_t l = 0; l < k; l++) {
        double b = B[l + j * k];
        double *al = aA + l * m;
        const double *cj = aC + j * m;
        for (size_t i = 0; i < m; i++) al[i] += cj[i] * b;
      }
  }
  if (ad_arg_isvar(&x->B)) {
    double *aB = t->adj + x->B.var;
    for (size_t j = 0; j < n; j++)
      for (size_t l = 0; l < k; l++) {
        const double *al = A + l * m, *cj = aC + j * m;
        double s = 0;
        for (size_t i = 0; i < m; i++) s += al[i] * cj[i];
        aB[l + j * k] += s;
      }
  }
}

/* dC += dA B + A dB */
static void mm_forward(const ad_tape *t, const ad_node *nd, double *tan) {
  const mm_aux *x = nd->u.aux;
  const double *A = vals(t, &x->A), *B = vals(t, &x->B);
  double *dC = tan + nd->out;
  if (ad_arg_isvar(&x->A)) mm_values(tan + x->A.var, B, x->m, x->k, x->n, dC);
  if (ad_arg_isvar(&x->B)) mm_values(A, tan + x->B.var, x->m, x->k, x->n, dC);
}

static const ad_custom_ops MM_OPS = {mm_reverse, mm_forward, ad_mm_tangent, ad_mm_adjoint_dot};

int ad_matmul(ad_tape *t, size_t m, size_t k, size_t n, ad_arg A, ad_arg B, double *cval,
              ad_idx *out) {
  ad_arg ab[2] = {A, B};
  int rc, va = ad_arg_isvar(&A), vb = ad_arg_isvar(&B);
  if (A.n != m * k || B.n != k * n) return AD_ESIZE;
  if ((rc = ad_args_check(t, 2, ab))) return rc;
  *out = AD_NOVAR;
  if (!va && !vb) {
    memset(cval, 0, m * n * sizeof(double));
    mm_values(vals(t, &A), vals(t, &B), m, k, n, cval);
    return 0;
  }
  if (n && m > AD_MAXIDX / n) return AD_ETOOBIG;
  if ((rc = ad_reserve(t, m * n, 0, 1))) return rc;
  mm_aux *x = ad_tape_alloc(t, sizeof *x);
  if (!x) return AD_ENOMEM;
  *x = (mm_aux){{&MM_OPS, {A.var, B.var}, {A.n, B.n}}, m, k, n, A, B};
  ad_idx o = t->nvar;
  memset(t->val + o, 0, m * n * sizeof(double));
  mm_values(vals(t, &A), vals(t, &B), m, k, n, t->val + o);
  ad_push_node(t, AD_OP_MATMUL, AD_NF_CUSTOM, o, (ad_idx)(m * n), t->nent, 0, x);
  t->nvar += (ad_idx)(m * n);
  *out = o;
  return 0;
}

/* ----------------------------------------------------- log-determinant */

/* log |det A| and A^-1 (into inv, n*n) by LU with partial pivoting of a
** copy in lu (n*n) with pivots piv (n). */
static double logdet_inverse(const double *A, size_t n, double *lu, size_t *piv, double *inv) {
  memcpy(lu, A, n * n * sizeof(double));
  double ld = 0;
  for (size_t j = 0; j < n; j++) {
    size_t p = j;
    for (size_t i = j + 1; i < n; i++)
      if (fabs(lu[i + j * n]) > fabs(lu[p + j * n])) p = i;
    piv[j] = p;
    if (p != j)
      for (size_t c = 0; c < n; c++) {
        double tmp = lu[j + c * n];
        lu[j + c * n] = lu[p + c * n];
        lu[p + c * n] = tmp;
      }
    double d = lu[j + j * n];
    ld += log(fabs(d));
    for (size_t i = j + 1; i < n; i++) lu[i + j * n] /= d;
    for (size_t c = j + 1; c < n; c++) {
      double u = lu[j + c * n];
      for (size_t i = j + 1; i < n; i++) lu[i + c * n] -= lu[i + j * n] * u;
    }
  }
  /* inv = U^-1 L^-1 P: solve for the columns of the identity, permuted */
  for (size_t c = 0; c < n; c++) {
    double *x = inv + c * n;
    memset(x, 0, n * sizeof(double));
    x[c] = 1;
    for (size_t j = 0; j < n; j++) { /* apply P (the row swaps, in order) */
      double tmp = x[j];
      x[j] = x[piv[j]];
      x[piv[j]] = tmp;
    }
    for (size_t j = 0; j < n; j++) /* L y = x, unit diagonal */
      for (size_t i = j + 1; i < n; i++) x[i] -= lu[i + j * n] * x[j];
    for (size_t j = n; j-- > 0;) { /* U z = y */
      x[j] /= lu[j + j * n];
      for (size_t i = 0; i < j; i++) x[i] -= lu[i + j * n] * x[j];
    }
  }
  return ld;
}

int ad_log_determinant(ad_tape *t, size_t n, ad_arg A, double *value, ad_idx *y) {
  int rc;
  if (A.n != n * n) return AD_ESIZE;
  if ((rc = ad_args_check(t, 1, &A))) return rc;
  *y = AD_NOVAR;
  double *buf = malloc((2 * n * n + 1) * sizeof(double) + n * sizeof(size_t));
  if (!buf) return AD_ENOMEM;
  double *lu = buf, *inv = buf + n * n;
  size_t *piv = (size_t *)(inv + n * n + 1);
  *value = logdet_inverse(vals(t, &A), n, lu, piv, inv);
  if (ad_arg_isvar(&A)) {
    if ((rc = ad_reserve(t, 1, n * n, 1))) {
      free(buf);
      return rc;
    }
    ad_idx o = t->nvar++, e = t->nent;
    t->val[o] = *value;
    for (size_t j = 0; j < n; j++) /* d/dA_ij = (A^-1)_ji */
      for (size_t i = 0; i < n; i++, e++) {
        t->ent[e].out = o; t->ent[e].in = A.var + (ad_idx)(i + j * n);
        t->par[e] = inv[j + i * n];
      }
    logdet_aux *aux = ad_tape_alloc(t, sizeof *aux);
    if (!aux) {
      free(buf);
      return AD_ENOMEM;
    }
    aux->n = n;
    ad_push_node(t, AD_OP_LOGDET, 0, o, 1, t->nent, e - t->nent, aux);
    t->nent = e;
    *y = o;
  }
  free(buf);
  return 0;
}

/* ------------------------------------------- multi_normal_cholesky_lpdf */

int ad_mvn_cholesky(ad_tape *t, size_t n, ad_arg y, ad_arg mu, ad_arg L, double *value,
                    ad_idx *out) {
  ad_arg a[3] = {y, mu, L};
  int rc;
  if (n == 0 || y.n % n || L.n != n * n) return AD_ESIZE;
  size_t N = y.n / n;
  if (mu.n != 1 && mu.n != n && mu.n != y.n) return AD_ESIZE;
  if ((rc = ad_args_check(t, 3, a))) return rc;
  *out = AD_NOVAR;
  /* z = L^-1 (y - mu) and alpha = L^-T z, per column */
  double *z = malloc(2 * y.n * sizeof(double));
  if (!z) return AD_ENOMEM;
  double *al = z + y.n;
  const double *yv = vals(t, &y), *mv = vals(t, &mu), *Lv = vals(t, &L);
  for (size_t i = 0; i < y.n; i++) z[i] = yv[i] - mv[mu.n == 1 ? 0 : i % mu.n];
  ad_trisolve_values(Lv, n, N, 0, z);
  memcpy(al, z, y.n * sizeof(double));
  ad_trisolve_values(Lv, n, N, 1, al);
  double lp = 0, ld = 0;
  for (size_t i = 0; i < y.n; i++) lp -= 0.5 * z[i] * z[i];
  for (size_t i = 0; i < n; i++) ld += log(Lv[i + i * n]);
  lp -= (double)N * (ld + (double)n * HALF_LOG_2PI);
  *value = lp;
  int vy = ad_arg_isvar(&y), vm = ad_arg_isvar(&mu), vl = ad_arg_isvar(&L);
  if (!vy && !vm && !vl) {
    free(z);
    return 0;
  }
  size_t ne = (vy ? y.n : 0) + (vm ? mu.n : 0) + (vl ? n * (n + 1) / 2 : 0);
  if ((rc = ad_reserve(t, 1, ne, 1))) {
    free(z);
    return rc;
  }
  Lv = vals(t, &L); /* the tape may have moved */
  ad_idx o = t->nvar++, e = t->nent;
  t->val[o] = lp;
  if (vy)
    for (size_t i = 0; i < y.n; i++, e++) {
      t->ent[e].out = o; t->ent[e].in = y.var + (ad_idx)i; t->par[e] = -al[i];
    }
  if (vm)
    for (size_t i = 0; i < mu.n; i++, e++) {
      double s = 0;
      for (size_t r = i; r < y.n; r += mu.n) s += al[r];
      t->ent[e].out = o; t->ent[e].in = mu.var + (ad_idx)i; t->par[e] = s;
    }
  if (vl) /* -N/L_ii on the diagonal + sum_c alpha_c z_c' (lower) */
    for (size_t j = 0; j < n; j++)
      for (size_t i = j; i < n; i++, e++) {
        double s = i == j ? -(double)N / Lv[i + i * n] : 0;
        for (size_t c = 0; c < N; c++) s += al[i + c * n] * z[j + c * n];
        t->ent[e].out = o; t->ent[e].in = L.var + (ad_idx)(i + j * n); t->par[e] = s;
      }
  mvn_aux *aux = ad_tape_alloc(t, sizeof *aux);
  if (!aux) {
    free(z);
    return AD_ENOMEM;
  }
  *aux = (mvn_aux){n, y, mu, L};
  ad_push_node(t, AD_OP_MVN_CHOL, 0, o, 1, t->nent, e - t->nent, aux);
  t->nent = e;
  *out = o;
  free(z);
  return 0;
}

/* ------------------------------------------------------------ add_diag */

int ad_add_diag(ad_tape *t, size_t n, ad_arg A, ad_arg d, double *cval, ad_idx *out) {
  ad_arg ad[2] = {A, d};
  int rc, va = ad_arg_isvar(&A), vd = ad_arg_isvar(&d);
  if (A.n != n * n || (d.n != 1 && d.n != n)) return AD_ESIZE;
  if ((rc = ad_args_check(t, 2, ad))) return rc;
  *out = AD_NOVAR;
  double *res = cval;
  if (va || vd) {
    if (n && n > AD_MAXIDX / n) return AD_ETOOBIG;
    if ((rc = ad_reserve(t, n * n, (va ? n * n : 0) + (vd ? n : 0), 1))) return rc;
    res = t->val + t->nvar;
  }
  memcpy(res, vals(t, &A), n * n * sizeof(double));
  for (size_t i = 0; i < n; i++) res[i + i * n] += ad_arg_at(t, &d, i);
  if (!va && !vd) return 0;
  ad_idx o = t->nvar, e = t->nent;
  if (va)
    for (size_t i = 0; i < n * n; i++, e++) {
      t->ent[e].out = o + (ad_idx)i; t->ent[e].in = A.var + (ad_idx)i; t->par[e] = 1;
    }
  if (vd)
    for (size_t i = 0; i < n; i++, e++) {
      t->ent[e].out = o + (ad_idx)(i + i * n); t->ent[e].in = ad_arg_varat(&d, i);
      t->par[e] = 1;
    }
  /* a sum of copies: linear, as pack is for the Hessian passes */
  ad_push_node(t, AD_OP_PACK, 0, o, (ad_idx)(n * n), t->nent, e - t->nent, NULL);
  t->nvar += (ad_idx)(n * n);
  t->nent = e;
  *out = o;
  return 0;
}
