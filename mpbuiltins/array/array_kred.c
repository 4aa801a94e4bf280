/* SPDX-License-Identifier: MIT */
/*
** array_kred.c: reduction and linear-combination kernels (array_kern.h).
**
** Float sums (sum, dot, sum of squares, of absolute values) are pairwise
** within a run, as NumPy's are: eight accumulators over blocks of up to 128
** elements, halves added recursively. That is both faster than a serial sum
** (no dependency chain) and more accurate (error O(log n) instead of O(n)).
** Runs are added one after another. Everything accumulates in double, f32
** included. Integer sums and products wrap modulo 2^64, like Lua's integers.
*/
#include <math.h>
#include <string.h>

#include "array/array.h"
#include "array/array_cplx.h"
#include "array/array_kern.h"

/* ---------------------------------------------------------------- pairwise sums */

/* name(a, b, n, sa, sb): the pairwise sum of TERM(i) over a run. */
#define PAIRWISE(name, T, TERM)                                                    \
  static double name(const T *a, const T *b, int64_t n, int64_t sa, int64_t sb) {  \
    (void)b; (void)sb;                                                             \
    if (n < 8) {                                                                   \
      double r = 0.;                                                               \
      for (int64_t i = 0; i < n; i++) r += TERM(i);                                \
      return r;                                                                    \
    }                                                                              \
    if (n <= 128) {                                                                \
      double r[8];                                                                 \
      int64_t i;                                                                   \
      for (int k = 0; k < 8; k++) r[k] = TERM(k);                                  \
      for (i = 8; i < n - n % 8; i += 8)                                           \
        for (int k = 0; k < 8; k++) r[k] += TERM(i + k);                           \
      double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])); \
      for (; i < n; i++) res += TERM(i);                                           \
      return res;                                                                  \
    }                                                                              \
    int64_t h = n / 2;                                                             \
    h -= h % 8;                                                                    \
    return name(a, b, h, sa, sb) + name(a + h * sa, b + h * sb, n - h, sa, sb);    \
  }

#define T_SUM(i) ((double)a[(i) * sa])
#define T_DOT(i) ((double)a[(i) * sa] * (double)b[(i) * sb])
#define T_SQ(i) ((double)a[(i) * sa] * (double)a[(i) * sa])
#define T_ABS(i) fabs((double)a[(i) * sa])

PAIRWISE(sum_f64, double, T_SUM)
PAIRWISE(sum_f32, float, T_SUM)
PAIRWISE(dot_f64, double, T_DOT)
PAIRWISE(dot_f32, float, T_DOT)
PAIRWISE(sq_f64, double, T_SQ)
PAIRWISE(sq_f32, float, T_SQ)
PAIRWISE(abs_f64, double, T_ABS)
PAIRWISE(abs_f32, float, T_ABS)

/* ---------------------------------------------------------------- reductions */

#define RED_HEAD(name, T)                                                          \
  static int name(void *ctx, char *const *p, const int64_t *st, int64_t n) {       \
    mpb_racc *r = ctx;                                                             \
    const T *a = (const T *)p[0];                                                  \
    int64_t sa = st[0];

#define FLOAT_RED(T, S)                                                            \
  RED_HEAD(rsum_##S, T) r->d += sum_##S(a, a, n, sa, 0); return 0; }                \
  RED_HEAD(rsq_##S, T) r->d += sq_##S(a, a, n, sa, 0); return 0; }                 \
  RED_HEAD(rabs_##S, T) r->d += abs_##S(a, a, n, sa, 0); return 0; }               \
  RED_HEAD(rdot_##S, T) r->d += dot_##S(a, (const T *)p[1], n, sa, st[1]); return 0; } \
  RED_HEAD(rprod_##S, T)                                                           \
    double m = r->d;                                                               \
    for (int64_t i = 0; i < n; i++) m *= a[i * sa];                                \
    r->d = m;                                                                      \
    return 0;                                                                      \
  }                                                                                \
  RED_HEAD(rmin_##S, T)                                                            \
    double m = r->started ? r->d : a[0];                                           \
    int nan = 0;                                                                   \
    for (int64_t i = 0; i < n; i++) { double x = a[i * sa]; m = x < m ? x : m; nan |= x != x; } \
    r->d = m, r->nan |= nan, r->started = 1;                                       \
    return 0;                                                                      \
  }                                                                                \
  RED_HEAD(rmax_##S, T)                                                            \
    double m = r->started ? r->d : a[0];                                           \
    int nan = 0;                                                                   \
    for (int64_t i = 0; i < n; i++) { double x = a[i * sa]; m = x > m ? x : m; nan |= x != x; } \
    r->d = m, r->nan |= nan, r->started = 1;                                       \
    return 0;                                                                      \
  }                                                                                \
  RED_HEAD(rmaxabs_##S, T)                                                         \
    double m = r->d;                                                               \
    int nan = 0;                                                                   \
    for (int64_t i = 0; i < n; i++) { double x = fabs((double)a[i * sa]); m = x > m ? x : m; nan |= x != x; } \
    r->d = m, r->nan |= nan;                                                       \
    return 0;                                                                      \
  }

/* Integers: sums and products modulo 2^64 (exact for what fits), min/max in
** int64 (holds every element of every integer dtype). */
#define INT_RED(T, S)                                                              \
  RED_HEAD(rsum_##S, T)                                                            \
    uint64_t s = r->u;                                                             \
    for (int64_t i = 0; i < n; i++) s += (uint64_t)(int64_t)a[i * sa];             \
    r->u = s;                                                                      \
    return 0;                                                                      \
  }                                                                                \
  RED_HEAD(rprod_##S, T)                                                           \
    uint64_t s = r->u;                                                             \
    for (int64_t i = 0; i < n; i++) s *= (uint64_t)(int64_t)a[i * sa];             \
    r->u = s;                                                                      \
    return 0;                                                                      \
  }                                                                                \
  RED_HEAD(rdot_##S, T)                                                            \
    const T *b = (const T *)p[1];                                                  \
    uint64_t s = r->u;                                                             \
    for (int64_t i = 0; i < n; i++)                                                \
      s += (uint64_t)(int64_t)a[i * sa] * (uint64_t)(int64_t)b[i * st[1]];         \
    r->u = s;                                                                      \
    return 0;                                                                      \
  }                                                                                \
  RED_HEAD(rmin_##S, T)                                                            \
    int64_t m = r->started ? r->i : a[0];                                          \
    for (int64_t i = 0; i < n; i++) { int64_t x = a[i * sa]; m = x < m ? x : m; }  \
    r->i = m, r->started = 1;                                                      \
    return 0;                                                                      \
  }                                                                                \
  RED_HEAD(rmax_##S, T)                                                            \
    int64_t m = r->started ? r->i : a[0];                                          \
    for (int64_t i = 0; i < n; i++) { int64_t x = a[i * sa]; m = x > m ? x : m; }  \
    r->i = m, r->started = 1;                                                      \
    return 0;                                                                      \
  }

FLOAT_RED(double, f64)
FLOAT_RED(float, f32)
INT_RED(int64_t, i64)
INT_RED(int32_t, i32)
INT_RED(uint8_t, u8)

/* Complex: the parts are floats at twice the stride (real part first), so a
** sum is two pairwise float sums; |z| terms and products of pairs pairwise
** too, products of the elements in order. */
#define T_CDOTRE(i) ((double)a[(i) * sa].re * b[(i) * sb].re - (double)a[(i) * sa].im * b[(i) * sb].im)
#define T_CDOTIM(i) ((double)a[(i) * sa].re * b[(i) * sb].im + (double)a[(i) * sa].im * b[(i) * sb].re)
#define T_CSQ(i) ((double)a[(i) * sa].re * a[(i) * sa].re + (double)a[(i) * sa].im * a[(i) * sa].im)
#define T_CABS(i) hypot(a[(i) * sa].re, a[(i) * sa].im)
PAIRWISE(cdotre_128, mpb_c128, T_CDOTRE)
PAIRWISE(cdotim_128, mpb_c128, T_CDOTIM)
PAIRWISE(csq_128, mpb_c128, T_CSQ)
PAIRWISE(cabs_128, mpb_c128, T_CABS)
PAIRWISE(cdotre_64, mpb_c64, T_CDOTRE)
PAIRWISE(cdotim_64, mpb_c64, T_CDOTIM)
PAIRWISE(csq_64, mpb_c64, T_CSQ)
PAIRWISE(cabs_64, mpb_c64, T_CABS)

#define CPLX_RED(T, S, F)                                                          \
  RED_HEAD(rsum_c##S, T)                                                           \
    r->d += sum_##F(&a->re, &a->re, n, 2 * sa, 0);                                 \
    r->di += sum_##F(&a->im, &a->im, n, 2 * sa, 0);                                \
    return 0;                                                                      \
  }                                                                                \
  RED_HEAD(rdot_c##S, T)                                                           \
    const T *b = (const T *)p[1];                                                  \
    r->d += cdotre_##S(a, b, n, sa, st[1]);                                        \
    r->di += cdotim_##S(a, b, n, sa, st[1]);                                       \
    return 0;                                                                      \
  }                                                                                \
  RED_HEAD(rsq_c##S, T) r->d += csq_##S(a, a, n, sa, 0); return 0; }               \
  RED_HEAD(rabs_c##S, T) r->d += cabs_##S(a, a, n, sa, 0); return 0; }             \
  RED_HEAD(rprod_c##S, T)                                                          \
    mpb_cplx m = mpb_cx(r->d, r->di);                                              \
    for (int64_t i = 0; i < n; i++) m = mpb_cmul(m, mpb_cx(a[i * sa].re, a[i * sa].im)); \
    r->d = m.re, r->di = m.im;                                                     \
    return 0;                                                                      \
  }                                                                                \
  RED_HEAD(rmaxabs_c##S, T)                                                        \
    double m = r->d;                                                               \
    int nan = 0;                                                                   \
    for (int64_t i = 0; i < n; i++) { double x = hypot(a[i * sa].re, a[i * sa].im); \
                                      m = x > m ? x : m; nan |= x != x; }          \
    r->d = m, r->nan |= nan;                                                       \
    return 0;                                                                      \
  }
CPLX_RED(mpb_c128, 128, f64)
CPLX_RED(mpb_c64, 64, f32)

#define RROW(k) {k##_f64, k##_f32, k##_i64, k##_i32, k##_u8, k##_c64, k##_c128}
#define RFLT(k) {k##_f64, k##_f32, NULL, NULL, NULL, k##_c64, k##_c128}
#define RORD(k) {k##_f64, k##_f32, k##_i64, k##_i32, k##_u8, NULL, NULL}
static const mpb_run_fn reducers[MPB_NRKIND][MPB_NDTYPE] = {
  [MPB_R_SUM] = RROW(rsum), [MPB_R_PROD] = RROW(rprod), [MPB_R_MIN] = RORD(rmin),
  [MPB_R_MAX] = RORD(rmax), [MPB_R_DOT] = RROW(rdot),   [MPB_R_SUMSQ] = RFLT(rsq),
  [MPB_R_SUMABS] = RFLT(rabs), [MPB_R_MAXABS] = RFLT(rmaxabs),
};

mpb_run_fn mpb_kern_reduce(int kind, int dtype) {
  if (kind < 0 || kind >= MPB_NRKIND || dtype < 0 || dtype >= MPB_NDTYPE) return NULL;
  return reducers[kind][dtype];
}

/* ---------------------------------------------------------------- linear combination */

/* A, C: the accumulator type and the coefficient array (cf or ci); OUT(v)
** converts an accumulated value to T. Runs where every operand has unit
** stride take an unrolled loop per term count up to 5 (stencils), longer
** combinations a block at a time through a small accumulator, so the data is
** read once either way. Terms are y itself or disjoint from it (the binding
** copies anything else): without y among them the loops use restrict
** pointers, so they vectorize without run-time alias checks. */
#define UNROLLED(R, OUT)                                                               \
  do {                                                                             \
    elem_t *R o_ = o;                                                              \
    const elem_t *R x1 = (const elem_t *)p[1];                                     \
    const elem_t *R x2 = K >= 2 ? (const elem_t *)p[2] : x1;                       \
    const elem_t *R x3 = K >= 3 ? (const elem_t *)p[3] : x1;                       \
    const elem_t *R x4 = K >= 4 ? (const elem_t *)p[4] : x1;                       \
    const elem_t *R x5 = K >= 5 ? (const elem_t *)p[5] : x1;                       \
    switch (K) {                                                                   \
      case 1: for (int64_t i = 0; i < n; i++) o_[i] = OUT(c0 * x1[i]); break;      \
      case 2: for (int64_t i = 0; i < n; i++) o_[i] = OUT(c0 * x1[i] + c1 * x2[i]); break; \
      case 3:                                                                      \
        for (int64_t i = 0; i < n; i++)                                            \
          o_[i] = OUT(c0 * x1[i] + c1 * x2[i] + c2 * x3[i]);                       \
        break;                                                                     \
      case 4:                                                                      \
        for (int64_t i = 0; i < n; i++)                                            \
          o_[i] = OUT(c0 * x1[i] + c1 * x2[i] + c2 * x3[i] + c3 * x4[i]);          \
        break;                                                                     \
      default:                                                                     \
        for (int64_t i = 0; i < n; i++)                                            \
          o_[i] = OUT(c0 * x1[i] + c1 * x2[i] + c2 * x3[i] + c3 * x4[i] + c4 * x5[i]); \
    }                                                                              \
  } while (0)
#define NORESTRICT
#define X(k, i) ((acc_t)((const elem_t *)p[k])[i])
#define LINCOMB(name, T, A, C, OUT)                                                \
  static int name(void *ctx, char *const *p, const int64_t *st, int64_t n) {       \
    typedef T elem_t;                                                              \
    typedef A acc_t;                                                               \
    const mpb_lc *lc = ctx;                                                        \
    const int K = lc->nterm;                                                       \
    T *o = (T *)p[0];                                                              \
    int unit = 1, alias = 0;                                                       \
    for (int k = 0; k <= K; k++) unit &= st[k] == 1;                               \
    for (int k = 1; k <= K; k++) alias |= p[k] == p[0];                            \
    const acc_t c0 = (acc_t)lc->C[0], c1 = (acc_t)lc->C[1], c2 = (acc_t)lc->C[2],  \
                c3 = (acc_t)lc->C[3], c4 = (acc_t)lc->C[4];                        \
    if (unit && K <= 5 && !alias) {                                                \
      UNROLLED(restrict, OUT);                                                          \
    } else if (unit && K <= 5) {                                                   \
      UNROLLED(NORESTRICT, OUT);                                                        \
    } else if (unit) {                                                             \
      acc_t acc[256];                                                              \
      for (int64_t lo = 0; lo < n; lo += 256) {                                    \
        int64_t m = n - lo < 256 ? n - lo : 256;                                   \
        for (int64_t i = 0; i < m; i++) acc[i] = c0 * X(1, lo + i);                \
        for (int k = 1; k < K; k++) {                                              \
          const acc_t ck = (acc_t)lc->C[k];                                        \
          const elem_t *xk = (const elem_t *)p[k + 1] + lo;                        \
          for (int64_t i = 0; i < m; i++) acc[i] += ck * (acc_t)xk[i];             \
        }                                                                          \
        for (int64_t i = 0; i < m; i++) o[lo + i] = OUT(acc[i]);                   \
      }                                                                            \
    } else {                                                                       \
      for (int64_t i = 0; i < n; i++) {                                            \
        acc_t s = c0 * X(1, i * st[1]);                                            \
        for (int k = 1; k < K; k++) s += (acc_t)lc->C[k] * X(k + 1, i * st[k + 1]); \
        o[i * st[0]] = OUT(s);                                                     \
      }                                                                            \
    }                                                                              \
    return 0;                                                                      \
  }

#define AS_IS(v) (v)
#define TO_F32(v) ((float)(v))

LINCOMB(lc_f64, double, double, cf, AS_IS)
LINCOMB(lc_f32, float, double, cf, TO_F32)
LINCOMB(lc_i64, int64_t, uint64_t, ci, (int64_t))
LINCOMB(lc_i32, int32_t, uint64_t, ci, (int32_t))
LINCOMB(lc_u8, uint8_t, uint64_t, ci, (uint8_t))

/* Complex: sum of c[k] * x_k in double, a block at a time when every
** operand has unit stride (the data read once), rounded once (c64). */
#define CPLX_LINCOMB(name, T, OUT)                                                 \
  static int name(void *ctx, char *const *p, const int64_t *st, int64_t n) {       \
    const mpb_lc *lc = ctx;                                                        \
    const int K = lc->nterm;                                                       \
    T *o = (T *)p[0];                                                              \
    mpb_cplx c[MPB_LC_MAX];                                                        \
    int unit = 1;                                                                  \
    for (int k = 0; k < K; k++) c[k] = mpb_cx(lc->cf[k], lc->cfi[k]);              \
    for (int k = 0; k <= K; k++) unit &= st[k] == 1;                               \
    if (unit) {                                                                    \
      mpb_cplx acc[128];                                                           \
      for (int64_t lo = 0; lo < n; lo += 128) {                                    \
        int64_t m = n - lo < 128 ? n - lo : 128;                                   \
        for (int k = 0; k < K; k++) {                                              \
          const T *x = (const T *)p[k + 1] + lo;                                   \
          for (int64_t i = 0; i < m; i++) {                                        \
            mpb_cplx t = mpb_cmul(c[k], mpb_cx(x[i].re, x[i].im));                 \
            acc[i] = k ? mpb_cadd(acc[i], t) : t;                                  \
          }                                                                        \
        }                                                                          \
        for (int64_t i = 0; i < m; i++) o[lo + i] = OUT(acc[i]);                   \
      }                                                                            \
      return 0;                                                                    \
    }                                                                              \
    for (int64_t i = 0; i < n; i++) {                                              \
      mpb_cplx s = mpb_cx(0, 0);                                                   \
      for (int k = 0; k < K; k++) {                                                \
        const T *x = (const T *)p[k + 1] + i * st[k + 1];                          \
        mpb_cplx t = mpb_cmul(c[k], mpb_cx(x->re, x->im));                         \
        s = k ? mpb_cadd(s, t) : t;                                                \
      }                                                                            \
      o[i * st[0]] = OUT(s);                                                       \
    }                                                                              \
    return 0;                                                                      \
  }
#define OUT128(z) ((mpb_c128){(z).re, (z).im})
#define OUT64(z) ((mpb_c64){(float)(z).re, (float)(z).im})
CPLX_LINCOMB(lc_c128, mpb_c128, OUT128)
CPLX_LINCOMB(lc_c64, mpb_c64, OUT64)

mpb_run_fn mpb_kern_lincomb(int dtype) {
  static const mpb_run_fn lc[MPB_NDTYPE] = {lc_f64, lc_f32, lc_i64, lc_i32, lc_u8, lc_c64,
                                            lc_c128};
  return dtype >= 0 && dtype < MPB_NDTYPE ? lc[dtype] : NULL;
}
