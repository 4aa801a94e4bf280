/* SPDX-License-Identifier: MIT */
/* Vectorized operations (one node per call). See ad_vec.h. */
#include <math.h>
#include <string.h>
#include "ad_scalar.h"
#include "ad_vec.h"

int ad_args_length(size_t nargs, const ad_arg *args, size_t *n, size_t *bad) {
  size_t len = 1;
  for (size_t k = 0; k < nargs; k++)
    if (args[k].n != 1) { len = args[k].n; break; }
  for (size_t k = 0; k < nargs; k++)
    if (args[k].n != 1 && args[k].n != len) {
      if (bad) *bad = k;
      return AD_ESIZE;
    }
  *n = len;
  return 0;
}

int ad_args_check(const ad_tape *t, size_t nargs, const ad_arg *args) {
  for (size_t k = 0; k < nargs; k++) {
    if (args[k].var == AD_NOVAR) continue;
    if (args[k].n > t->nvar || args[k].var > t->nvar - args[k].n) return AD_ESTALE;
  }
  return 0;
}

static ad_vec_aux *save_args(ad_tape *t, size_t nargs, const ad_arg *args, size_t n) {
  ad_vec_aux *x = ad_tape_alloc(t, sizeof *x);
  if (!x) return NULL;
  memset(x, 0, sizeof *x);
  x->nargs = (int)nargs;
  x->n = n;
  memcpy(x->args, args, nargs * sizeof *args);
  return x;
}

int ad_vec_unary(ad_tape *t, int op, ad_arg x, ad_idx *out) {
  if (!AD_IS_UNARY(op) || !ad_arg_isvar(&x)) return AD_EARG;
  int rc = ad_args_check(t, 1, &x);
  if (rc || (rc = ad_reserve(t, x.n, x.n, 1))) return rc;
  ad_idx o = t->nvar, e0 = t->nent;
  for (size_t i = 0; i < x.n; i++) {
    t->val[o + i] = ad_unary_eval(op, t->val[x.var + i], &t->par[e0 + i]);
    t->ent[e0 + i].out = o + (ad_idx)i;
    t->ent[e0 + i].in = x.var + (ad_idx)i;
  }
  t->nvar += (ad_idx)x.n;
  t->nent += (ad_idx)x.n;
  ad_push_node(t, op, 0, o, (ad_idx)x.n, e0, (ad_idx)x.n, NULL);
  *out = o;
  return 0;
}

int ad_vec_binary(ad_tape *t, int op, ad_arg a, ad_arg b, ad_idx *out, size_t *nout) {
  ad_arg ab[2] = {a, b};
  size_t n, bad;
  int rc;
  if (!AD_IS_BINARY(op) || (!ad_arg_isvar(&a) && !ad_arg_isvar(&b))) return AD_EARG;
  if ((rc = ad_args_length(2, ab, &n, &bad)) || (rc = ad_args_check(t, 2, ab)))
    return rc;
  int va = ad_arg_isvar(&a), vb = ad_arg_isvar(&b);
  size_t per = (size_t)va + (size_t)vb;
  if (n > AD_MAXIDX / 2) return AD_ETOOBIG;
  if ((rc = ad_reserve(t, n, n * per, 1))) return rc;
  ad_vec_aux *aux = save_args(t, 2, ab, n);
  if (!aux) return AD_ENOMEM;
  ad_idx o = t->nvar, e = t->nent;
  for (size_t i = 0; i < n; i++) {
    double pa, pb;
    t->val[o + i] = ad_binary_eval(op, ad_arg_at(t, &a, i), ad_arg_at(t, &b, i), &pa, &pb);
    if (va) {
      t->ent[e].out = o + (ad_idx)i; t->ent[e].in = ad_arg_varat(&a, i); t->par[e++] = pa;
    }
    if (vb) {
      t->ent[e].out = o + (ad_idx)i; t->ent[e].in = ad_arg_varat(&b, i); t->par[e++] = pb;
    }
  }
  int flags = AD_NF_AUX | (va ? 0 : AD_NF_ACONST) | (vb ? 0 : AD_NF_BCONST) |
              (a.n > 1 ? AD_NF_AVEC : 0) | (b.n > 1 ? AD_NF_BVEC : 0);
  ad_push_node(t, op, flags, o, (ad_idx)n, t->nent, e - t->nent, aux);
  t->nvar += (ad_idx)n;
  t->nent = e;
  *out = o;
  *nout = n;
  return 0;
}

int ad_pack(ad_tape *t, size_t n, const ad_idx *var, const double *val, ad_idx *out) {
  int rc;
  for (size_t i = 0; i < n; i++)
    if (var[i] != AD_NOVAR && var[i] >= t->nvar) return AD_ESTALE;
  if ((rc = ad_reserve(t, n, n, 1))) return rc;
  ad_idx o = t->nvar, e = t->nent;
  for (size_t i = 0; i < n; i++) {
    if (var[i] == AD_NOVAR) {
      t->val[o + i] = val[i];
      continue;
    }
    t->val[o + i] = t->val[var[i]];
    t->ent[e].out = o + (ad_idx)i; t->ent[e].in = var[i]; t->par[e++] = 1;
  }
  ad_push_node(t, AD_OP_PACK, 0, o, (ad_idx)n, t->nent, e - t->nent, NULL);
  t->nvar += (ad_idx)n;
  t->nent = e;
  *out = o;
  return 0;
}

/* A one-output reduce node over var vector x with partials p[i]. */
static int reduce_node(ad_tape *t, int op, double value, const ad_arg *x,
                       void *aux, ad_idx *y) {
  ad_idx o = t->nvar++, e0 = t->nent;
  t->val[o] = value;
  for (size_t i = 0; i < x->n; i++) {
    t->ent[e0 + i].out = o;
    t->ent[e0 + i].in = x->var + (ad_idx)i;
  }
  t->nent += (ad_idx)x->n;
  ad_push_node(t, op, 0, o, 1, e0, (ad_idx)x->n, aux);
  *y = o;
  return 0;
}

int ad_sum(ad_tape *t, ad_arg x, double *value, ad_idx *y) {
  int rc = ad_args_check(t, 1, &x);
  if (rc) return rc;
  double s = 0;
  for (size_t i = 0; i < x.n; i++) s += ad_arg_at(t, &x, i);
  *value = s;
  *y = AD_NOVAR;
  if (!ad_arg_isvar(&x)) return 0;
  if ((rc = ad_reserve(t, 1, x.n, 1))) return rc;
  for (size_t i = 0; i < x.n; i++) t->par[t->nent + i] = 1;
  return reduce_node(t, AD_OP_SUM, s, &x, NULL, y);
}

int ad_log_sum_exp(ad_tape *t, ad_arg x, double *value, ad_idx *y) {
  int rc = ad_args_check(t, 1, &x);
  if (rc) return rc;
  double m = -INFINITY, s = 0;
  for (size_t i = 0; i < x.n; i++) {
    double v = ad_arg_at(t, &x, i);
    if (v > m || isnan(v)) m = v;
  }
  if (isfinite(m))
    for (size_t i = 0; i < x.n; i++) s += exp(ad_arg_at(t, &x, i) - m);
  double lse = isfinite(m) ? m + log(s) : m;
  *value = lse;
  *y = AD_NOVAR;
  if (!ad_arg_isvar(&x)) return 0;
  if ((rc = ad_reserve(t, 1, x.n, 1))) return rc;
  for (size_t i = 0; i < x.n; i++)
    t->par[t->nent + i] = isfinite(m) ? exp(t->val[x.var + i] - lse) : NAN;
  return reduce_node(t, AD_OP_LSE, lse, &x, NULL, y);
}

int ad_dot(ad_tape *t, ad_arg a, ad_arg b, double *value, ad_idx *y) {
  ad_arg ab[2] = {a, b};
  int rc;
  if (a.n != b.n) return AD_ESIZE;
  if ((rc = ad_args_check(t, 2, ab))) return rc;
  size_t n = a.n;
  double s = 0;
  for (size_t i = 0; i < n; i++) s += ad_arg_at(t, &a, i) * ad_arg_at(t, &b, i);
  *value = s;
  *y = AD_NOVAR;
  int va = ad_arg_isvar(&a), vb = ad_arg_isvar(&b);
  if (!va && !vb) return 0;
  if ((rc = ad_reserve(t, 1, n * (size_t)(va + vb), 1))) return rc;
  ad_vec_aux *aux = save_args(t, 2, ab, n);
  if (!aux) return AD_ENOMEM;
  ad_idx o = t->nvar++, e0 = t->nent, e = e0;
  t->val[o] = s;
  if (va)
    for (size_t i = 0; i < n; i++) {
      t->ent[e].out = o; t->ent[e].in = a.var + (ad_idx)i;
      t->par[e++] = ad_arg_at(t, &b, i);
    }
  if (vb)
    for (size_t i = 0; i < n; i++) {
      t->ent[e].out = o; t->ent[e].in = b.var + (ad_idx)i;
      t->par[e++] = ad_arg_at(t, &a, i);
    }
  t->nent = e;
  ad_push_node(t, AD_OP_DOT, (va ? 0 : AD_NF_ACONST) | (vb ? 0 : AD_NF_BCONST), o, 1,
            e0, e - e0, aux);
  *y = o;
  return 0;
}

int ad_matvec(ad_tape *t, size_t m, size_t n, const double *A, ad_arg x, ad_idx *out) {
  int rc;
  if (!ad_arg_isvar(&x)) return AD_EARG;
  if (x.n != n) return AD_ESIZE;
  if ((rc = ad_args_check(t, 1, &x))) return rc;
  if (n && m > AD_MAXIDX / n) return AD_ETOOBIG;
  if ((rc = ad_reserve(t, m, m * n, 1))) return rc;
  ad_idx o = t->nvar, e = t->nent;
  const double *xv = t->val + x.var;
  for (size_t i = 0; i < m; i++) {
    double s = 0;
    for (size_t j = 0; j < n; j++) {
      double aij = A[i + j * m];
      s += aij * xv[j];
      t->ent[e].out = o + (ad_idx)i; t->ent[e].in = x.var + (ad_idx)j; t->par[e++] = aij;
    }
    t->val[o + i] = s;
  }
  ad_push_node(t, AD_OP_MATVEC, 0, o, (ad_idx)m, t->nent, e - t->nent, NULL);
  t->nvar += (ad_idx)m;
  t->nent = e;
  *out = o;
  return 0;
}
