/* SPDX-License-Identifier: MIT */
/*
** Complex arithmetic shared by mp.Complex values (array_complex.c) and the
** array kernels (array_kern.c, array_kred.c), so that a Lua loop over complex
** values and the C loop over a c128 array give the same bits. No Lua, no MPI.
**
** The formulas are NumPy's: (a+bi)(c+di) = (ac-bd) + (ad+bc)i, without C99
** Annex G's recovery of infinities from NaNs (which costs a call per
** element); division by Smith's method, which neither overflows nor
** underflows where the quotient does not; small integer powers by repeated
** squaring; everything else through C99's <complex.h>. c64 (two floats) is
** computed in double and rounded once per part, as an f32 operation other
** than + - * / is (what storing a complex value into a c64 array gives).
*/
#ifndef MPB_ARRAY_CPLX_H
#define MPB_ARRAY_CPLX_H

#include <complex.h>
#include <math.h>

typedef struct mpb_cplx { double re, im; } mpb_cplx;
/* The elements of c128 and c64 arrays: real part first, as C99's complex types. */
typedef struct mpb_c128 { double re, im; } mpb_c128;
typedef struct mpb_c64 { float re, im; } mpb_c64;

static inline mpb_cplx mpb_cx(double re, double im) { mpb_cplx z = {re, im}; return z; }

static inline mpb_cplx mpb_cadd(mpb_cplx a, mpb_cplx b) { return mpb_cx(a.re + b.re, a.im + b.im); }
static inline mpb_cplx mpb_csub(mpb_cplx a, mpb_cplx b) { return mpb_cx(a.re - b.re, a.im - b.im); }
static inline mpb_cplx mpb_cmul(mpb_cplx a, mpb_cplx b) {
  return mpb_cx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
static inline mpb_cplx mpb_cneg(mpb_cplx a) { return mpb_cx(-a.re, -a.im); }
static inline mpb_cplx mpb_cconj(mpb_cplx a) { return mpb_cx(a.re, -a.im); }

/* Smith's method, as NumPy (a zero divisor gives re/0, im/0 part by part). */
static inline mpb_cplx mpb_cdiv(mpb_cplx a, mpb_cplx b) {
  double abr = fabs(b.re), abi = fabs(b.im);
  if (abr >= abi) {
    if (abr == 0 && abi == 0) return mpb_cx(a.re / abr, a.im / abi);
    double rat = b.im / b.re, scl = 1.0 / (b.re + b.im * rat);
    return mpb_cx((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
  }
  double rat = b.re / b.im, scl = 1.0 / (b.im + b.re * rat);
  return mpb_cx((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}

/* Built part by part (a complex is laid out as double[2], C11 6.2.5): CMPLX
** is not in every compiler's <complex.h> (glibc's needs GCC), and re + im*I
** turns an infinite imaginary part into NaNs. */
static inline double _Complex mpb_c99(mpb_cplx a) {
  union { double _Complex z; double p[2]; } u;
  u.p[0] = a.re, u.p[1] = a.im;
  return u.z;
}
static inline mpb_cplx mpb_cfrom99(double _Complex z) { return mpb_cx(creal(z), cimag(z)); }

/* a^b: integer exponents up to 64 in size by repeated squaring (exact where
** the products are), others by cpow. */
static inline mpb_cplx mpb_cpow(mpb_cplx a, mpb_cplx b) {
  if (b.im == 0 && b.re == floor(b.re) && fabs(b.re) <= 64) {
    long n = (long)fabs(b.re);
    mpb_cplx r = mpb_cx(1, 0), p = a;
    for (; n; n >>= 1) {
      if (n & 1) r = mpb_cmul(r, p);
      p = mpb_cmul(p, p);
    }
    return b.re < 0 ? mpb_cdiv(mpb_cx(1, 0), r) : r;
  }
  return mpb_cfrom99(cpow(mpb_c99(a), mpb_c99(b)));
}

static inline double mpb_cabs(mpb_cplx a) { return hypot(a.re, a.im); }
static inline double mpb_carg(mpb_cplx a) { return atan2(a.im, a.re); }

/* The functions of <complex.h> by name, for the unary kernels and methods. */
#define MPB_CFUNC(name, f) \
  static inline mpb_cplx name(mpb_cplx a) { return mpb_cfrom99(f(mpb_c99(a))); }
MPB_CFUNC(mpb_csqrt, csqrt)
MPB_CFUNC(mpb_cexp, cexp)
MPB_CFUNC(mpb_clog, clog)
MPB_CFUNC(mpb_csin, csin)
MPB_CFUNC(mpb_ccos, ccos)
MPB_CFUNC(mpb_ctan, ctan)
MPB_CFUNC(mpb_casin, casin)
MPB_CFUNC(mpb_cacos, cacos)
MPB_CFUNC(mpb_catan, catan)
MPB_CFUNC(mpb_csinh, csinh)
MPB_CFUNC(mpb_ccosh, ccosh)
MPB_CFUNC(mpb_ctanh, ctanh)
#undef MPB_CFUNC
/* log10 z = log z times log10(e), part by part (NumPy's). */
static inline mpb_cplx mpb_clog10(mpb_cplx a) {
  mpb_cplx l = mpb_clog(a);
  return mpb_cx(l.re * M_LOG10E, l.im * M_LOG10E);
}

#endif
