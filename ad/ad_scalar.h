/* SPDX-License-Identifier: MIT */
/*
** Scalar operations: their values, exact first partials (stored on the tape)
** and second partials (used by the Hessian passes), and recording them.
** Domain errors follow C's math library: log(-1) is NaN, log(0) is -inf, and
** the partials are then NaN or infinite too; nothing traps.
*/
#ifndef AD_SCALAR_H
#define AD_SCALAR_H

#include <string.h>
#include "ad_tape.h"

/* y = op(x); *d1 = op'(x). */
double ad_unary_eval(int op, double x, double *d1);
/* op''(x), given y = op(x). */
double ad_unary_d2(int op, double x, double y);
/* y = op(a, b); partials *pa, *pb. */
double ad_binary_eval(int op, double a, double b, double *pa, double *pb);
/* Second partials h[0] = d2/da2, h[1] = d2/dadb, h[2] = d2/db2, given y. */
void ad_binary_d2(int op, double a, double b, double y, double h[3]);

/* Record y = op(x) for a unary op. */
int ad_unary(ad_tape *t, int op, ad_idx x, ad_idx *y);
/* Record y = op(a, b): both vars, var and constant, constant and var.
** Inline (below): add, sub, mul and div on a tape with room are a few loads
** and stores; the rest, and growing, go through ad_binary_slow_. */
static inline int ad_binary(ad_tape *t, int op, ad_idx a, ad_idx b, ad_idx *y);
static inline int ad_binary_vc(ad_tape *t, int op, ad_idx a, double b, ad_idx *y);
static inline int ad_binary_cv(ad_tape *t, int op, double a, ad_idx b, ad_idx *y);
/* The out-of-line path of the three above; code is the slot op code (op, and
** AD_SLOT_ACONST / AD_SLOT_BCONST for a constant side, whose value is c). */
int ad_binary_slow_(ad_tape *t, int code, ad_idx a, ad_idx b, double c, ad_idx *y);

/* The precomputed-gradient node: a var with value `value` and partials
** partial[k] = d value / d in[k] supplied by the caller (copied). */
int ad_precomputed(ad_tape *t, double value, size_t n, const ad_idx *in,
                   const double *partial, ad_idx *y);
/* The same with second partials hess[k*n + l] = d2 value / d in[k] d in[l]
** (copied), so the Hessian passes go through it (the map's second order). */
int ad_precomputed2(ad_tape *t, double value, size_t n, const ad_idx *in,
                    const double *partial, const double *hess, ad_idx *y);

/* ------------------------------------------------------- inline records */

/* y = op(a, b) with its partials, for the ops that have an inline path;
** 0 if op has none. */
static inline int ad_binary_fast_(int op, double a, double b, double *y,
                                  double *pa, double *pb) {
  switch (op) {
    case AD_OP_ADD: *y = a + b; *pa = 1; *pb = 1; return 1;
    case AD_OP_SUB: *y = a - b; *pa = 1; *pb = -1; return 1;
    case AD_OP_MUL: *y = a * b; *pa = b; *pb = a; return 1;
    case AD_OP_DIV: *y = a / b; *pa = 1 / b; *pb = -*y / b; return 1;
    default: return 0;
  }
}

/* Store var k = nvar: value v, operands sa, sb (stored as var + 1), partials. */
static inline void ad_record_(ad_tape *t, ad_idx k, int code, ad_idx sa,
                              ad_idx sb, double v, double pa, double pb) {
  double *val = t->val;
  ad_slot *s = t->slot + k;
  uint8_t *opk = t->op + k;
  ad_idx ab[2] = {sa, sb};
  *opk = (uint8_t)code; /* first: a byte store may alias anything */
  val[k] = v;
  memcpy(&s->a, ab, sizeof ab); /* one store for both (a and b are adjacent) */
  s->pa = pa;
  s->pb = pb;
  t->nvar = k + 1;
}

static inline int ad_binary(ad_tape *t, int op, ad_idx a, ad_idx b, ad_idx *y) {
  ad_idx k = t->nvar;
  double v, pa, pb;
  if (k == t->capvar || !ad_binary_fast_(op, t->val[a], t->val[b], &v, &pa, &pb))
    return ad_binary_slow_(t, op, a, b, 0, y);
  ad_record_(t, k, op, a + 1, b + 1, v, pa, pb);
  *y = k;
  return 0;
}

static inline int ad_binary_vc(ad_tape *t, int op, ad_idx a, double b, ad_idx *y) {
  ad_idx k = t->nvar;
  double v, pa, pb;
  if (k == t->capvar || !ad_binary_fast_(op, t->val[a], b, &v, &pa, &pb))
    return ad_binary_slow_(t, op | AD_SLOT_BCONST, a, AD_NOVAR, b, y);
  ad_record_(t, k, op | AD_SLOT_BCONST, a + 1, 0, v, pa, b);
  *y = k;
  return 0;
}

static inline int ad_binary_cv(ad_tape *t, int op, double a, ad_idx b, ad_idx *y) {
  ad_idx k = t->nvar;
  double v, pa, pb;
  if (k == t->capvar || !ad_binary_fast_(op, a, t->val[b], &v, &pa, &pb))
    return ad_binary_slow_(t, op | AD_SLOT_ACONST, AD_NOVAR, b, a, y);
  ad_record_(t, k, op | AD_SLOT_ACONST, b + 1, 0, v, pb, a);
  *y = k;
  return 0;
}

#endif
