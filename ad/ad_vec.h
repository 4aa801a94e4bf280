/* SPDX-License-Identifier: MIT */
/*
** Vectorized operations: each call records ONE node whose partials are all
** computed at record time (one entry per (output, input) pair that is not
** structurally zero). Arguments are described by ad_arg: a scalar or a vector,
** either a contiguous range of vars or constants. Length-1 arguments
** broadcast; other lengths must agree (AD_ESIZE otherwise).
**
** Ownership: constant vectors (ad_arg.c) are BORROWED until the innermost
** region ends (second-order passes read them again). Copy them with
** ad_tape_alloc first if they may change or die sooner.
*/
#ifndef AD_VEC_H
#define AD_VEC_H

#include "ad_tape.h"

typedef struct ad_arg {
  size_t n;          /* length; 1 = scalar, broadcasts */
  ad_idx var;        /* first var (vars var..var+n-1), or AD_NOVAR: constant */
  const double *c;   /* constant values (n of them), or NULL: cval */
  double cval;       /* a scalar constant */
} ad_arg;

static inline ad_arg ad_arg_var(ad_idx v, size_t n) {
  ad_arg a = {n, v, NULL, 0};
  return a;
}
static inline ad_arg ad_arg_const(const double *c, size_t n) {
  ad_arg a = {n, AD_NOVAR, c, 0};
  return a;
}
static inline ad_arg ad_arg_scalar(double c) {
  ad_arg a = {1, AD_NOVAR, NULL, c};
  return a;
}
static inline int ad_arg_isvar(const ad_arg *a) { return a->var != AD_NOVAR; }
/* Element i (broadcasting a scalar). */
static inline double ad_arg_at(const ad_tape *t, const ad_arg *a, size_t i) {
  size_t k = a->n > 1 ? i : 0;
  if (a->var != AD_NOVAR) return t->val[a->var + k];
  return a->c ? a->c[k] : a->cval;
}
/* Var of element i, or AD_NOVAR. */
static inline ad_idx ad_arg_varat(const ad_arg *a, size_t i) {
  if (a->var == AD_NOVAR) return AD_NOVAR;
  return a->var + (ad_idx)(a->n > 1 ? i : 0);
}

/* Common length of nargs arguments (each 1 or n), or AD_ESIZE; *bad gets the
** index of the first argument that disagrees. */
int ad_args_length(size_t nargs, const ad_arg *args, size_t *n, size_t *bad);
/* 0, or AD_ESTALE if a var argument does not exist on the tape. */
int ad_args_check(const ad_tape *t, size_t nargs, const ad_arg *args);

/* Node data kept in the arena for the second-order passes. */
typedef struct ad_vec_aux {
  int dist;          /* AD_OP_DIST: which density */
  int nargs;
  size_t n;          /* element count */
  ad_arg args[4];
} ad_vec_aux;

/* out[i] = op(x[i]) for a var vector x (n outputs, contiguous from *out). */
int ad_vec_unary(ad_tape *t, int op, ad_arg x, ad_idx *out);
/* out[i] = op(a[i], b[i]), broadcasting; at least one must be vars.
** *n gets the output length. */
int ad_vec_binary(ad_tape *t, int op, ad_arg a, ad_arg b, ad_idx *out, size_t *n);
/* A contiguous vector from n scalars: var[i] != AD_NOVAR takes that var,
** otherwise the constant val[i]. */
int ad_pack(ad_tape *t, size_t n, const ad_idx *var, const double *val, ad_idx *out);
/* Reductions: *value always; *y the var, or AD_NOVAR when nothing is a var. */
int ad_sum(ad_tape *t, ad_arg x, double *value, ad_idx *y);
int ad_dot(ad_tape *t, ad_arg a, ad_arg b, double *value, ad_idx *y);
int ad_log_sum_exp(ad_tape *t, ad_arg x, double *value, ad_idx *y);
/* out = A x, A constant m-by-n column-major (borrowed, see above), x a var
** vector of length n; m outputs from *out. */
int ad_matvec(ad_tape *t, size_t m, size_t n, const double *A, ad_arg x, ad_idx *out);

#endif
