/*
** Element-wise reduction kernels for typed arrays: out = a op b, one tight
** loop per (op, dtype) so the compiler can vectorize it. Integer sums and
** products wrap (computed unsigned: signed overflow would be undefined), as
** Lua integers do. No Lua, no MPI here.
*/
#include <string.h>

#include "array/array.h"
#include "array/array_ops.h"

static const char *const names[MPB_NRED] = {"sum", "prod", "min", "max",
                                           "land", "lor", "band", "bor"};

int mpb_red_from_name(const char *s) {
  for (int i = 0; i < MPB_NRED; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

const char *mpb_red_name(int op) { return op >= 0 && op < MPB_NRED ? names[op] : "?"; }

#define LOOP(T, E)                                            \
  do {                                                        \
    T *o_ = out;                                     \
    const T *x_ = a, *y_ = b;                                 \
    for (int64_t i = 0; i < n; i++) {                         \
      T x = x_[i], y = y_[i];                                 \
      o_[i] = (E);                                            \
    }                                                         \
  } while (0)

/* Float types: no bitwise ops. */
#define FLOATS(T)                                                     \
  switch (op) {                                                       \
    case MPB_RED_SUM: LOOP(T, x + y); return 0;                        \
    case MPB_RED_PROD: LOOP(T, x * y); return 0;                       \
    case MPB_RED_MIN: LOOP(T, y < x ? y : x); return 0;                \
    case MPB_RED_MAX: LOOP(T, y > x ? y : x); return 0;                \
    case MPB_RED_LAND: LOOP(T, (T)(x != 0 && y != 0)); return 0;       \
    case MPB_RED_LOR: LOOP(T, (T)(x != 0 || y != 0)); return 0;        \
    default: return -1;                                               \
  }

/* Integer types: U is the unsigned type of the same width. */
#define INTS(T, U)                                                    \
  switch (op) {                                                       \
    case MPB_RED_SUM: LOOP(T, (T)((U)x + (U)y)); return 0;             \
    case MPB_RED_PROD: LOOP(T, (T)((U)x * (U)y)); return 0;            \
    case MPB_RED_MIN: LOOP(T, y < x ? y : x); return 0;                \
    case MPB_RED_MAX: LOOP(T, y > x ? y : x); return 0;                \
    case MPB_RED_LAND: LOOP(T, (T)(x != 0 && y != 0)); return 0;       \
    case MPB_RED_LOR: LOOP(T, (T)(x != 0 || y != 0)); return 0;        \
    case MPB_RED_BAND: LOOP(T, x & y); return 0;                       \
    case MPB_RED_BOR: LOOP(T, x | y); return 0;                        \
    default: return -1;                                               \
  }

int mpb_red_apply(int op, int dtype, void *out, const void *a, const void *b, int64_t n) {
  switch (dtype) {
    case MPB_F64: FLOATS(double)
    case MPB_F32: FLOATS(float)
    case MPB_I64: INTS(int64_t, uint64_t)
    case MPB_I32: INTS(int32_t, uint32_t)
    case MPB_U8: INTS(uint8_t, uint8_t)
  }
  return -1;
}
