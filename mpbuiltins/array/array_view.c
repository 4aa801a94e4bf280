/* SPDX-License-Identifier: MIT */
/*
** array_view.c: views over index ranges and copies between them (README:
** "Views"). A view shares its owner's memory and keeps it alive (its user
** value); a range view is strided when it does not cover whole leading
** dimensions, and every array method accepts strided views.
**
**   a:reshape(d1, ...)        same elements, same order (contiguous arrays)
**   a:slice(lo [, hi])        indices lo..hi of the last dimension
**   a:view(r1, r2, ...)       one range per dimension, Julia's view / NumPy's
**                             basic indexing, with string.sub's negative indices
**   a:interior(w [, o1, ...]) the block w in from every edge, shifted by o (the
**                             stencil's shifted views, halos' complement)
**   dst:copy_from(src)        element copy, src broadcast to dst's shape
**   a:fill(v)                 every element v
**   a:real(), a:imag()        views of a complex array's parts (f64 or f32
**                             arrays of its shape, strided); a real array's
**                             real part is itself (a view), its imaginary
**                             part a new array of zeros
*/
#include <string.h>

#include "lauxlib.h"
#include "array/array.h"
#include "array/array_int.h"
#include "array/array_iter.h"

static void *elem_ptr(const mpb_array *a, int64_t off) {
  return (char *)a->data + off * (int64_t)mpb_dtype_size(a->dtype);
}

/* a:reshape(d1, ...): a view with the same elements in the same order. */
static int reshape(lua_State *L) {
  mpb_array *a = mpb_array_checkv(L, 1);
  int64_t dims[MPB_ARRAY_MAXDIM];
  int nd = mpb_arr_checkdims(L, 2, lua_gettop(L), dims);
  int64_t n = mpb_array_count(a->dtype, nd, dims);
  if (n != a->n)
    mpb_arr_argmsg(L, 2, lua_pushfstring(L, "new shape has %I elements, array has %I",
                                        (lua_Integer)n, (lua_Integer)a->n));
  if (!a->contig) mpb_arr_argmsg(L, 1, "cannot reshape a strided view (copy it first)");
  mpb_arr_pushview(L, 1, a, a->data, nd, dims, NULL);
  return 1;
}

/* a:slice(lo [, hi]): a view on lo..hi (inclusive) of the last dimension. */
static int slice(lua_State *L) {
  mpb_array *a = mpb_array_checkv(L, 1);
  int last = a->ndim - 1;
  int64_t d = a->dims[last];
  lua_Integer lo = luaL_checkinteger(L, 2);
  lua_Integer hi = luaL_optinteger(L, 3, d);
  if (lo < 1 || lo > d + 1)
    mpb_arr_argmsg(L, 2, lua_pushfstring(L, "index %I out of range 1..%I", lo, (lua_Integer)d + 1));
  if (hi < lo - 1 || hi > d)
    mpb_arr_argmsg(L, 3, lua_pushfstring(L, "index %I out of range %I..%I", hi, lo - 1, (lua_Integer)d));
  int64_t dims[MPB_ARRAY_MAXDIM];
  memcpy(dims, a->dims, sizeof dims);
  dims[last] = hi - lo + 1;
  void *data = dims[last] > 0 ? elem_ptr(a, (lo - 1) * a->strides[last]) : a->data;
  mpb_arr_pushview(L, 1, a, data, a->ndim, dims, a->strides);
  return 1;
}

/* ---------------------------------------------------------------- view */

/* An index of a dimension of extent d: negative counts from the end (-1 is
** d), as in string.sub. */
static lua_Integer resolve(lua_Integer i, int64_t d) { return i < 0 ? d + 1 + i : i; }

static lua_Integer range_field(lua_State *L, int arg, int t, int k, lua_Integer dflt) {
  int ty = lua_geti(L, t, k);
  lua_Integer v = dflt;
  if (ty != LUA_TNIL) {
    int isint;
    v = lua_tointegerx(L, -1, &isint);
    if (!isint)
      mpb_arr_argerror(L, arg, "view", "range item %d is not an integer (%s)", k,
                       luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return v;
}

/* Dimension k of a as selected by argument arg: returns 1 and the range's
** first index (0-based), count and step when the dimension stays, 0 and the
** index when an integer drops it. */
static int range_arg(lua_State *L, int arg, const mpb_array *a, int k, int64_t *first,
                     int64_t *count, int64_t *step) {
  int64_t d = a->dims[k];
  int t = lua_type(L, arg);
  *step = 1;
  if (t == LUA_TNONE || t == LUA_TNIL || (t == LUA_TSTRING && strcmp(lua_tostring(L, arg), ":") == 0)) {
    *first = 0;
    *count = d;
    return 1;
  }
  if (t == LUA_TNUMBER) {
    int isint;
    lua_Integer i = lua_tointegerx(L, arg, &isint);
    if (!isint) mpb_arr_argerror(L, arg, "view", "number has no integer representation");
    lua_Integer r = resolve(i, d);
    if (r < 1 || r > d)
      mpb_arr_argerror(L, arg, "view", "index %I out of range 1..%I of dimension %d", i,
                       (lua_Integer)d, k + 1);
    *first = r - 1;
    return 0;
  }
  if (t != LUA_TTABLE)
    mpb_arr_argerror(L, arg, "view", "index, {lo, hi [, step]} or ':' expected, got %s",
                     luaL_typename(L, arg));
  lua_Integer st = range_field(L, arg, arg, 3, 1);
  if (st == 0) mpb_arr_argerror(L, arg, "view", "range step must not be 0");
  lua_Integer lo = resolve(range_field(L, arg, arg, 1, st > 0 ? 1 : d), d);
  lua_Integer hi = resolve(range_field(L, arg, arg, 2, st > 0 ? d : 1), d);
  lua_Integer n = st > 0 ? (hi >= lo ? (hi - lo) / st + 1 : 0) : (lo >= hi ? (lo - hi) / -st + 1 : 0);
  if (n > 0) {
    lua_Integer last = lo + (n - 1) * st;
    lua_Integer bad = (lo < 1 || lo > d) ? lo : (last < 1 || last > d) ? last : 0;
    if (bad)
      mpb_arr_argerror(L, arg, "view", "index %I out of range 1..%I of dimension %d", bad,
                       (lua_Integer)d, k + 1);
  }
  *first = n > 0 ? lo - 1 : 0;
  *count = n;
  *step = st;
  return 1;
}

/* a:view(r1, r2, ...): one argument per dimension (missing trailing ones are
** ':'): ':' or nil for the whole dimension, {lo, hi [, step]} for a range
** (kept), an integer for one index (the dimension is dropped). */
static int view(lua_State *L) {
  mpb_array *a = mpb_arr_check(L, 1, "view");
  int nargs = lua_gettop(L) - 1;
  if (nargs > a->ndim)
    mpb_arr_argerror(L, 2 + a->ndim, "view", "%d ranges for a %d-D array", nargs, a->ndim);
  int64_t dims[MPB_ARRAY_MAXDIM], strides[MPB_ARRAY_MAXDIM], off = 0;
  int nd = 0, empty = 0;
  for (int k = 0; k < a->ndim; k++) {
    int64_t first, count, step;
    int keep = range_arg(L, 2 + k, a, k, &first, &count, &step);
    off += first * a->strides[k];
    if (keep) {
      dims[nd] = count;
      strides[nd++] = step * a->strides[k];
      empty |= count == 0;
    }
  }
  if (nd == 0) { /* every dimension dropped: one element, as a 1-D array */
    dims[0] = 1;
    strides[0] = 1;
    nd = 1;
  }
  mpb_arr_pushview(L, 1, a, empty ? a->data : elem_ptr(a, off), nd, dims, strides);
  return 1;
}

/* Widths (w or {w1, w2, ...}) at arg for each dimension of a. */
static void widths(lua_State *L, int arg, const mpb_array *a, int64_t *w) {
  if (lua_type(L, arg) == LUA_TTABLE) {
    for (int k = 0; k < a->ndim; k++) {
      lua_geti(L, arg, k + 1);
      int isint;
      w[k] = lua_tointegerx(L, -1, &isint);
      if (!isint)
        mpb_arr_argerror(L, arg, "interior", "width %d is not an integer (%s)", k + 1,
                         luaL_typename(L, -1));
      lua_pop(L, 1);
    }
  } else {
    int isint;
    lua_Integer v = lua_tointegerx(L, arg, &isint);
    if (!isint)
      mpb_arr_argerror(L, arg, "interior", "width expected (integer or list), got %s",
                       luaL_typename(L, arg));
    for (int k = 0; k < a->ndim; k++) w[k] = v;
  }
}

/* a:interior(w [, o1, o2, ...]): the view a:view({1+w+o1, -1-w+o1}, ...):
** everything at least w (per dimension if a list) from the edges, shifted by
** o (default 0, |o| <= w). u:interior(1, -1, 0) is the west neighbour of
** every point of u:interior(1). */
static int interior(lua_State *L) {
  mpb_array *a = mpb_arr_check(L, 1, "interior");
  int nargs = lua_gettop(L);
  if (nargs - 2 > a->ndim)
    mpb_arr_argerror(L, 3 + a->ndim, "interior", "%d offsets for a %d-D array", nargs - 2, a->ndim);
  int64_t w[MPB_ARRAY_MAXDIM], dims[MPB_ARRAY_MAXDIM], off = 0;
  widths(L, 2, a, w);
  int empty = 0;
  for (int k = 0; k < a->ndim; k++) {
    lua_Integer o = 0;
    if (k + 3 <= nargs) {
      int isint;
      o = lua_tointegerx(L, k + 3, &isint);
      if (!isint)
        mpb_arr_argerror(L, k + 3, "interior", "offset expected, got %s", luaL_typename(L, k + 3));
    }
    if (w[k] < 0 || 2 * w[k] > a->dims[k])
      mpb_arr_argerror(L, 2, "interior", "width %I does not fit dimension %d of extent %I",
                       (lua_Integer)w[k], k + 1, (lua_Integer)a->dims[k]);
    if (o < -w[k] || o > w[k])
      mpb_arr_argerror(L, k + 3, "interior", "offset %I beyond the width %I of dimension %d", o,
                       (lua_Integer)w[k], k + 1);
    dims[k] = a->dims[k] - 2 * w[k];
    off += (w[k] + o) * a->strides[k];
    empty |= dims[k] == 0;
  }
  mpb_arr_pushview(L, 1, a, empty ? a->data : elem_ptr(a, off), a->ndim, dims, a->strides);
  return 1;
}

/* ---------------------------------------------------------------- copies */

/* Set every element of a to the number at arg (converted once, with the
** storing rules), then return a (at 1). */
static int fill_with(lua_State *L, mpb_array *a, int arg, const char *fname) {
  uint64_t scratch[2] = {0, 0}; /* one element of any dtype */
  mpb_array one = *a;
  one.data = scratch;
  const char *msg = mpb_array_storev(L, &one, 0, arg);
  if (msg) mpb_arr_argerror(L, arg, fname, "%s", msg);
  size_t es = mpb_dtype_size(a->dtype);
  if (a->contig && (es == 1 || (scratch[0] == 0 && scratch[1] == 0))) {
    memset(a->data, (int)(scratch[0] & 0xff), mpb_array_bytes(a));
  } else {
    mpb_iter it;
    mpb_iter_init(&it, a->ndim, a->dims);
    mpb_iter_add(&it, a);
    mpb_iter_addscalar(&it, scratch, es);
    mpb_iter_run(&it, mpb_run_copy, &es);
  }
  lua_settop(L, 1);
  return 1;
}

/* a:fill(v): every element v; returns a. */
static int fill(lua_State *L) {
  mpb_array *a = mpb_arr_check(L, 1, "fill");
  luaL_checkany(L, 2);
  return fill_with(L, a, 2, "fill");
}

/* ---------------------------------------------------------------- parts */

/* A view of part `which` (0 real, 1 imaginary) of complex array a (at 1):
** the float dtype of its parts, its shape, strides doubled (in floats). */
static int part_view(lua_State *L, const mpb_array *a, int which) {
  mpb_array parts = *a;
  parts.dtype = MPB_PARTS(a->dtype);
  int64_t st[MPB_ARRAY_MAXDIM];
  for (int k = 0; k < a->ndim; k++) st[k] = 2 * a->strides[k];
  char *data = (char *)a->data + (a->n ? which * mpb_dtype_size(parts.dtype) : 0);
  mpb_arr_pushview(L, 1, &parts, data, a->ndim, a->dims, st);
  return 1;
}

/* a:real(): a view of the real parts (a real array: a view of itself). */
static int real(lua_State *L) {
  mpb_array *a = mpb_arr_check(L, 1, "real");
  lua_settop(L, 1);
  if (MPB_ISCPLX(a->dtype)) return part_view(L, a, 0);
  mpb_arr_pushview(L, 1, a, a->data, a->ndim, a->dims, a->strides);
  return 1;
}

/* a:imag(): a view of the imaginary parts (a real array: new zeros). */
static int imag(lua_State *L) {
  mpb_array *a = mpb_arr_check(L, 1, "imag");
  lua_settop(L, 1);
  if (MPB_ISCPLX(a->dtype)) return part_view(L, a, 1);
  mpb_array_new(L, a->dtype, a->ndim, a->dims);
  return 1;
}

/* dst:copy_from(src): copy src's elements into dst and return dst. src is
** an array whose shape broadcasts to dst's (usually the same shape), or a
** number (as fill). Another dtype converts with the checked storing rules. A
** src that shares memory with dst is read as it was before the copy. */
static int copy_from(lua_State *L) {
  mpb_array *dst = mpb_arr_check(L, 1, "copy_from");
  if (lua_type(L, 2) == LUA_TNUMBER) return fill_with(L, dst, 2, "copy_from");
  mpb_array *src = mpb_array_testv(L, 2);
  if (!src)
    mpb_arr_argerror(L, 2, "copy_from", "mp.Array or number expected, got %s", luaL_typename(L, 2));
  if (!mpb_broadcasts_to(src->ndim, src->dims, dst->ndim, dst->dims))
    mpb_arr_shapeerror(L, 2, "copy_from", "shape %s vs %s", src->ndim, src->dims, dst->ndim, dst->dims);
  int rel = mpb_array_overlap(dst, src);
  if (rel == MPB_SAME) {
    lua_settop(L, 1);
    return 1;
  }
  if (rel == MPB_OVERLAP) {  /* read the source as it was: copy it first */
    mpb_array *tmp = mpb_array_new(L, src->dtype, src->ndim, src->dims);
    mpb_array_pack(src, tmp->data);
    src = tmp;
  }
  const char *msg = mpb_array_convert(L, dst, src);
  if (msg) mpb_arr_argerror(L, 2, "copy_from", "%s", msg);
  lua_settop(L, 1);
  return 1;
}

static const luaL_Reg funcs[] = {
  {"reshape", reshape}, {"slice", slice}, {"view", view}, {"interior", interior},
  {"copy_from", copy_from}, {"fill", fill}, {"real", real}, {"imag", imag}, {NULL, NULL}};

void mpb_array_open_view(lua_State *L) { luaL_setfuncs(L, funcs, 0); }
