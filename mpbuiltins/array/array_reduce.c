/* SPDX-License-Identifier: MIT */
/*
** array_reduce.c: reductions of arrays in C loops (README: "Reductions").
**
**   a:sum([dim]) a:prod([dim]) a:min([dim]) a:max([dim]) a:mean([dim])
**   a:norm([p])  mp.Array.dot(a, b)
**
** Over the whole array the result is a Lua number: an integer for integer
** dtypes (sum, prod and dot wrap like Lua integers; min and max are exact), a
** float otherwise (accumulated in double, sums pairwise). Along dimension dim
** the result is an array with that extent 1 (Julia's sum(a, dims=d)): i64
** for integer sums and products, f64 for integer means, the input's dtype
** otherwise; those accumulate in order along dim (in double for f32).
** min and max of an empty array are errors; NaN anywhere gives NaN.
** Complex arrays: sum, prod, mean and dot give mp.Complex values (c128
** arrays along a dimension; c64 accumulated in c128 and rounded once), norm
** is that of |z|, min and max are errors (no order).
*/
#include <math.h>
#include <string.h>

#include "lauxlib.h"
#include "array/array.h"
#include "array/array_int.h"
#include "array/array_iter.h"
#include "array/array_kern.h"

/* Run reduction kind over a (and b for dot) into r. */
static void reduce_all(int kind, const mpb_array *a, const mpb_array *b, mpb_racc *r) {
  mpb_iter it;
  mpb_iter_init(&it, a->ndim, a->dims);
  mpb_iter_add(&it, a);
  if (b) mpb_iter_add(&it, b);
  mpb_iter_run(&it, mpb_kern_reduce(kind, a->dtype), r);
}

static void push_acc(lua_State *L, int kind, int dtype, const mpb_racc *r) {
  if (MPB_ISCPLX(dtype))
    mpb_complex_push(L, r->d, r->di);
  else if (MPB_ISFLOAT(dtype))
    lua_pushnumber(L, r->nan ? (double)NAN : r->d);
  else if (kind == MPB_R_MIN || kind == MPB_R_MAX)
    lua_pushinteger(L, r->i);
  else
    lua_pushinteger(L, (lua_Integer)r->u);
}

/* ---------------------------------------------------------------- along a dimension */

/* acc (shape of a with dim's extent 1) = acc op a, every index along dim in
** order: the binary kernel with acc repeated along dim (stride 0). */
static void accumulate(int op, mpb_array *acc, const mpb_array *a) {
  mpb_iter it;
  mpb_iter_init(&it, a->ndim, a->dims);
  mpb_iter_add(&it, acc);
  mpb_iter_add(&it, acc);
  mpb_iter_add(&it, a);
  mpb_iter_run(&it, mpb_kern_binary(op, acc->dtype), NULL);
}

/* Every element of acc set to the number v (its dtype's representation). */
static void fill_number(mpb_array *acc, double v) {
  uint64_t one[2] = {0, 0};
  mpb_array e = *acc;
  e.data = one;
  mpb_array_setd(&e, 0, v);
  size_t es = mpb_dtype_size(acc->dtype);
  mpb_iter it;
  mpb_iter_init(&it, acc->ndim, acc->dims);
  mpb_iter_add(&it, acc);
  mpb_iter_addscalar(&it, one, es);
  mpb_iter_run(&it, mpb_run_copy, &es);
}

static int reduce_dim(lua_State *L, int kind, int mean, mpb_array *a, int d, const char *fname) {
  int64_t dims[MPB_ARRAY_MAXDIM];
  memcpy(dims, a->dims, sizeof dims);
  dims[d] = 1;
  if (kind == MPB_R_MIN || kind == MPB_R_MAX) {
    if (a->dims[d] == 0) mpb_arr_argerror(L, 1, fname, "empty dimension %d", d + 1);
    mpb_array first = *a;  /* index 1 along d: the starting values */
    first.dims[d] = 1;
    first.n = mpb_array_count(a->dtype, a->ndim, first.dims);
    mpb_array *acc = mpb_array_new(L, a->dtype, a->ndim, dims);
    mpb_array_pack(&first, acc->data);
    accumulate(kind == MPB_R_MIN ? MPB_OP_MIN : MPB_OP_MAX, acc, a);
    return 1;
  }
  int R = MPB_ISCPLX(a->dtype) ? MPB_C128 : MPB_ISFLOAT(a->dtype) ? MPB_F64
          : (mean ? MPB_F64 : MPB_I64);
  int slot = lua_gettop(L) + 1;
  mpb_array *acc = mpb_array_new(L, R, a->ndim, dims);
  if (kind == MPB_R_PROD) fill_number(acc, 1.0);
  const mpb_array *src = mpb_arr_as_dtype(L, a, R);
  accumulate(kind == MPB_R_PROD ? MPB_OP_MUL : MPB_OP_ADD, acc, src);
  if (mean) {
    double cnt[2] = {(double)a->dims[d], 0.0}; /* an f64, or a c128 */
    mpb_iter it;
    mpb_iter_init(&it, acc->ndim, acc->dims);
    mpb_iter_add(&it, acc);
    mpb_iter_add(&it, acc);
    mpb_iter_addscalar(&it, cnt, mpb_dtype_size(R));
    mpb_iter_run(&it, mpb_kern_binary(MPB_OP_DIV, R), NULL);
  }
  if (a->dtype == MPB_F32 || a->dtype == MPB_C64) { /* accumulated in double, rounded once */
    mpb_arr_cast(mpb_array_new(L, a->dtype, a->ndim, dims), acc);
    return 1;
  }
  lua_settop(L, slot);
  return 1;
}

/* ---------------------------------------------------------------- the functions */

static int optdim(lua_State *L, int arg, const mpb_array *a, const char *fname) {
  if (lua_isnoneornil(L, arg)) return -1;
  int isint;
  lua_Integer d = lua_tointegerx(L, arg, &isint);
  if (!isint) mpb_arr_argerror(L, arg, fname, "dimension expected, got %s", luaL_typename(L, arg));
  if (d < 1 || d > a->ndim)
    mpb_arr_argerror(L, arg, fname, "dimension %I out of range 1..%d", d, a->ndim);
  return (int)d - 1;
}

static int reduction(lua_State *L, int kind, int mean, const char *fname) {
  mpb_array *a = mpb_arr_check(L, 1, fname);
  int d = optdim(L, 2, a, fname);
  lua_settop(L, 2);
  if (MPB_ISCPLX(a->dtype) && !mpb_kern_reduce(kind, a->dtype))
    mpb_arr_argerror(L, 1, fname, "not defined on complex arrays (no order)");
  if (d >= 0) return reduce_dim(L, kind, mean, a, d, fname);
  if ((kind == MPB_R_MIN || kind == MPB_R_MAX) && a->n == 0)
    mpb_arr_argerror(L, 1, fname, "empty array");
  if (mean && !MPB_ISFLOAT(a->dtype) && !MPB_ISCPLX(a->dtype)) a = mpb_arr_as_dtype(L, a, MPB_F64);
  mpb_racc r = {0, 0, 0, 0, 0, 0};
  if (kind == MPB_R_PROD) r.d = 1, r.u = 1;
  reduce_all(kind, a, NULL, &r);
  if (mean && MPB_ISCPLX(a->dtype)) {
    mpb_complex_push(L, r.d / (double)a->n, r.di / (double)a->n);
    return 1;
  }
  if (mean) {
    lua_pushnumber(L, r.d / (double)a->n);
    return 1;
  }
  push_acc(L, kind, a->dtype, &r);
  return 1;
}

static int sum(lua_State *L) { return reduction(L, MPB_R_SUM, 0, "sum"); }
static int prod(lua_State *L) { return reduction(L, MPB_R_PROD, 0, "prod"); }
static int min(lua_State *L) { return reduction(L, MPB_R_MIN, 0, "min"); }
static int max(lua_State *L) { return reduction(L, MPB_R_MAX, 0, "max"); }
static int mean(lua_State *L) { return reduction(L, MPB_R_SUM, 1, "mean"); }

/* a:norm([p]): p = 2 (default: Euclidean), 1, or math.huge (max |x|). A
** float, computed in double; the 2-norm rescales by max |x| when the plain
** sum of squares overflows or underflows. */
static int norm(lua_State *L) {
  mpb_array *a = mpb_arr_check(L, 1, "norm");
  double p = luaL_optnumber(L, 2, 2);
  if (p != 1 && p != 2 && p != HUGE_VAL)
    mpb_arr_argerror(L, 2, "norm", "p must be 1, 2 or math.huge, got %s", luaL_tolstring(L, 2, NULL));
  lua_settop(L, 2);
  if (!MPB_ISFLOAT(a->dtype) && !MPB_ISCPLX(a->dtype)) a = mpb_arr_as_dtype(L, a, MPB_F64);
  mpb_racc r = {0, 0, 0, 0, 0, 0};
  if (p == 1) {
    reduce_all(MPB_R_SUMABS, a, NULL, &r);
    lua_pushnumber(L, r.d);
    return 1;
  }
  mpb_racc m = {0, 0, 0, 0, 0, 0};
  reduce_all(MPB_R_MAXABS, a, NULL, &m);
  if (p == HUGE_VAL || m.nan) {
    lua_pushnumber(L, m.nan ? (double)NAN : m.d);
    return 1;
  }
  reduce_all(MPB_R_SUMSQ, a, NULL, &r);
  double s = sqrt(r.d);
  if (isfinite(m.d) && m.d > 0 && (!isfinite(s) || s < 1e-150 * (double)a->n)) {
    /* over- or underflow: the sum of (x / max|x|)^2 cannot */
    int R = MPB_ISCPLX(a->dtype) ? MPB_C128 : MPB_F64;
    double scale[2] = {m.d, 0.0};
    mpb_array *t = mpb_array_new(L, R, a->ndim, a->dims);
    mpb_iter it;
    mpb_iter_init(&it, a->ndim, a->dims);
    mpb_iter_add(&it, t);
    mpb_iter_add(&it, mpb_arr_as_dtype(L, a, R));
    mpb_iter_addscalar(&it, scale, mpb_dtype_size(R));
    mpb_iter_run(&it, mpb_kern_binary(MPB_OP_DIV, R), NULL);
    r.d = 0;
    reduce_all(MPB_R_SUMSQ, t, NULL, &r);
    s = m.d * sqrt(r.d);
  }
  lua_pushnumber(L, s);
  return 1;
}

/* mp.Array.dot(a, b): sum of a[i] * b[i] over arrays of the same shape
** (dtypes promote as in a * b). */
static int dot(lua_State *L) {
  mpb_array *a = mpb_arr_check(L, 1, "dot"), *b = mpb_arr_check(L, 2, "dot");
  if (a->ndim != b->ndim || memcmp(a->dims, b->dims, (size_t)a->ndim * sizeof *a->dims) != 0)
    mpb_arr_shapeerror(L, 2, "dot", "shape %s vs %s", b->ndim, b->dims, a->ndim, a->dims);
  lua_settop(L, 2);
  int R = mpb_arr_promote(a->dtype, b->dtype);
  a = mpb_arr_as_dtype(L, a, R);
  b = mpb_arr_as_dtype(L, b, R);
  mpb_racc r = {0, 0, 0, 0, 0, 0};
  reduce_all(MPB_R_DOT, a, b, &r);
  push_acc(L, MPB_R_DOT, R, &r);
  return 1;
}

static const luaL_Reg funcs[] = {
  {"sum", sum}, {"prod", prod}, {"min", min}, {"max", max}, {"mean", mean},
  {"norm", norm}, {"dot", dot}, {NULL, NULL}};

void mpb_array_open_reduce(lua_State *L) { luaL_setfuncs(L, funcs, 0); }
