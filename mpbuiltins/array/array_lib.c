/*
** array_lib.c: the Lua face of typed arrays: mp.array, mp.array_like, the
** "mp.Array" metatable and its methods (README: "Typed arrays").
**
** Every array is contiguous: reshape keeps the element order and slice cuts
** along the LAST dimension, which in column-major order is a contiguous run.
** So a view is just (data pointer, shape) plus a reference to the owner of the
** memory, and views of views point at the root owner (no chains).
*/
#include <string.h>

#include "lauxlib.h"
#include "array/array.h"

/* ---------------------------------------------------------------- helpers */

static int checkdtype(lua_State *L, int arg) {
  const char *s = luaL_checkstring(L, arg);
  int d = mpb_dtype_from_name(s);
  if (d < 0)
    luaL_argerror(L, arg, lua_pushfstring(L, "invalid dtype '%s' (expected f64, f32, i64, i32 or u8)", s));
  return d;
}

static int64_t checkindex(lua_State *L, int arg, int64_t hi) {
  lua_Integer i = luaL_checkinteger(L, arg);
  if (i < 1 || i > hi)
    luaL_argerror(L, arg, lua_pushfstring(L, "index %I out of range 1..%I", i, (lua_Integer)hi));
  return i;
}

/* Dimensions from arguments first..last (at least one). */
static int checkdims(lua_State *L, int first, int last, int64_t *dims) {
  int nd = last - first + 1;
  luaL_argcheck(L, nd >= 1, first, "dimensions expected");
  if (nd > MPB_ARRAY_MAXDIM)
    luaL_argerror(L, first + MPB_ARRAY_MAXDIM,
                  lua_pushfstring(L, "at most %d dimensions", MPB_ARRAY_MAXDIM));
  for (int k = 0; k < nd; k++) {
    lua_Integer d = luaL_checkinteger(L, first + k);
    luaL_argcheck(L, d >= 0, first + k, "negative dimension");
    dims[k] = d;
  }
  if (mpb_array_count(MPB_U8, nd, dims) < 0) luaL_argerror(L, first, "array too large");
  return nd;
}

/* Push a view on a (at idx) with another shape, starting at element `off`;
** its owner is a's owner, or a itself. */
static mpb_array *push_view(lua_State *L, int idx, const mpb_array *a, int64_t off,
                            int ndim, const int64_t *dims) {
  if (lua_getiuservalue(L, idx, 1) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
  }
  char *data = (char *)a->data + (size_t)off * mpb_dtype_size(a->dtype);
  mpb_array *v = mpb_array_view(L, -1, data, a->dtype, ndim, dims);
  lua_remove(L, -2);
  return v;
}

/* ---------------------------------------------------------------- creation */

/* Fill a from the nested table at tidx, level `level` (0 = outermost index),
** element offset off. at[] holds the indices above, for error messages. */
static void fill_level(lua_State *L, mpb_array *a, int tidx, int level, int64_t off,
                       const int64_t *st, int64_t *at) {
  int64_t d = a->dims[level];
  int leaf = level == a->ndim - 1;
  for (int64_t k = 1; k <= d; k++) {
    at[level] = k;
    int t = lua_rawgeti(L, tidx, k);
    const char *msg = NULL;
    if (leaf) {
      msg = mpb_array_storev(L, a, off + (k - 1) * st[level], -1);
    } else if (t != LUA_TTABLE) {
      msg = lua_pushfstring(L, "table expected, got %s", luaL_typename(L, -1));
    } else if ((int64_t)lua_rawlen(L, -1) != a->dims[level + 1]) {
      msg = lua_pushfstring(L, "ragged nested table (length %I, expected %I)",
                            (lua_Integer)lua_rawlen(L, -1), (lua_Integer)a->dims[level + 1]);
    } else {
      fill_level(L, a, lua_gettop(L), level + 1, off + (k - 1) * st[level], st, at);
    }
    if (msg) {
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      luaL_addstring(&b, "at ");
      for (int j = 0; j <= level; j++)
        luaL_addstring(&b, lua_pushfstring(L, "[%I]", (lua_Integer)at[j])), lua_pop(L, 1);
      luaL_addstring(&b, ": ");
      luaL_addstring(&b, msg);
      luaL_pushresult(&b);
      luaL_argerror(L, 2, lua_tostring(L, -1));
    }
    lua_pop(L, 1);
  }
}

/* The shape of a nested table follows its first elements: {{1,2,3},{4,5,6}}
** is 2x3 with a:get(i, j) == t[i][j]. */
static int from_table(lua_State *L, int dtype, int tidx) {
  int64_t dims[MPB_ARRAY_MAXDIM], st[MPB_ARRAY_MAXDIM], at[MPB_ARRAY_MAXDIM];
  int nd = 0;
  lua_pushvalue(L, tidx);
  for (;;) {
    if (nd == MPB_ARRAY_MAXDIM)
      luaL_argerror(L, tidx, lua_pushfstring(L, "nested deeper than %d levels", MPB_ARRAY_MAXDIM));
    int64_t len = (int64_t)lua_rawlen(L, -1);
    dims[nd++] = len;
    if (len == 0) break;
    if (lua_rawgeti(L, -1, 1) != LUA_TTABLE) {
      lua_pop(L, 1);
      break;
    }
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
  mpb_array *a = mpb_array_new(L, dtype, nd, dims);
  st[0] = 1;
  for (int k = 1; k < nd; k++) st[k] = st[k - 1] * dims[k - 1];
  fill_level(L, a, tidx, 0, 0, st, at);
  return 1;
}

/* mp.array(dtype, d1, d2, ...) | mp.array(dtype, table) | mp.array(dtype, array) */
static int l_array(lua_State *L) {
  int dtype = checkdtype(L, 1);
  int top = lua_gettop(L);
  const mpb_array *src;
  if (top == 2 && lua_type(L, 2) == LUA_TTABLE) return from_table(L, dtype, 2);
  if (top == 2 && (src = mpb_array_test(L, 2)) != NULL) {
    mpb_array *a = mpb_array_new(L, dtype, src->ndim, src->dims);
    const char *msg = mpb_array_convert(L, a, src);
    if (msg) luaL_argerror(L, 2, msg);
    return 1;
  }
  if (top < 2) luaL_argerror(L, 2, "dimensions, table or array expected");
  int64_t dims[MPB_ARRAY_MAXDIM];
  int nd = checkdims(L, 2, top, dims);
  mpb_array_new(L, dtype, nd, dims);
  return 1;
}

/* mp.array_like(a [, dtype]): zeros of a's shape. */
static int l_array_like(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  int dtype = lua_isnoneornil(L, 2) ? a->dtype : checkdtype(L, 2);
  mpb_array_new(L, dtype, a->ndim, a->dims);
  return 1;
}

/* ---------------------------------------------------------------- methods */

/* Flat offset of the ndim indices at first.. (each bounds checked). */
static int64_t checkoffset(lua_State *L, const mpb_array *a, int first, int nidx) {
  if (nidx != a->ndim) {
    int arg = first + (nidx < a->ndim ? nidx : a->ndim);
    luaL_argerror(L, arg, lua_pushfstring(L, "%d ind%s expected for a %d-D array, got %d",
                                          a->ndim, a->ndim == 1 ? "ex" : "ices", a->ndim, nidx));
  }
  int64_t off = 0, st = 1;
  for (int k = 0; k < a->ndim; k++) {
    off += (checkindex(L, first + k, a->dims[k]) - 1) * st;
    st *= a->dims[k];
  }
  return off;
}

/* a:get(i, j, ...) */
static int m_get(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  mpb_array_pushelem(L, a, checkoffset(L, a, 2, lua_gettop(L) - 1));
  return 1;
}

/* a:set(i, j, ..., v) */
static int m_set(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  int top = lua_gettop(L);
  luaL_checkany(L, 2);
  int64_t off = checkoffset(L, a, 2, top - 2);
  const char *msg = mpb_array_storev(L, a, off, top);
  if (msg) luaL_argerror(L, top, msg);
  return 0;
}

static int m_dims(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  luaL_checkstack(L, a->ndim, NULL);
  for (int k = 0; k < a->ndim; k++) lua_pushinteger(L, a->dims[k]);
  return a->ndim;
}

static void totable_level(lua_State *L, const mpb_array *a, int level, int64_t off,
                          const int64_t *st) {
  int64_t d = a->dims[level];
  lua_createtable(L, d > INT32_MAX ? 0 : (int)d, 0);
  for (int64_t k = 1; k <= d; k++) {
    if (level == a->ndim - 1)
      mpb_array_pushelem(L, a, off + (k - 1) * st[level]);
    else
      totable_level(L, a, level + 1, off + (k - 1) * st[level], st);
    lua_rawseti(L, -2, k);
  }
}

/* a:totable(): a list, or nested lists with t[i][j] == a:get(i, j). */
static int m_totable(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  int64_t st[MPB_ARRAY_MAXDIM];
  st[0] = 1;
  for (int k = 1; k < a->ndim; k++) st[k] = st[k - 1] * a->dims[k - 1];
  totable_level(L, a, 0, 0, st);
  return 1;
}

static int m_copy(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  mpb_array *c = mpb_array_new(L, a->dtype, a->ndim, a->dims);
  memcpy(c->data, a->data, mpb_array_bytes(a));
  return 1;
}

static int m_zeros_like(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  mpb_array_new(L, a->dtype, a->ndim, a->dims);
  return 1;
}

/* a:reshape(d1, ...): a view with the same elements in the same order. */
static int m_reshape(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  int64_t dims[MPB_ARRAY_MAXDIM];
  int nd = checkdims(L, 2, lua_gettop(L), dims);
  int64_t n = mpb_array_count(a->dtype, nd, dims);
  if (n != a->n)
    luaL_argerror(L, 2, lua_pushfstring(L, "new shape has %I elements, array has %I",
                                        (lua_Integer)n, (lua_Integer)a->n));
  push_view(L, 1, a, 0, nd, dims);
  return 1;
}

/* a:slice(lo [, hi]): a view on lo..hi (inclusive) of the last dimension. */
static int m_slice(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  int last = a->ndim - 1;
  int64_t d = a->dims[last];
  lua_Integer lo = luaL_checkinteger(L, 2);
  lua_Integer hi = luaL_optinteger(L, 3, d);
  if (lo < 1 || lo > d + 1)
    luaL_argerror(L, 2, lua_pushfstring(L, "index %I out of range 1..%I", lo, (lua_Integer)d + 1));
  if (hi < lo - 1 || hi > d)
    luaL_argerror(L, 3, lua_pushfstring(L, "index %I out of range %I..%I", hi, lo - 1, (lua_Integer)d));
  int64_t dims[MPB_ARRAY_MAXDIM];
  memcpy(dims, a->dims, sizeof dims);
  dims[last] = hi - lo + 1;
  int64_t inner = d == 0 ? 0 : a->n / d;  /* elements per last-dim index */
  push_view(L, 1, a, (lo - 1) * inner, a->ndim, dims);
  return 1;
}

/* a:fill(v): converts v once, then replicates its bytes; returns a. */
static int m_fill(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  luaL_checkany(L, 2);
  uint64_t scratch = 0;
  mpb_array one = *a;
  one.data = &scratch;
  one.n = 1;
  const char *msg = mpb_array_storev(L, &one, 0, 2);
  if (msg) luaL_argerror(L, 2, msg);
  size_t es = mpb_dtype_size(a->dtype);
  if (es == 1 || scratch == 0) {
    memset(a->data, (int)(scratch & 0xff), mpb_array_bytes(a));
  } else {
    for (int64_t i = 0; i < a->n; i++) memcpy((char *)a->data + (size_t)i * es, &scratch, es);
  }
  lua_settop(L, 1);
  return 1;
}

/* a:sum(): a float for f64/f32, an integer (wrapping like Lua's) otherwise. */
static int m_sum(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  if (a->dtype == MPB_F64 || a->dtype == MPB_F32) {
    double s = 0;
    for (int64_t i = 0; i < a->n; i++) s += mpb_array_getd(a, i);
    lua_pushnumber(L, s);
  } else {
    uint64_t s = 0;
    for (int64_t i = 0; i < a->n; i++) {
      switch (a->dtype) {
        case MPB_I64: s += (uint64_t)((const int64_t *)a->data)[i]; break;
        case MPB_I32: s += (uint64_t)(int64_t)((const int32_t *)a->data)[i]; break;
        default: s += ((const uint8_t *)a->data)[i]; break;
      }
    }
    lua_pushinteger(L, (lua_Integer)s);
  }
  return 1;
}

/* ---------------------------------------------------------------- metamethods */

/* a[i] (flat), a.dtype, a.ndim, methods (upvalue 1). */
static int mm_index(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    mpb_array_pushelem(L, a, checkindex(L, 2, a->n) - 1);
    return 1;
  }
  const char *k = lua_tostring(L, 2);
  if (k && lua_type(L, 2) == LUA_TSTRING) {
    if (strcmp(k, "dtype") == 0) {
      lua_pushstring(L, mpb_dtype_name(a->dtype));
      return 1;
    }
    if (strcmp(k, "ndim") == 0) {
      lua_pushinteger(L, a->ndim);
      return 1;
    }
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int mm_newindex(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  if (lua_type(L, 2) != LUA_TNUMBER)
    luaL_argerror(L, 2, lua_pushfstring(L, "array index expected, got %s", luaL_typename(L, 2)));
  int64_t i = checkindex(L, 2, a->n) - 1;
  const char *msg = mpb_array_storev(L, a, i, 3);
  if (msg) luaL_argerror(L, 3, msg);
  return 0;
}

static int mm_len(lua_State *L) {
  lua_pushinteger(L, mpb_array_check(L, 1)->n);
  return 1;
}

/* "mp.Array(f64, 2x3)", followed by the elements when there are few. */
static int mm_tostring(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "mp.Array(");
  luaL_addstring(&b, mpb_dtype_name(a->dtype));
  for (int k = 0; k < a->ndim; k++) {
    lua_pushfstring(L, k ? "x%I" : ", %I", (lua_Integer)a->dims[k]);
    luaL_addvalue(&b);
  }
  luaL_addchar(&b, ')');
  if (a->n > 0 && a->n <= 8) {
    for (int64_t i = 0; i < a->n; i++) {
      luaL_addstring(&b, i ? ", " : " {");
      mpb_array_pushelem(L, a, i);
      luaL_tolstring(L, -1, NULL);
      lua_remove(L, -2);
      luaL_addvalue(&b);
    }
    luaL_addchar(&b, '}');
  }
  luaL_pushresult(&b);
  return 1;
}

static int pairs_next(lua_State *L) {
  mpb_array *a = mpb_array_check(L, 1);
  lua_Integer i = luaL_checkinteger(L, 2);
  if (i < 0 || i >= a->n) return 0;
  lua_pushinteger(L, i + 1);
  mpb_array_pushelem(L, a, i);
  return 2;
}

/* pairs(a) walks 1..#a (ipairs would stop with an error at #a + 1). */
static int mm_pairs(lua_State *L) {
  mpb_array_check(L, 1);
  lua_pushcfunction(L, pairs_next);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 0);
  return 3;
}

static const luaL_Reg methods[] = {
  {"get", m_get}, {"set", m_set}, {"dims", m_dims}, {"totable", m_totable},
  {"copy", m_copy}, {"zeros_like", m_zeros_like}, {"reshape", m_reshape},
  {"slice", m_slice}, {"fill", m_fill}, {"sum", m_sum}, {NULL, NULL}};

static const luaL_Reg metamethods[] = {
  {"__newindex", mm_newindex}, {"__len", mm_len}, {"__tostring", mm_tostring},
  {"__pairs", mm_pairs}, {NULL, NULL}};

void mpb_array_pushmt(lua_State *L) {
  if (luaL_newmetatable(L, MPB_ARRAY_MT)) {
    luaL_setfuncs(L, metamethods, 0);
    luaL_newlib(L, methods);
    lua_pushcclosure(L, mm_index, 1);
    lua_setfield(L, -2, "__index");
  }
}

static const luaL_Reg funcs[] = {
  {"array", l_array}, {"array_like", l_array_like}, {NULL, NULL}};

void mpb_open_array(lua_State *L) {
  mpb_array_pushmt(L);
  lua_pop(L, 1);
  luaL_setfuncs(L, funcs, 0);
}
