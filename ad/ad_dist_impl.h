/* SPDX-License-Identifier: MIT */
/*
** What each elementwise function of ad_dist.h is made of (internal to the
** ad/ core): its element function (value, gradient, and the Hessian when h
** is not NULL), a loop over elements specialized for it (the element
** function inlined, strided arguments, partials to per-element slots or
** accumulated for scalars: the fast path ad_dist records with), and its
** rules: which arguments are data, which have no second derivatives, what
** its counts must be. A family file defines each with AD_DIST_DEFINE; the
** table in ad_dist_table.c collects them by the AD_DIST_OPS list.
*/
#ifndef AD_DIST_IMPL_H
#define AD_DIST_IMPL_H

#include <stddef.h>
#include "ad_dist.h"

typedef void (*ad_dist_elem_fn)(const double *x, double *f, double *g, double *h);
/* sum_i f(p[0][i s[0]], ...): per-element partials of argument k to pv[k][i]
** when pv[k], else summed into acc[k]. */
typedef double (*ad_dist_loop_fn)(const double *const *p, const size_t *s, size_t n,
                                  double *const *pv, double *acc);
/* The same for a vector outcome y (not differentiated) and scalar
** parameters par[1..], their partials summed into acc[1..]. */
typedef double (*ad_dist_loop1_fn)(const double *y, const double *par, size_t n, double *acc);

enum { AD_DF_FUNC = 1 }; /* an elementwise function, not a density: no summed form */

typedef struct ad_dist_impl {
  ad_dist_elem_fn elem;
  ad_dist_loop_fn loop;
  ad_dist_loop1_fn loop1;
  unsigned char data;     /* bit k: argument k must be data */
  unsigned char nosecond; /* bit k: no second derivatives in argument k */
  unsigned char counts;   /* AD_CNT_* */
  unsigned char flags;    /* AD_DF_* */
} ad_dist_impl;

const ad_dist_impl *ad_dist_get(int dist);

/* Element functions are inlined into their loops whatever their size (the
** Hessian part, dead there since h is NULL, would otherwise keep them out). */
#define AD_ELEM static inline __attribute__((always_inline))

/* The loops: the general one (any argument a vector, per-element partials
** or sums), and the common case of a vector outcome with scalar parameters
** whose partials are summed (loop1): the parameters are then loop
** invariants the compiler can hoist out of the inlined element function. */
#define AD_DIST_DEFINE(ENUM, fn, nargs, data, nosecond, counts, flags)                     \
  static double fn##_loop(const double *const *p, const size_t *s, size_t n,               \
                          double *const *pv, double *acc) {                               \
    double lp = 0, a[4] = {0, 0, 0, 0};                                                    \
    for (size_t i = 0; i < n; i++) {                                                       \
      double x[4], g[4], f;                                                                \
      _Pragma("GCC unroll 4") for (int k = 0; k < (nargs); k++) x[k] = p[k][i * s[k]];    \
      fn(x, &f, g, NULL);                                                                  \
      lp += f;                                                                             \
      _Pragma("GCC unroll 4") for (int k = 0; k < (nargs); k++) {                          \
        if (pv[k]) pv[k][i] = g[k];                                                        \
        else a[k] += g[k];                                                                 \
      }                                                                                    \
    }                                                                                      \
    for (int k = 0; k < (nargs); k++) acc[k] = a[k];                                       \
    return lp;                                                                             \
  }                                                                                        \
  static double fn##_loop1(const double *y, const double *par, size_t n, double *acc) {   \
    double lp = 0, a[4] = {0, 0, 0, 0}, x0[4] = {0, par[1], par[2], par[3]};               \
    for (size_t i = 0; i < n; i++) {                                                       \
      double x[4] = {y[i], x0[1], x0[2], x0[3]}, g[4], f;                                  \
      fn(x, &f, g, NULL);                                                                  \
      lp += f;                                                                             \
      _Pragma("GCC unroll 4") for (int k = 1; k < (nargs); k++) a[k] += g[k];             \
    }                                                                                      \
    for (int k = 1; k < (nargs); k++) acc[k] = a[k];                                       \
    return lp;                                                                             \
  }                                                                                        \
  const ad_dist_impl ad_dist_impl_##ENUM = {fn, fn##_loop, fn##_loop1, data, nosecond,     \
                                            counts, flags};

/* constants, the 4x4 Hessian's entry (k, l), and its symmetric completion
** from the lower triangle */
#define AD_LOG_PI 1.14472988584940017414
#define AD_HALF_LOG_2PI 0.91893853320467274178
#define AD_LOG_2PI 1.83787706640934548356
#define AD_LN2 0.69314718055994530942
#define H(k, l) h[(k) * 4 + (l)]
static inline void ad_dist_sym(double *h, int n) {
  for (int k = 0; k < n; k++)
    for (int l = 0; l < k; l++) H(l, k) = H(k, l);
}

/* argument bits */
#define AD_A0 1u
#define AD_A1 2u
#define AD_A2 4u
#define AD_A3 8u

#endif
