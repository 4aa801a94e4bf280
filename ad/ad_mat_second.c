/* SPDX-License-Identifier: MIT */
/* Second order through the matrix operations (forward-over-reverse, K
** directions at a time, see ad_hess.h): the tangents of a product, a
** triangular solve and the Cholesky factor, the tangents of their
** adjoints, and the directional derivatives of the stored partials of the
** log-determinant and the multi-normal density. Each direction works on
** contiguous copies of the blocks it reads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ad_mat_impl.h"

/* the K-wide rows of var v: dot[(v + 1) K + k] */
static void gather(const double *dot, size_t K, size_t k, const ad_arg *a, size_t n, double *out) {
  if (a->var == AD_NOVAR) {
    memset(out, 0, n * sizeof *out);
    return;
  }
  for (size_t i = 0; i < n; i++) out[i] = dot[((size_t)a->var + i + 1) * K + k];
}
static void gather_v(const double *dot, size_t K, size_t k, ad_idx v, size_t n, double *out) {
  for (size_t i = 0; i < n; i++) out[i] = dot[((size_t)v + i + 1) * K + k];
}
static void scatter_add(double *dot, size_t K, size_t k, ad_idx v, size_t n, const double *in) {
  for (size_t i = 0; i < n; i++) dot[((size_t)v + i + 1) * K + k] += in[i];
}

/* C (m x n) += A B (A m x p, B p x n) */
static void mm(const double *A, const double *B, size_t m, size_t p, size_t n, double *C) {
  for (size_t j = 0; j < n; j++)
    for (size_t l = 0; l < p; l++) {
      double b = B[l + j * p];
      if (b == 0) continue;
      for (size_t i = 0; i < m; i++) C[i + j * m] += A[i + l * m] * b;
    }
}
/* C (m x p) += X B' (X m x n, B p x n) */
static void mm_bt(const double *X, const double *B, size_t m, size_t p, size_t n, double *C) {
  for (size_t j = 0; j < n; j++)
    for (size_t l = 0; l < p; l++) {
      double b = B[l + j * p];
      for (size_t i = 0; i < m; i++) C[i + l * m] += X[i + j * m] * b;
    }
}
/* C (p x n) += A' X (A m x p, X m x n) */
static void mm_at(const double *A, const double *X, size_t m, size_t p, size_t n, double *C) {
  for (size_t j = 0; j < n; j++)
    for (size_t l = 0; l < p; l++) {
      double s = 0;
      for (size_t i = 0; i < m; i++) s += A[i + l * m] * X[i + j * m];
      C[l + j * p] += s;
    }
}

/* ------------------------------------------------------------- matmul */

int ad_mm_tangent(const ad_tape *t, const ad_node *nd, double *tdot, size_t K) {
  const mm_aux *x = nd->u.aux;
  size_t m = x->m, p = x->k, n = x->n;
  double *buf = malloc((m * p + p * n + m * n) * sizeof(double));
  if (!buf) return AD_ENOMEM;
  double *dA = buf, *dB = dA + m * p, *dC = dB + p * n;
  const double *A = ad_mat_vals(t, &x->A), *B = ad_mat_vals(t, &x->B);
  for (size_t k = 0; k < K; k++) {
    gather(tdot, K, k, &x->A, m * p, dA);
    gather(tdot, K, k, &x->B, p * n, dB);
    memset(dC, 0, m * n * sizeof *dC);
    mm(dA, B, m, p, n, dC);
    mm(A, dB, m, p, n, dC);
    scatter_add(tdot, K, k, nd->out, m * n, dC);
  }
  free(buf);
  return 0;
}

/* adot A += adot C B' + adj C dB'; adot B += A' adot C + dA' adj C */
int ad_mm_adjoint_dot(const ad_tape *t, const ad_node *nd, const double *tdot, double *adot, size_t K) {
  const mm_aux *x = nd->u.aux;
  size_t m = x->m, p = x->k, n = x->n;
  double *buf = malloc((2 * m * p + 2 * p * n + m * n) * sizeof(double));
  if (!buf) return AD_ENOMEM;
  double *dA = buf, *dB = dA + m * p, *aCd = dB + p * n, *oA = aCd + m * n, *oB = oA + m * p;
  const double *A = ad_mat_vals(t, &x->A), *B = ad_mat_vals(t, &x->B), *aC = t->adj + nd->out;
  for (size_t k = 0; k < K; k++) {
    gather(tdot, K, k, &x->A, m * p, dA);
    gather(tdot, K, k, &x->B, p * n, dB);
    gather_v(adot, K, k, nd->out, m * n, aCd);
    if (ad_arg_isvar(&x->A)) {
      memset(oA, 0, m * p * sizeof *oA);
      mm_bt(aCd, B, m, p, n, oA);
      mm_bt(aC, dB, m, p, n, oA);
      scatter_add(adot, K, k, x->A.var, m * p, oA);
    }
    if (ad_arg_isvar(&x->B)) {
      memset(oB, 0, p * n * sizeof *oB);
      mm_at(A, aCd, m, p, n, oB);
      mm_at(dA, aC, m, p, n, oB);
      scatter_add(adot, K, k, x->B.var, p * n, oB);
    }
  }
  free(buf);
  return 0;
}

/* ----------------------------------------------------------- trisolve */

/* R -= op(lower dL) X, k columns */
static void sub_opL(const double *dL, const double *X, size_t n, size_t kk, int trans, double *R) {
  for (size_t c = 0; c < kk; c++)
    for (size_t j = 0; j < n; j++) {
      const double *col = dL + j * n; /* dL(i, j), i >= j */
      if (!trans) {
        double xj = X[j + c * n];
        for (size_t i = j; i < n; i++) R[i + c * n] -= col[i] * xj;
      } else {
        double s = 0;
        for (size_t i = j; i < n; i++) s += col[i] * X[i + c * n];
        R[j + c * n] -= s;
      }
    }
}

int ad_tri_tangent(const ad_tape *t, const ad_node *nd, double *tdot, size_t K) {
  const tri_aux *x = nd->u.aux;
  size_t n = x->n, kk = x->k;
  double *buf = malloc((n * n + n * kk) * sizeof(double));
  if (!buf) return AD_ENOMEM;
  double *dL = buf, *R = dL + n * n;
  const double *L = ad_mat_vals(t, &x->L), *X = t->val + nd->out;
  for (size_t k = 0; k < K; k++) { /* dX = op(L)^-1 (dB - op(dL) X) */
    gather(tdot, K, k, &x->B, n * kk, R);
    if (ad_arg_isvar(&x->L)) {
      gather(tdot, K, k, &x->L, n * n, dL);
      sub_opL(dL, X, n, kk, x->trans, R);
    }
    ad_trisolve_values(L, n, kk, x->trans, R);
    scatter_add(tdot, K, k, nd->out, n * kk, R);
  }
  free(buf);
  return 0;
}

/* G = op(L)^-T adjX; dG = op(L)^-T (adot X - op(dL)' G); adot B += dG;
** adot L -= lower(dG X' + G dX') (L X = B) or lower(dX G' + X dG') (L' X = B) */
int ad_tri_adjoint_dot(const ad_tape *t, const ad_node *nd, const double *tdot, double *adot, size_t K) {
  const tri_aux *x = nd->u.aux;
  size_t n = x->n, kk = x->k;
  double *buf = malloc((2 * n * n + 3 * n * kk) * sizeof(double));
  if (!buf) return AD_ENOMEM;
  double *dL = buf, *G = dL + n * n, *dG = G + n * kk, *dX = dG + n * kk, *oL = dX + n * kk;
  const double *L = ad_mat_vals(t, &x->L), *X = t->val + nd->out;
  memcpy(G, t->adj + nd->out, n * kk * sizeof(double));
  ad_trisolve_values(L, n, kk, !x->trans, G);
  for (size_t k = 0; k < K; k++) {
    gather_v(adot, K, k, nd->out, n * kk, dG);
    if (ad_arg_isvar(&x->L)) {
      gather(tdot, K, k, &x->L, n * n, dL);
      sub_opL(dL, G, n, kk, !x->trans, dG);
    }
    ad_trisolve_values(L, n, kk, !x->trans, dG);
    if (ad_arg_isvar(&x->B)) scatter_add(adot, K, k, x->B.var, n * kk, dG);
    if (!ad_arg_isvar(&x->L)) continue;
    gather_v(tdot, K, k, nd->out, n * kk, dX);
    const double *P1 = x->trans ? dX : dG, *Q1 = x->trans ? G : X; /* P Q' */
    const double *P2 = x->trans ? X : G, *Q2 = x->trans ? dG : dX;
    memset(oL, 0, n * n * sizeof *oL);
    for (size_t c = 0; c < kk; c++)
      for (size_t j = 0; j < n; j++) {
        double q1 = Q1[j + c * n], q2 = Q2[j + c * n];
        for (size_t i = j; i < n; i++) oL[i + j * n] -= P1[i + c * n] * q1 + P2[i + c * n] * q2;
      }
    scatter_add(adot, K, k, x->L.var, n * n, oL);
  }
  free(buf);
  return 0;
}

/* ----------------------------------------------------------- cholesky */

int ad_chol_tangent(const ad_tape *t, const ad_node *nd, double *tdot, size_t K) {
  const chol_aux *x = nd->u.aux;
  size_t n = x->n;
  double *buf = malloc(2 * n * n * sizeof(double));
  if (!buf) return AD_ENOMEM;
  double *dA = buf, *D = dA + n * n;
  for (size_t k = 0; k < K; k++) {
    gather_v(tdot, K, k, x->A, n * n, dA);
    ad_chol_tangent_values(t->val + nd->out, dA, n, D);
    scatter_add(tdot, K, k, nd->out, n * n, D);
  }
  free(buf);
  return 0;
}

/* The reverse of the unblocked algorithm (ad_chol.c) with its tangent
** carried alongside: W, dW start as the adjoint of L and its tangent
** (row-major, lower), and end as the adjoint of A's lower triangle and its. */
int ad_chol_adjoint_dot(const ad_tape *t, const ad_node *nd, const double *tdot, double *adot, size_t K) {
  const chol_aux *x = nd->u.aux;
  size_t n = x->n;
  double *buf = malloc(6 * n * n * sizeof(double));
  if (!buf) return AD_ENOMEM;
  double *Lr = buf, *dLr = Lr + n * n, *W = dLr + n * n, *dW = W + n * n, *tmp = dW + n * n, *out = tmp + n * n;
  const double *L = t->val + nd->out, *aL = t->adj + nd->out;
  for (size_t k = 0; k < K; k++) {
    gather_v(tdot, K, k, nd->out, n * n, tmp);
    for (size_t c = 0; c < n; c++)
      for (size_t r = c; r < n; r++) Lr[r * n + c] = L[r + c * n], dLr[r * n + c] = tmp[r + c * n];
    gather_v(adot, K, k, nd->out, n * n, tmp);
    memset(W, 0, n * n * sizeof *W);
    memset(dW, 0, n * n * sizeof *dW);
    for (size_t c = 0; c < n; c++)
      for (size_t r = c; r < n; r++) W[r * n + c] = aL[r + c * n], dW[r * n + c] = tmp[r + c * n];
    for (size_t i = n; i-- > 0;) {
      double *Wi = W + i * n, *dWi = dW + i * n;
      const double *Li = Lr + i * n, *dLi = dLr + i * n;
      for (size_t j = i + 1; j-- > 0;) {
        double *Wj = W + j * n, *dWj = dW + j * n;
        const double *Lj = Lr + j * n, *dLj = dLr + j * n;
        if (i == j) {
          double w = Wi[i], dw = dWi[i], l = Li[i], dl = dLi[i];
          double a = 0.5 * w / l, da = 0.5 * (dw / l - w * dl / (l * l));
          Wi[i] = a, dWi[i] = da;
          for (size_t q = 0; q < i; q++) {
            Wi[q] -= 2 * a * Li[q];
            dWi[q] -= 2 * (da * Li[q] + a * dLi[q]);
          }
        } else {
          double l = Lj[j], dl = dLj[j];
          double a = Wi[j] / l, da = (dWi[j] - a * dl) / l;
          Wi[j] = a, dWi[j] = da;
          Wj[j] -= a * Li[j];
          dWj[j] -= da * Li[j] + a * dLi[j];
          for (size_t q = 0; q < j; q++) {
            Wi[q] -= a * Lj[q];
            Wj[q] -= a * Li[q];
            dWi[q] -= da * Lj[q] + a * dLj[q];
            dWj[q] -= da * Li[q] + a * dLi[q];
          }
        }
      }
    }
    memset(out, 0, n * n * sizeof *out);
    for (size_t c = 0; c < n; c++)
      for (size_t r = c; r < n; r++) out[r + c * n] = dW[r * n + c];
    scatter_add(adot, K, k, x->A, n * n, out);
  }
  free(buf);
  return 0;
}

/* ------------------------------------------------ stored-partial nodes */

/* log |det A|: partials P = A^-T (entry (i, j) at e0 + i + j n), and
** dP = -P dA' P */
int ad_logdet_pdot(const ad_tape *t, const ad_node *nd, const double *tdot, size_t K, double *pent) {
  const logdet_aux *x = nd->u.aux;
  size_t n = x->n;
  double *buf = malloc(3 * n * n * sizeof(double));
  if (!buf) return AD_ENOMEM;
  double *P = buf, *dA = P + n * n, *T = dA + n * n;
  ad_idx A = t->ent[nd->e0].in;
  for (size_t i = 0; i < n * n; i++) P[i] = t->par[nd->e0 + i];
  for (size_t k = 0; k < K; k++) {
    gather_v(tdot, K, k, A, n * n, dA);
    /* T = P dA' (T_il = sum_m P_im dA_lm), then dP = -T P */
    memset(T, 0, n * n * sizeof *T);
    for (size_t l = 0; l < n; l++)
      for (size_t m = 0; m < n; m++) {
        double a = dA[l + m * n];
        for (size_t i = 0; i < n; i++) T[i + l * n] += P[i + m * n] * a;
      }
    for (size_t j = 0; j < n; j++)
      for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t l = 0; l < n; l++) s += T[i + l * n] * P[l + j * n];
        pent[(i + j * n) * K + k] = -s;
      }
  }
  free(buf);
  return 0;
}

/* multi_normal_cholesky: z = L^-1 (y - mu), alpha = L^-T z per column;
** partials -alpha (y), sum of alpha (mu), -N/L_ii on the diagonal plus
** sum_c alpha z' (L, lower). Tangents: dz = L^-1 (dy - dmu - dL z),
** dalpha = L^-T (dz - dL' alpha). */
int ad_mvn_pdot(const ad_tape *t, const ad_node *nd, const double *tdot, size_t K, double *pent) {
  const mvn_aux *x = nd->u.aux;
  size_t n = x->n, ny = x->y.n, N = ny / n, nm = x->mu.n;
  double *buf = malloc((5 * ny + nm + n * n) * sizeof(double));
  if (!buf) return AD_ENOMEM;
  double *z = buf, *al = z + ny, *dz = al + ny, *da = dz + ny, *dy = da + ny, *dm = dy + ny, *dL = dm + nm;
  const double *yv = ad_mat_vals(t, &x->y), *mv = ad_mat_vals(t, &x->mu), *L = ad_mat_vals(t, &x->L);
  for (size_t i = 0; i < ny; i++) z[i] = yv[i] - mv[nm == 1 ? 0 : i % nm];
  ad_trisolve_values(L, n, N, 0, z);
  memcpy(al, z, ny * sizeof *al);
  ad_trisolve_values(L, n, N, 1, al);
  int vy = ad_arg_isvar(&x->y), vm = ad_arg_isvar(&x->mu), vl = ad_arg_isvar(&x->L);
  for (size_t k = 0; k < K; k++) {
    gather(tdot, K, k, &x->y, ny, dy);
    gather(tdot, K, k, &x->mu, nm, dm);
    gather(tdot, K, k, &x->L, n * n, dL);
    for (size_t i = 0; i < ny; i++) dz[i] = dy[i] - dm[nm == 1 ? 0 : i % nm];
    if (vl) sub_opL(dL, z, n, N, 0, dz);
    ad_trisolve_values(L, n, N, 0, dz);
    memcpy(da, dz, ny * sizeof *da);
    if (vl) sub_opL(dL, al, n, N, 1, da);
    ad_trisolve_values(L, n, N, 1, da);
    size_t e = 0;
    if (vy)
      for (size_t i = 0; i < ny; i++, e++) pent[e * K + k] = -da[i];
    if (vm)
      for (size_t i = 0; i < nm; i++, e++) {
        double s = 0;
        for (size_t r = i; r < ny; r += nm) s += da[r];
        pent[e * K + k] = s;
      }
    if (vl)
      for (size_t j = 0; j < n; j++)
        for (size_t i = j; i < n; i++, e++) {
          double s = i == j ? (double)N * dL[i + i * n] / (L[i + i * n] * L[i + i * n]) : 0;
          for (size_t c = 0; c < N; c++) s += da[i + c * n] * z[j + c * n] + al[i + c * n] * dz[j + c * n];
          pent[e * K + k] = s;
        }
  }
  free(buf);
  return 0;
}
