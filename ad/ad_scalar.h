/*
** Scalar operations: their values, exact first partials (stored on the tape)
** and second partials (used by the Hessian passes), and recording them.
** Domain errors follow C's math library: log(-1) is NaN, log(0) is -inf, and
** the partials are then NaN or infinite too; nothing traps.
*/
#ifndef AD_SCALAR_H
#define AD_SCALAR_H

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
/* Record y = op(a, b): both vars, var and constant, constant and var. */
int ad_binary(ad_tape *t, int op, ad_idx a, ad_idx b, ad_idx *y);
int ad_binary_vc(ad_tape *t, int op, ad_idx a, double b, ad_idx *y);
int ad_binary_cv(ad_tape *t, int op, double a, ad_idx b, ad_idx *y);

/* The precomputed-gradient node: a var with value `value` and partials
** partial[k] = d value / d in[k] supplied by the caller (copied). */
int ad_precomputed(ad_tape *t, double value, size_t n, const ad_idx *in,
                   const double *partial, ad_idx *y);

#endif
