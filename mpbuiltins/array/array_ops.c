/* SPDX-License-Identifier: MIT */
/*
** Element-wise reduction kernels for the collectives' named ops: out = a op b
** on contiguous elements. sum, prod, min, max, band and bor are array math's
** own kernels (array_kern.c: integer sums and products wrap as Lua integers
** do, min and max propagate NaN); only the logical ops live here. No Lua, no
** MPI here.
*/
#include <string.h>

#include "array/array.h"
#include "array/array_kern.h"
#include "array/array_ops.h"

static const char *const names[MPB_NRED] = {"sum", "prod", "min", "max",
                                           "land", "lor", "band", "bor"};

int mpb_red_from_name(const char *s) {
  for (int i = 0; i < MPB_NRED; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

const char *mpb_red_name(int op) { return op >= 0 && op < MPB_NRED ? names[op] : "?"; }

/* land, lor: 1 or 0 in the dtype. */
#define LOGIC(T, E)                                           \
  do {                                                        \
    T *o_ = out;                                              \
    const T *x_ = a, *y_ = b;                                 \
    for (int64_t i = 0; i < n; i++) {                         \
      T x = x_[i], y = y_[i];                                 \
      o_[i] = (T)(E);                                         \
    }                                                         \
  } while (0)

#define LOGIC_OPS(T)                                                   \
  if (op == MPB_RED_LAND) LOGIC(T, x != 0 && y != 0);                  \
  else LOGIC(T, x != 0 || y != 0);                                     \
  return 0

static int logic(int op, int dtype, void *out, const void *a, const void *b, int64_t n) {
  switch (dtype) {
    case MPB_F64: LOGIC_OPS(double);
    case MPB_F32: LOGIC_OPS(float);
    case MPB_I64: LOGIC_OPS(int64_t);
    case MPB_I32: LOGIC_OPS(int32_t);
    case MPB_U8: LOGIC_OPS(uint8_t);
  }
  return -1;
}

int mpb_red_apply(int op, int dtype, void *out, const void *a, const void *b, int64_t n) {
  static const int binop[MPB_NRED] = {
    [MPB_RED_SUM] = MPB_OP_ADD, [MPB_RED_PROD] = MPB_OP_MUL, [MPB_RED_MIN] = MPB_OP_MIN,
    [MPB_RED_MAX] = MPB_OP_MAX, [MPB_RED_LAND] = -1,         [MPB_RED_LOR] = -1,
    [MPB_RED_BAND] = MPB_OP_BAND, [MPB_RED_BOR] = MPB_OP_BOR};
  if (op < 0 || op >= MPB_NRED || dtype < 0 || dtype >= MPB_NDTYPE) return -1;
  if (binop[op] < 0) return logic(op, dtype, out, a, b, n);
  mpb_run_fn f = mpb_kern_binary(binop[op], dtype);
  if (!f) return -1;
  if (n > 0) {
    char *p[3] = {out, (char *)a, (char *)b};
    static const int64_t unit[3] = {1, 1, 1};
    f(NULL, p, unit, n);
  }
  return 0;
}
