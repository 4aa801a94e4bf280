/* SPDX-License-Identifier: MIT */
/*
** array_kern.c: element-wise kernels (binary ops, unary functions, casts) as
** run functions for the strided walker, one tight loop per (op, dtype) with
** separate loops for the common stride patterns (all unit, one operand
** repeated) so that the compiler vectorizes them. Semantics in array_kern.h.
*/
#include <float.h>
#include <math.h>
#include <stddef.h>

#include "array/array.h"
#include "array/array_cplx.h"
#include "array/array_kern.h"

/* ---------------------------------------------------------------- Lua's arithmetic */

/* Lua's float modulo (luai_nummod): the result has the divisor's sign. */
static inline double lmod(double a, double b) {
  double m = fmod(a, b);
  if ((m > 0) ? b < 0 : (m < 0 && b != m)) m += b;
  return m;
}

/* Lua's integer floor division and modulo (luaV_idiv, luaV_mod), n != 0.
** n == -1 is apart: mininteger // -1 wraps and C's % would trap. */
static inline int64_t lidiv(int64_t m, int64_t n) {
  if ((uint64_t)n + 1u <= 1u) return (int64_t)(0u - (uint64_t)m);
  int64_t q = m / n;
  if ((m ^ n) < 0 && m % n != 0) q -= 1;
  return q;
}

static inline int64_t limod(int64_t m, int64_t n) {
  if ((uint64_t)n + 1u <= 1u) return 0;
  int64_t r = m % n;
  if (r != 0 && (r ^ n) < 0) r += n;
  return r;
}

/* ---------------------------------------------------------------- binary ops */

#define NOCHECK (void)0
#define ZEROCHECK if (y == 0) return MPB_KERR_ZERODIV

/* One run of o = EXPR(x, y); CHECK may return an error code. An input is
** either the very same memory as o or disjoint from it (the binding copies
** anything else), so when unit-stride pointers differ they do not overlap
** and the loop may use restrict pointers, which lets the compiler vectorize
** without run-time alias checks. */
#define BINRUN(name, T, CHECK, EXPR)                                               \
  static int name(void *ctx, char *const *p, const int64_t *st, int64_t n) {       \
    T *o = (T *)p[0];                                                              \
    const T *a = (const T *)p[1], *b = (const T *)p[2];                            \
    int64_t so = st[0], sa = st[1], sb = st[2];                                    \
    (void)ctx;                                                                     \
    if (so == 1 && sa == 1 && sb == 1 && o != a && o != b) {                       \
      T *restrict ro = o;                                                          \
      const T *restrict ra = a, *restrict rb = b;                                  \
      for (int64_t i = 0; i < n; i++) { T x = ra[i], y = rb[i]; CHECK; ro[i] = (EXPR); } \
    } else if (so == 1 && sa == 1 && sb == 1 && o == a && o != b) {                \
      T *restrict ro = o;                                                          \
      const T *restrict rb = b;                                                    \
      for (int64_t i = 0; i < n; i++) { T x = ro[i], y = rb[i]; CHECK; ro[i] = (EXPR); } \
    } else if (so == 1 && sa == 1 && sb == 0) {                                    \
      const T y = *b;                                                              \
      if (o != a) {                                                                \
        T *restrict ro = o;                                                        \
        const T *restrict ra = a;                                                  \
        for (int64_t i = 0; i < n; i++) { T x = ra[i]; CHECK; ro[i] = (EXPR); }    \
      } else {                                                                     \
        for (int64_t i = 0; i < n; i++) { T x = o[i]; CHECK; o[i] = (EXPR); }      \
      }                                                                            \
    } else if (so == 1 && sa == 0 && sb == 1 && o != b) {                          \
      const T x = *a;                                                              \
      T *restrict ro = o;                                                          \
      const T *restrict rb = b;                                                    \
      for (int64_t i = 0; i < n; i++) { T y = rb[i]; CHECK; ro[i] = (EXPR); }      \
    } else {                                                                       \
      for (int64_t i = 0; i < n; i++) {                                            \
        T x = a[i * sa], y = b[i * sb];                                            \
        CHECK;                                                                     \
        o[i * so] = (EXPR);                                                        \
      }                                                                            \
    }                                                                              \
    return 0;                                                                      \
  }

/* Floats: T the type, S its suffix. */
#define FLOAT_BIN(T, S)                                                            \
  BINRUN(add_##S, T, NOCHECK, x + y)                                               \
  BINRUN(sub_##S, T, NOCHECK, x - y)                                               \
  BINRUN(mul_##S, T, NOCHECK, x * y)                                               \
  BINRUN(div_##S, T, NOCHECK, x / y)                                               \
  BINRUN(pow_##S, T, NOCHECK, (T)pow(x, y))                                        \
  BINRUN(mod_##S, T, NOCHECK, (T)lmod(x, y))                                       \
  BINRUN(idiv_##S, T, NOCHECK, (T)floor((double)x / (double)y))                    \
  BINRUN(min_##S, T, NOCHECK, (x < y || x != x) ? x : y)                           \
  BINRUN(max_##S, T, NOCHECK, (x > y || x != x) ? x : y)

/* Integers: U the unsigned type of the same width (wrapping arithmetic). */
#define INT_BIN(T, U, S)                                                           \
  BINRUN(add_##S, T, NOCHECK, (T)((U)x + (U)y))                                    \
  BINRUN(sub_##S, T, NOCHECK, (T)((U)x - (U)y))                                    \
  BINRUN(mul_##S, T, NOCHECK, (T)((U)x * (U)y))                                    \
  BINRUN(mod_##S, T, ZEROCHECK, (T)(U)limod(x, y))                                 \
  BINRUN(idiv_##S, T, ZEROCHECK, (T)(U)lidiv(x, y))                                \
  BINRUN(min_##S, T, NOCHECK, x < y ? x : y)                                       \
  BINRUN(max_##S, T, NOCHECK, x > y ? x : y)                                       \
  BINRUN(band_##S, T, NOCHECK, (T)(x & y))                                         \
  BINRUN(bor_##S, T, NOCHECK, (T)(x | y))                                          \
  BINRUN(bxor_##S, T, NOCHECK, (T)(x ^ y))

FLOAT_BIN(double, f64)
FLOAT_BIN(float, f32)
INT_BIN(int64_t, uint64_t, i64)
INT_BIN(int32_t, uint32_t, i32)
/* u8: unsigned int keeps the products of promoted operands unsigned */
INT_BIN(uint8_t, unsigned, u8)

/* Complex: elements converted to mpb_cplx and back (c64: rounded per part). */
static inline mpb_cplx cx128(mpb_c128 z) { return mpb_cx(z.re, z.im); }
static inline mpb_cplx cx64(mpb_c64 z) { return mpb_cx(z.re, z.im); }
static inline mpb_c128 to128(mpb_cplx z) { mpb_c128 r = {z.re, z.im}; return r; }
static inline mpb_c64 to64(mpb_cplx z) { mpb_c64 r = {(float)z.re, (float)z.im}; return r; }
#define CPLX_BIN(T, S)                                                             \
  BINRUN(add_##S, T, NOCHECK, to##S(mpb_cadd(cx##S(x), cx##S(y))))                \
  BINRUN(sub_##S, T, NOCHECK, to##S(mpb_csub(cx##S(x), cx##S(y))))                \
  BINRUN(mul_##S, T, NOCHECK, to##S(mpb_cmul(cx##S(x), cx##S(y))))                \
  BINRUN(div_##S, T, NOCHECK, to##S(mpb_cdiv(cx##S(x), cx##S(y))))                \
  BINRUN(pow_##S, T, NOCHECK, to##S(mpb_cpow(cx##S(x), cx##S(y))))
CPLX_BIN(mpb_c128, 128)
CPLX_BIN(mpb_c64, 64)

#define FROW(op) [MPB_F64] = op##_f64, [MPB_F32] = op##_f32
#define IROW(op) [MPB_I64] = op##_i64, [MPB_I32] = op##_i32, [MPB_U8] = op##_u8
#define CROW(op) [MPB_C64] = op##_64, [MPB_C128] = op##_128
static const mpb_run_fn binary[MPB_NBINOP][MPB_NDTYPE] = {
  [MPB_OP_ADD] = {FROW(add), IROW(add), CROW(add)}, [MPB_OP_SUB] = {FROW(sub), IROW(sub), CROW(sub)},
  [MPB_OP_MUL] = {FROW(mul), IROW(mul), CROW(mul)}, [MPB_OP_DIV] = {FROW(div), CROW(div)},
  [MPB_OP_POW] = {FROW(pow), CROW(pow)},   [MPB_OP_MOD] = {FROW(mod), IROW(mod)},
  [MPB_OP_IDIV] = {FROW(idiv), IROW(idiv)}, [MPB_OP_MIN] = {FROW(min), IROW(min)},
  [MPB_OP_MAX] = {FROW(max), IROW(max)},   [MPB_OP_BAND] = {IROW(band)},
  [MPB_OP_BOR] = {IROW(bor)},              [MPB_OP_BXOR] = {IROW(bxor)},
};

mpb_run_fn mpb_kern_binary(int op, int dtype) {
  if (op < 0 || op >= MPB_NBINOP || dtype < 0 || dtype >= MPB_NDTYPE) return NULL;
  return binary[op][dtype];
}

/* ---------------------------------------------------------------- unary functions */

#define UNRUN(name, T, EXPR)                                                       \
  static int name(void *ctx, char *const *p, const int64_t *st, int64_t n) {       \
    T *o = (T *)p[0];                                                              \
    const T *a = (const T *)p[1];                                                  \
    (void)ctx;                                                                     \
    if (st[0] == 1 && st[1] == 1 && o != a) {                                      \
      T *restrict ro = o;                                                          \
      const T *restrict ra = a;                                                    \
      for (int64_t i = 0; i < n; i++) { T x = ra[i]; ro[i] = (EXPR); }             \
    } else if (st[0] == 1 && st[1] == 1) {                                         \
      for (int64_t i = 0; i < n; i++) { T x = o[i]; o[i] = (EXPR); }               \
    } else {                                                                       \
      for (int64_t i = 0; i < n; i++) { T x = a[i * st[1]]; o[i * st[0]] = (EXPR); } \
    }                                                                              \
    return 0;                                                                      \
  }

/* Floats through double (f64: no conversion; f32: rounded once). */
#define FLOAT_UN(T, S)                                                             \
  UNRUN(neg_##S, T, -x)                                                            \
  UNRUN(abs_##S, T, (T)fabs(x))                                                    \
  UNRUN(floor_##S, T, (T)floor(x))                                                 \
  UNRUN(ceil_##S, T, (T)ceil(x))                                                   \
  UNRUN(trunc_##S, T, (T)trunc(x))                                                 \
  UNRUN(sqrt_##S, T, (T)sqrt(x))                                                   \
  UNRUN(cbrt_##S, T, (T)cbrt(x))                                                   \
  UNRUN(exp_##S, T, (T)exp(x))                                                     \
  UNRUN(expm1_##S, T, (T)expm1(x))                                                 \
  UNRUN(log_##S, T, (T)log(x))                                                     \
  UNRUN(log1p_##S, T, (T)log1p(x))                                                 \
  UNRUN(log2_##S, T, (T)log2(x))                                                   \
  UNRUN(log10_##S, T, (T)log10(x))                                                 \
  UNRUN(sin_##S, T, (T)sin(x))                                                     \
  UNRUN(cos_##S, T, (T)cos(x))                                                     \
  UNRUN(tan_##S, T, (T)tan(x))                                                     \
  UNRUN(asin_##S, T, (T)asin(x))                                                   \
  UNRUN(acos_##S, T, (T)acos(x))                                                   \
  UNRUN(atan_##S, T, (T)atan(x))                                                   \
  UNRUN(sinh_##S, T, (T)sinh(x))                                                   \
  UNRUN(cosh_##S, T, (T)cosh(x))                                                   \
  UNRUN(tanh_##S, T, (T)tanh(x))                                                   \
  UNRUN(same_##S, T, x)                                                            \
  UNRUN(arg_##S, T, (T)atan2(0.0, x))

#define INT_UN(T, U, S, ABS)                                                       \
  UNRUN(neg_##S, T, (T)(0u - (U)x))                                                \
  UNRUN(abs_##S, T, ABS)                                                           \
  UNRUN(bnot_##S, T, (T)~x)                                                        \
  UNRUN(same_##S, T, x)

FLOAT_UN(double, f64)
FLOAT_UN(float, f32)
INT_UN(int64_t, uint64_t, i64, x < 0 ? (int64_t)(0u - (uint64_t)x) : x)
INT_UN(int32_t, uint32_t, i32, x < 0 ? (int32_t)(0u - (uint32_t)x) : x)
INT_UN(uint8_t, unsigned, u8, x)

#define CPLX_UN(T, S)                                                              \
  UNRUN(neg_##S, T, to##S(mpb_cneg(cx##S(x))))                                     \
  UNRUN(conj_##S, T, to##S(mpb_cconj(cx##S(x))))                                   \
  UNRUN(sqrt_##S, T, to##S(mpb_csqrt(cx##S(x))))                                   \
  UNRUN(exp_##S, T, to##S(mpb_cexp(cx##S(x))))                                     \
  UNRUN(log_##S, T, to##S(mpb_clog(cx##S(x))))                                     \
  UNRUN(log10_##S, T, to##S(mpb_clog10(cx##S(x))))                                 \
  UNRUN(sin_##S, T, to##S(mpb_csin(cx##S(x))))                                     \
  UNRUN(cos_##S, T, to##S(mpb_ccos(cx##S(x))))                                     \
  UNRUN(tan_##S, T, to##S(mpb_ctan(cx##S(x))))                                     \
  UNRUN(asin_##S, T, to##S(mpb_casin(cx##S(x))))                                   \
  UNRUN(acos_##S, T, to##S(mpb_cacos(cx##S(x))))                                   \
  UNRUN(atan_##S, T, to##S(mpb_catan(cx##S(x))))                                   \
  UNRUN(sinh_##S, T, to##S(mpb_csinh(cx##S(x))))                                   \
  UNRUN(cosh_##S, T, to##S(mpb_ccosh(cx##S(x))))                                   \
  UNRUN(tanh_##S, T, to##S(mpb_ctanh(cx##S(x))))
CPLX_UN(mpb_c128, 128)
CPLX_UN(mpb_c64, 64)

#define UROW(f) [MPB_F64] = f##_f64, [MPB_F32] = f##_f32
#define UC(f) UROW(f), CROW(f)
static const mpb_run_fn unary[MPB_NUNOP][MPB_NDTYPE] = {
  [MPB_FN_NEG] = {UC(neg), IROW(neg)},       [MPB_FN_ABS] = {UROW(abs), IROW(abs)},
  [MPB_FN_BNOT] = {IROW(bnot)},              [MPB_FN_FLOOR] = {UROW(floor), IROW(same)},
  [MPB_FN_CEIL] = {UROW(ceil), IROW(same)},  [MPB_FN_TRUNC] = {UROW(trunc), IROW(same)},
  [MPB_FN_CONJ] = {UROW(same), IROW(same), CROW(conj)},
  [MPB_FN_SQRT] = {UC(sqrt)},     [MPB_FN_CBRT] = {UROW(cbrt)},   [MPB_FN_EXP] = {UC(exp)},
  [MPB_FN_EXPM1] = {UROW(expm1)}, [MPB_FN_LOG] = {UC(log)},       [MPB_FN_LOG1P] = {UROW(log1p)},
  [MPB_FN_LOG2] = {UROW(log2)},   [MPB_FN_LOG10] = {UC(log10)},   [MPB_FN_SIN] = {UC(sin)},
  [MPB_FN_COS] = {UC(cos)},       [MPB_FN_TAN] = {UC(tan)},       [MPB_FN_ASIN] = {UC(asin)},
  [MPB_FN_ACOS] = {UC(acos)},     [MPB_FN_ATAN] = {UC(atan)},     [MPB_FN_SINH] = {UC(sinh)},
  [MPB_FN_COSH] = {UC(cosh)},     [MPB_FN_TANH] = {UC(tanh)},     [MPB_FN_ARG] = {UROW(arg)},
};

mpb_run_fn mpb_kern_unary(int fn, int dtype) {
  if (fn < 0 || fn >= MPB_NUNOP || dtype < 0 || dtype >= MPB_NDTYPE) return NULL;
  return unary[fn][dtype];
}

/* abs and arg of complex elements: a real result (operand 0). */
#define CPLX_REAL(name, TD, TS, EXPR)                                              \
  static int name(void *ctx, char *const *p, const int64_t *st, int64_t n) {       \
    TD *o = (TD *)p[0];                                                            \
    const TS *a = (const TS *)p[1];                                                \
    (void)ctx;                                                                     \
    for (int64_t i = 0; i < n; i++) { mpb_cplx x = mpb_cx(a[i * st[1]].re, a[i * st[1]].im); \
                                      o[i * st[0]] = (TD)(EXPR); }                 \
    return 0;                                                                      \
  }
CPLX_REAL(cabs_128, double, mpb_c128, mpb_cabs(x))
CPLX_REAL(cabs_64, float, mpb_c64, mpb_cabs(x))
CPLX_REAL(carg_128, double, mpb_c128, mpb_carg(x))
CPLX_REAL(carg_64, float, mpb_c64, mpb_carg(x))

mpb_run_fn mpb_kern_cplx_real(int fn, int dtype) {
  if (dtype != MPB_C64 && dtype != MPB_C128) return NULL;
  if (fn == MPB_FN_ABS) return dtype == MPB_C64 ? cabs_64 : cabs_128;
  if (fn == MPB_FN_ARG) return dtype == MPB_C64 ? carg_64 : carg_128;
  return NULL;
}

/* ---------------------------------------------------------------- casts */

/* Truncate and saturate a double into [lo, hi] (C leaves out-of-range float
** to integer conversions undefined); nan gives 0. */
static inline int64_t fsat(double v, double lo, double hi) {
  if (v != v) return 0;
  if (v <= lo) return (int64_t)lo;
  if (v >= hi) return (int64_t)hi;
  return (int64_t)v;
}

static inline float tof32(double v) {
  return v > FLT_MAX ? INFINITY : v < -FLT_MAX ? -INFINITY : (float)v;
}

#define I64MIN (-9223372036854775808.0)
#define I64MAX 9223372036854774784.0 /* the largest double below 2^63 */

/* name: cast from TS (suffix) to TD through EXPR(x). */
#define CASTS(TS, S)                                                               \
  UNRUN2(c64_##S, mpb_c64, TS, ((mpb_c64){CAST_F32(x), 0.0f}))                     \
  UNRUN2(c128_##S, mpb_c128, TS, ((mpb_c128){(double)x, 0.0}))                    \
  UNRUN2(f64_##S, double, TS, (double)x)                                           \
  UNRUN2(f32_##S, float, TS, CAST_F32(x))                                          \
  UNRUN2(i64_##S, int64_t, TS, CAST_INT(int64_t, uint64_t, x, I64MIN, I64MAX))     \
  UNRUN2(i32_##S, int32_t, TS, CAST_INT(int32_t, uint32_t, x, -2147483648.0, 2147483647.0)) \
  UNRUN2(u8_##S, uint8_t, TS, CAST_INT(uint8_t, uint8_t, x, 0.0, 255.0))

/* One run of a conversion: operand 0 of type TD, operand 1 of type TS. */
#define UNRUN2(name, TD, TS, EXPR)                                                 \
  static int cast_##name(void *ctx, char *const *p, const int64_t *st, int64_t n) { \
    TD *o = (TD *)p[0];                                                            \
    const TS *a = (const TS *)p[1];                                                \
    (void)ctx;                                                                     \
    for (int64_t i = 0; i < n; i++) { TS x = a[i * st[1]]; o[i * st[0]] = (EXPR); } \
    return 0;                                                                      \
  }

/* _Generic picks the rule by the source type: floats saturate, integers wrap. */
#define CAST_F32(x) _Generic((x), double: tof32((double)(x)), default: (float)(x))
#define CAST_INT(TD, UD, x, lo, hi) \
  _Generic((x), double: (TD)fsat((double)(x), lo, hi), float: (TD)fsat((double)(x), lo, hi), \
           default: (TD)(UD)(x))

CASTS(double, f64)
CASTS(float, f32)
CASTS(int64_t, i64)
CASTS(int32_t, i32)
CASTS(uint8_t, u8)

/* From a complex dtype: the real part, by the rules of its float dtype. */
#define CCASTS(TS, S, TR)                                                          \
  UNRUN2(f64_##S, double, TS, (double)x.re)                                        \
  UNRUN2(f32_##S, float, TS, CAST_F32((TR)x.re))                                   \
  UNRUN2(i64_##S, int64_t, TS, (int64_t)fsat(x.re, I64MIN, I64MAX))                \
  UNRUN2(i32_##S, int32_t, TS, (int32_t)fsat(x.re, -2147483648.0, 2147483647.0))   \
  UNRUN2(u8_##S, uint8_t, TS, (uint8_t)fsat(x.re, 0.0, 255.0))
CCASTS(mpb_c64, c64, float)
CCASTS(mpb_c128, c128, double)
UNRUN2(c64_c64, mpb_c64, mpb_c64, x)
UNRUN2(c128_c128, mpb_c128, mpb_c128, x)
UNRUN2(c64_c128, mpb_c64, mpb_c128, ((mpb_c64){tof32(x.re), tof32(x.im)}))
UNRUN2(c128_c64, mpb_c128, mpb_c64, ((mpb_c128){x.re, x.im}))

#define CASTROW(d) {cast_##d##_f64, cast_##d##_f32, cast_##d##_i64, cast_##d##_i32, \
                    cast_##d##_u8, cast_##d##_c64, cast_##d##_c128}
static const mpb_run_fn casts[MPB_NDTYPE][MPB_NDTYPE] = {
    CASTROW(f64), CASTROW(f32), CASTROW(i64), CASTROW(i32), CASTROW(u8), CASTROW(c64),
    CASTROW(c128)};

mpb_run_fn mpb_kern_cast(int dst, int src) {
  if (dst < 0 || dst >= MPB_NDTYPE || src < 0 || src >= MPB_NDTYPE) return NULL;
  return casts[dst][src];
}
