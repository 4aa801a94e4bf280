/* SPDX-License-Identifier: MIT */
/*
** test_array_iter.c: the strided walker and the kernels behind array math
** (array_iter.h, array_kern.h) without Lua: runs found, broadcasting,
** overlap classes, Lua's integer arithmetic at the edges.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "array/array.h"
#include "array/array_iter.h"
#include "array/array_kern.h"

/* A header on caller memory (no Lua state needed). */
static mpb_array hdr(void *data, int dtype, int ndim, const int64_t *dims, const int64_t *st) {
  mpb_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = dtype;
  a.ndim = ndim;
  a.n = 1;
  int64_t cm = 1;
  a.contig = 1;
  for (int k = 0; k < MPB_ARRAY_MAXDIM; k++) {
    a.dims[k] = k < ndim ? dims[k] : 1;
    a.strides[k] = st && k < ndim ? st[k] : cm;
    if (a.dims[k] > 1 && a.strides[k] != cm) a.contig = 0;
    cm *= a.dims[k];
    a.n *= a.dims[k];
  }
  return a;
}

typedef struct { int runs; int64_t elems, longest; } counter;
static int count_run(void *ctx, char *const *p, const int64_t *st, int64_t n) {
  counter *c = ctx;
  (void)p, (void)st;
  c->runs++;
  c->elems += n;
  if (n > c->longest) c->longest = n;
  return 0;
}

Test(iter, contiguous_is_one_run) {
  double buf[60];
  int64_t d[3] = {3, 4, 5};
  mpb_array a = hdr(buf, MPB_F64, 3, d, NULL);
  mpb_iter it;
  counter c = {0, 0, 0};
  mpb_iter_init(&it, 3, d);
  mpb_iter_add(&it, &a);
  mpb_iter_add(&it, &a);
  cr_assert_eq(mpb_iter_run(&it, count_run, &c), 0);
  cr_assert(c.runs == 1 && c.elems == 60);
}

Test(iter, interior_is_one_run_per_column) {
  double buf[100];
  int64_t d[2] = {8, 8}, st[2] = {1, 10};
  mpb_array v = hdr(buf + 11, MPB_F64, 2, d, st);
  mpb_iter it;
  counter c = {0, 0, 0};
  mpb_iter_init(&it, 2, d);
  mpb_iter_add(&it, &v);
  mpb_iter_run(&it, count_run, &c);
  cr_assert(c.runs == 8 && c.longest == 8 && c.elems == 64);
}

Test(iter, broadcast_and_empty) {
  int64_t out[MPB_ARRAY_MAXDIM];
  int64_t a[2] = {3, 1}, b[2] = {1, 4}, v[1] = {3}, w[2] = {4, 3};
  cr_assert_eq(mpb_broadcast(2, a, 2, b, out), 2);
  cr_assert(out[0] == 3 && out[1] == 4);
  cr_assert_eq(mpb_broadcast(1, v, 2, b, out), 2);
  cr_assert(out[0] == 3 && out[1] == 4);
  cr_assert_eq(mpb_broadcast(2, a, 2, w, out), -1);
  cr_assert_eq(mpb_broadcast(0, NULL, 2, w, out), 2); /* a scalar */
  counter c = {0, 0, 0};
  mpb_iter it;
  int64_t z[2] = {5, 0};
  mpb_iter_init(&it, 2, z);
  cr_assert_eq(mpb_iter_run(&it, count_run, &c), 0);
  cr_assert_eq(c.runs, 0);
  /* a 3x1 column added across 3x4: stride 0 along the repeated dimension */
  double col[3] = {1, 2, 3}, res[12];
  mpb_array ca = hdr(col, MPB_F64, 2, a, NULL);
  int64_t s34[2] = {3, 4};
  mpb_array r = hdr(res, MPB_F64, 2, s34, NULL);
  mpb_iter_init(&it, 2, s34);
  mpb_iter_add(&it, &r);
  mpb_iter_add(&it, &ca);
  mpb_iter_add(&it, &ca);
  mpb_iter_run(&it, mpb_kern_binary(MPB_OP_ADD, MPB_F64), NULL);
  for (int i = 0; i < 12; i++) cr_assert_eq(res[i], 2 * col[i % 3]);
}

Test(iter, overlap_classes) {
  double buf[20];
  int64_t d[1] = {10}, rev[1] = {-1};
  mpb_array a = hdr(buf, MPB_F64, 1, d, NULL), b = hdr(buf, MPB_F64, 1, d, NULL);
  mpb_array shifted = hdr(buf + 1, MPB_F64, 1, d, NULL), after = hdr(buf + 10, MPB_F64, 1, d, NULL);
  mpb_array back = hdr(buf + 9, MPB_F64, 1, d, rev);
  cr_assert_eq(mpb_array_overlap(&a, &b), MPB_SAME);
  cr_assert_eq(mpb_array_overlap(&a, &shifted), MPB_OVERLAP);
  cr_assert_eq(mpb_array_overlap(&a, &after), MPB_DISJOINT);
  cr_assert_eq(mpb_array_overlap(&a, &back), MPB_OVERLAP);
  int64_t d2[2] = {2, 5};
  mpb_array re = hdr(buf, MPB_F64, 2, d2, NULL);
  cr_assert_eq(mpb_array_overlap(&a, &re), MPB_OVERLAP, "same bytes, other shape");
}

/* Two edge columns of a 6x5 block (column-major, leading dimension 6)
** packed in one pass, and unpacked into the other two; then two contiguous
** rows, as two block moves. Every element size. */
#define PAIR_CASE(T, es_)                                                        \
  do {                                                                           \
    T blk[30], buf[10];                                                          \
    for (int i = 0; i < 30; i++) blk[i] = (T)(i + 1);                            \
    int64_t col[2] = {1, 5}, cst[2] = {6, 6}, pk[2] = {1, 1};                    \
    size_t es = es_;                                                             \
    mpb_iter it;                                                                 \
    mpb_iter_init(&it, 2, col);                                                  \
    mpb_iter_addp(&it, buf, es, pk);                                             \
    mpb_iter_addp(&it, blk + 1, es, cst);                                        \
    mpb_iter_addp(&it, buf + 5, es, pk);                                         \
    mpb_iter_addp(&it, blk + 4, es, cst);                                        \
    cr_assert_eq(mpb_iter_run(&it, mpb_run_copy2, &es), 0);                      \
    for (int j = 0; j < 5; j++) {                                                \
      cr_assert_eq(buf[j], blk[1 + 6 * j]);                                      \
      cr_assert_eq(buf[5 + j], blk[4 + 6 * j]);                                  \
    }                                                                            \
    mpb_iter_init(&it, 2, col);                                                  \
    mpb_iter_addp(&it, blk, es, cst);                                            \
    mpb_iter_addp(&it, buf + 5, es, pk);                                         \
    mpb_iter_addp(&it, blk + 5, es, cst);                                        \
    mpb_iter_addp(&it, buf, es, pk);                                             \
    mpb_iter_run(&it, mpb_run_copy2, &es);                                       \
    for (int j = 0; j < 5; j++) {                                                \
      cr_assert_eq(blk[6 * j], (T)(5 + 6 * j));                                  \
      cr_assert_eq(blk[5 + 6 * j], (T)(2 + 6 * j));                              \
    }                                                                            \
    int64_t row[2] = {6, 1}, rst[2] = {1, 6};                                    \
    T out[12];                                                                   \
    mpb_iter_init(&it, 2, row);                                                  \
    mpb_iter_addp(&it, out, es, rst);                                            \
    mpb_iter_addp(&it, blk + 6, es, rst);                                        \
    mpb_iter_addp(&it, out + 6, es, rst);                                        \
    mpb_iter_addp(&it, blk + 24, es, rst);                                       \
    mpb_iter_run(&it, mpb_run_copy2, &es);                                       \
    for (int i = 0; i < 6; i++) {                                                \
      cr_assert_eq(out[i], blk[6 + i]);                                          \
      cr_assert_eq(out[6 + i], blk[24 + i]);                                     \
    }                                                                            \
  } while (0)

Test(iter, two_copies_in_one_pass) {
  PAIR_CASE(double, 8);
  PAIR_CASE(float, 4);
  PAIR_CASE(uint8_t, 1);
}

static void run2(int op, int dtype, void *o, void *x, void *y, int64_t n) {
  char *p[3] = {o, x, y};
  int64_t st[3] = {1, 1, 1};
  cr_assert_eq(mpb_kern_binary(op, dtype)(NULL, p, st, n), 0);
}

Test(kern, lua_integer_arithmetic) {
  int64_t x[4] = {INT64_MIN, 7, -7, INT64_MAX}, y[4] = {-1, -2, 2, 1}, o[4];
  run2(MPB_OP_IDIV, MPB_I64, o, x, y, 4);
  cr_assert(o[0] == INT64_MIN && o[1] == -4 && o[2] == -4 && o[3] == INT64_MAX);
  run2(MPB_OP_MOD, MPB_I64, o, x, y, 4);
  cr_assert(o[0] == 0 && o[1] == -1 && o[2] == 1 && o[3] == 0);
  run2(MPB_OP_ADD, MPB_I64, o, x, y, 4);
  cr_assert(o[0] == INT64_MAX && o[3] == INT64_MIN, "wraps");
  int32_t a[1] = {INT32_MIN}, b[1] = {-1}, c[1];
  run2(MPB_OP_IDIV, MPB_I32, c, a, b, 1);
  cr_assert_eq(c[0], INT32_MIN);
  int32_t zero[1] = {0};
  char *p[3] = {(char *)c, (char *)a, (char *)zero};
  int64_t st[3] = {1, 1, 1};
  cr_assert_eq(mpb_kern_binary(MPB_OP_MOD, MPB_I32)(NULL, p, st, 1), MPB_KERR_ZERODIV);
  cr_assert_null(mpb_kern_binary(MPB_OP_DIV, MPB_I32));
  cr_assert_null(mpb_kern_binary(MPB_OP_BAND, MPB_F32));
  cr_assert_null(mpb_kern_unary(MPB_FN_SQRT, MPB_U8));
  cr_assert_null(mpb_kern_unary(MPB_FN_BNOT, MPB_F64));
}

Test(kern, float_mod_and_nan) {
  double x[4] = {5.5, -5.5, NAN, 1}, y[4] = {2, 2, 1, NAN}, o[4];
  run2(MPB_OP_MOD, MPB_F64, o, x, y, 4);
  cr_assert(o[0] == 1.5 && o[1] == 0.5 && isnan(o[2]) && isnan(o[3]));
  run2(MPB_OP_MIN, MPB_F64, o, x, y, 4);
  cr_assert(o[0] == 2 && o[1] == -5.5 && isnan(o[2]) && isnan(o[3]));
}

Test(kern, casts) {
  double d[4] = {1e300, -1e300, NAN, 2.75};
  float f[4];
  int32_t i[4];
  char *p[2] = {(char *)f, (char *)d};
  int64_t st[2] = {1, 1};
  mpb_kern_cast(MPB_F32, MPB_F64)(NULL, p, st, 4);
  cr_assert(isinf(f[0]) && f[0] > 0 && isinf(f[1]) && f[1] < 0 && isnan(f[2]) && f[3] == 2.75f);
  p[0] = (char *)i;
  mpb_kern_cast(MPB_I32, MPB_F64)(NULL, p, st, 4);
  cr_assert(i[0] == INT32_MAX && i[1] == INT32_MIN && i[2] == 0 && i[3] == 2);
  int64_t big[1] = {0x100000001LL};
  uint8_t u[1];
  p[0] = (char *)u, p[1] = (char *)big;
  mpb_kern_cast(MPB_U8, MPB_I64)(NULL, p, st, 1);
  cr_assert_eq(u[0], 1, "integers wrap");
}

Test(kern, reductions_pairwise) {
  static double x[1000];
  for (int i = 0; i < 1000; i++) x[i] = 0.1;
  mpb_racc r = {0, 0, 0, 0, 0, 0};
  char *p[1] = {(char *)x};
  int64_t st[1] = {1};
  mpb_kern_reduce(MPB_R_SUM, MPB_F64)(&r, p, st, 1000);
  cr_assert(fabs(r.d - 100.0) < 1e-13, "%.17g", r.d);
  mpb_racc m = {0, 0, 0, 0, 0, 0};
  x[500] = NAN;
  mpb_kern_reduce(MPB_R_MAX, MPB_F64)(&m, p, st, 1000);
  cr_assert(m.nan);
}

Test(kern, lincomb_terms) {
  double y[3], a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
  mpb_lc lc;
  memset(&lc, 0, sizeof lc);
  lc.nterm = 2;
  lc.cf[0] = 2;
  lc.cf[1] = -1;
  char *p[3] = {(char *)y, (char *)a, (char *)b};
  int64_t st[3] = {1, 1, 1};
  mpb_kern_lincomb(MPB_F64)(&lc, p, st, 3);
  cr_assert(y[0] == -2 && y[1] == -1 && y[2] == 0);
  /* y among its own terms */
  p[2] = (char *)y;
  mpb_kern_lincomb(MPB_F64)(&lc, p, st, 3);
  cr_assert(y[0] == 4 && y[1] == 5 && y[2] == 6);
}
