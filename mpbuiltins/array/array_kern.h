/* SPDX-License-Identifier: MIT */
/*
** Element kernels of array math (array_kern.c: element-wise and casts;
** array_kred.c: reductions and linear combinations): typed C loops run by
** the strided walker (array_iter.h), one per (operation, dtype). No Lua, no
** MPI.
**
** The arithmetic is Lua's, element by element, so that a C loop and the same
** loop written in Lua agree bit for bit:
**   - integer + - * and negation wrap modulo 2^bits (computed unsigned);
**   - integer // and % floor (Lua's luaV_idiv / luaV_mod); a zero divisor
**     stops the kernel with MPB_KERR_ZERODIV;
**   - f32 operations other than + - * / sqrt are computed in double and
**     rounded once (what a Lua loop storing into an f32 array does; for + - *
**     / and sqrt float arithmetic gives the same bits);
**   - minimum, maximum, and the min/max reductions propagate NaN;
**   - complex dtypes use array_cplx.h's arithmetic (mp.Complex's), c64 in
**     double rounded once per part; they have + - * / ^, negation, conj and
**     the float functions of <complex.h>; no order (min, max), no floor,
**     no integer or bitwise operations.
*/
#ifndef MPB_ARRAY_KERN_H
#define MPB_ARRAY_KERN_H

#include <stdint.h>

#include "array/array_iter.h"

/* Binary element-wise operations: operand 0 = operand 1 op operand 2. */
enum {
  MPB_OP_ADD, MPB_OP_SUB, MPB_OP_MUL, MPB_OP_DIV, MPB_OP_POW, MPB_OP_MOD, MPB_OP_IDIV,
  MPB_OP_MIN, MPB_OP_MAX, MPB_OP_BAND, MPB_OP_BOR, MPB_OP_BXOR, MPB_NBINOP
};
/* Unary element-wise functions: operand 0 = f(operand 1). The first six keep
** integer dtypes; the others are defined on floats only (the binding converts
** integers to f64 first). */
enum {
  MPB_FN_NEG, MPB_FN_ABS, MPB_FN_BNOT, MPB_FN_FLOOR, MPB_FN_CEIL, MPB_FN_TRUNC, MPB_FN_CONJ,
  MPB_FN_SQRT, MPB_FN_CBRT, MPB_FN_EXP, MPB_FN_EXPM1, MPB_FN_LOG, MPB_FN_LOG1P,
  MPB_FN_LOG2, MPB_FN_LOG10, MPB_FN_SIN, MPB_FN_COS, MPB_FN_TAN, MPB_FN_ASIN,
  MPB_FN_ACOS, MPB_FN_ATAN, MPB_FN_SINH, MPB_FN_COSH, MPB_FN_TANH, MPB_FN_ARG, MPB_NUNOP
};
#define MPB_FN_KEEPS_INT(f) ((f) <= MPB_FN_CONJ)

#define MPB_KERR_ZERODIV 1

/* The run function of a binary op / unary function on dtype, or NULL where
** it is not defined (div and pow on integers, bitwise ops on floats, float
** functions on integers, bnot on floats). ctx unused. */
mpb_run_fn mpb_kern_binary(int op, int dtype);
mpb_run_fn mpb_kern_unary(int fn, int dtype);
/* abs and arg of a complex dtype: operand 0 has the parts' dtype (f64 for
** c128, f32 for c64), operand 1 the complex dtype; NULL for another fn. */
mpb_run_fn mpb_kern_cplx_real(int fn, int dtype);
/* Unchecked conversion, operand 0 (dtype dst) = operand 1 (dtype src):
** integers wrap modulo 2^bits, f64 to f32 rounds (beyond the range: +-inf),
** floats to integers truncate and saturate (nan: 0). Callers that need the
** checked rules use mpb_array_convert. */
mpb_run_fn mpb_kern_cast(int dst, int src);

/* ---- reductions (array_kred.c): operand 0 (operand 1 for dot), into ctx */
enum {
  MPB_R_SUM, MPB_R_PROD, MPB_R_MIN, MPB_R_MAX, MPB_R_DOT, MPB_R_SUMSQ, MPB_R_SUMABS,
  MPB_R_MAXABS, MPB_NRKIND
};
/* Accumulator: floats in d (sums pairwise within a run, in double even for
** f32), integers in u (wrapping) or i (min/max), complex sums, products and
** dots in d + di i (min and max are not defined on them; sumsq, sumabs and
** maxabs of |z| go to d); nan set once a NaN was seen by min, max or maxabs.
** Zero it, then set d = 1, u = 1 for a product. */
typedef struct mpb_racc {
  double d, di;
  uint64_t u;
  int64_t i;
  int nan, started;
} mpb_racc;
mpb_run_fn mpb_kern_reduce(int kind, int dtype);

/* ---- linear combination: operand 0 = sum of c[k] * operand k+1, k < nterm,
** added left to right in double for floats (rounded once for f32) and modulo
** 2^64 for integers (then wrapped to the dtype); complex dtypes take complex
** coefficients cf[k] + cfi[k] i (in double, rounded once per part for c64). */
#define MPB_LC_MAX 16
typedef struct mpb_lc {
  int nterm;
  double cf[MPB_LC_MAX], cfi[MPB_LC_MAX];
  uint64_t ci[MPB_LC_MAX];
} mpb_lc;
mpb_run_fn mpb_kern_lincomb(int dtype);

#endif
