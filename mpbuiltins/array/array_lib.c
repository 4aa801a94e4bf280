/* SPDX-License-Identifier: MIT */
/*
** array_lib.c: the Lua face of typed arrays: mp.array, mp.array_like, the
** "mp.Array" metatable, element access and the basic methods (README: "Typed
** arrays"). Views are made in array_view.c, math in array_math.c,
** reductions in array_reduce.c, linear combinations in array_lincomb.c; each
** adds its methods to the one methods table, which is also `mp.Array`.
**
** A view is (data pointer, shape, strides) plus a reference to the owner of
** the memory; views of views point at the root owner (no chains).
*/
#include <stdarg.h>
#include <string.h>

#include "lauxlib.h"
#include "array/array.h"
#include "array/array_int.h"
#include "array/array_iter.h"
#include "array/array_kern.h"

/* ---------------------------------------------------------------- helpers */

static int checkdtype(lua_State *L, int arg) {
  const char *s = luaL_checkstring(L, arg);
  int d = mpb_dtype_from_name(s);
  if (d < 0)
    mpb_arr_argmsg(L, arg, lua_pushfstring(L, "invalid dtype '%s' (expected f64, f32, i64, i32, "
                                          "u8, c64 or c128)", s));
  return d;
}

static int64_t checkindex(lua_State *L, int arg, int64_t hi) {
  lua_Integer i = luaL_checkinteger(L, arg);
  if (i < 1 || i > hi)
    mpb_arr_argmsg(L, arg, lua_pushfstring(L, "index %I out of range 1..%I", i, (lua_Integer)hi));
  return i;
}

/* Dimensions from arguments first..last (at least one). */
int mpb_arr_checkdims(lua_State *L, int first, int last, int64_t *dims) {
  int nd = last - first + 1;
  if (!(nd >= 1)) mpb_arr_argmsg(L, first, "dimensions expected");
  if (nd > MPB_ARRAY_MAXDIM)
    mpb_arr_argmsg(L, first + MPB_ARRAY_MAXDIM,
                  lua_pushfstring(L, "at most %d dimensions", MPB_ARRAY_MAXDIM));
  for (int k = 0; k < nd; k++) {
    lua_Integer d = luaL_checkinteger(L, first + k);
    if (!(d >= 0)) mpb_arr_argmsg(L, first + k, "negative dimension");
    dims[k] = d;
  }
  if (mpb_array_count(MPB_U8, nd, dims) < 0) mpb_arr_argmsg(L, first, "array too large");
  return nd;
}

mpb_array *mpb_arr_pushview(lua_State *L, int idx, const mpb_array *a, void *data, int ndim,
                            const int64_t *dims, const int64_t *strides) {
  idx = lua_absindex(L, idx);
  if (lua_getiuservalue(L, idx, 1) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
  }
  mpb_array *v = mpb_array_strided(L, -1, data, a->dtype, ndim, dims, strides);
  lua_remove(L, -2);
  return v;
}

int mpb_arr_argerror(lua_State *L, int arg, const char *fname, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *msg = lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  return luaL_error(L, "bad argument #%d to 'mp.Array.%s' (%s%s)", arg, fname,
                    mpb_arr_pushprefix(L), msg);
}

const char *mpb_arr_pushprefix(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, MPB_ARRAY_PREFIX_KEY) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    lua_pushliteral(L, "");
    return "";
  }
  lua_call(L, 0, 1);
  return lua_pushfstring(L, "%s ", lua_tostring(L, -1) ? lua_tostring(L, -1) : "");
}

int mpb_arr_argmsg(lua_State *L, int arg, const char *msg) {
  const char *name = mpb_arr_pushname(L, &arg);
  if (strncmp(name, "a[i]", 4) == 0) /* the index (2) or the value (3) */
    return luaL_error(L, "bad %s in '%s' (%s%s)", arg == 3 ? "value" : "index", name,
                      mpb_arr_pushprefix(L), msg);
  return luaL_error(L, "bad argument #%d to '%s' (%s%s)", arg, name, mpb_arr_pushprefix(L), msg);
}

const char *mpb_arr_pushshape(lua_State *L, int ndim, const int64_t *dims) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int k = 0; k < ndim; k++) {
    lua_pushfstring(L, k ? "x%I" : "%I", (lua_Integer)dims[k]);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

int mpb_arr_shapeerror(lua_State *L, int arg, const char *fname, const char *fmt, int na,
                       const int64_t *da, int nb, const int64_t *db) {
  const char *sa = mpb_arr_pushshape(L, na, da);
  const char *sb = mpb_arr_pushshape(L, nb, db);
  return mpb_arr_argerror(L, arg, fname, fmt, sa, sb);
}

void mpb_arr_cast(mpb_array *dst, const mpb_array *src) {
  mpb_iter it;
  mpb_iter_init(&it, dst->ndim, dst->dims);
  mpb_iter_add(&it, dst);
  mpb_iter_add(&it, src);
  mpb_iter_run(&it, mpb_kern_cast(dst->dtype, src->dtype), NULL);
}

mpb_array *mpb_arr_check(lua_State *L, int arg, const char *fname) {
  mpb_array *a = mpb_array_testv(L, arg);
  if (!a) mpb_arr_argerror(L, arg, fname, "mp.Array expected, got %s", luaL_typename(L, arg));
  return a;
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
      mpb_arr_argmsg(L, 2, lua_tostring(L, -1));
    }
    lua_pop(L, 1);
  }
}

/* The shape of a nested table follows its first elements: {{1,2,3},{4,5,6}}
** is 2x3 with a:get(i, j) == t[i][j]. */
static int from_table(lua_State *L, int dtype, int tidx) {
  int64_t dims[MPB_ARRAY_MAXDIM], st[MPB_ARRAY_MAXDIM], at[MPB_ARRAY_MAXDIM];
  int nd = 0;
  int64_t entries = 0; /* a keyed field would be dropped silently: refuse it */
  for (lua_pushnil(L); lua_next(L, tidx); lua_pop(L, 1)) entries++;
  if (entries != (int64_t)lua_rawlen(L, tidx))
    mpb_arr_argmsg(L, tidx, "a list expected (the table has fields that are not 1..n)");
  lua_pushvalue(L, tidx);
  for (;;) {
    if (nd == MPB_ARRAY_MAXDIM)
      mpb_arr_argmsg(L, tidx, lua_pushfstring(L, "nested deeper than %d levels", MPB_ARRAY_MAXDIM));
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
static int array(lua_State *L) {
  int dtype = checkdtype(L, 1);
  int top = lua_gettop(L);
  const mpb_array *src;
  if (top == 2 && lua_type(L, 2) == LUA_TTABLE) return from_table(L, dtype, 2);
  if (top == 2 && (src = mpb_array_testv(L, 2)) != NULL) {
    mpb_array *a = mpb_array_new(L, dtype, src->ndim, src->dims);
    const char *msg = mpb_array_convert(L, a, src);
    if (msg) mpb_arr_argmsg(L, 2, msg);
    return 1;
  }
  if (top < 2) mpb_arr_argmsg(L, 2, "dimensions, table or array expected");
  int64_t dims[MPB_ARRAY_MAXDIM];
  int nd = mpb_arr_checkdims(L, 2, top, dims);
  mpb_array_new(L, dtype, nd, dims);
  return 1;
}

/* mp.array_like(a [, dtype]): zeros of a's shape (and attribute). */
static int array_like(lua_State *L) {
  mpb_array *a = mpb_array_checkv(L, 1);
  int dtype = lua_isnoneornil(L, 2) ? a->dtype : checkdtype(L, 2);
  mpb_array_new(L, dtype, a->ndim, a->dims);
  mpb_array_copyattr(L, 1, -1);
  return 1;
}

/* ---------------------------------------------------------------- methods */

/* Offset from a->data of the ndim indices at first.. (each bounds checked). */
static int64_t checkoffset(lua_State *L, const mpb_array *a, int first, int nidx) {
  if (nidx != a->ndim) {
    int arg = first + (nidx < a->ndim ? nidx : a->ndim);
    mpb_arr_argmsg(L, arg, lua_pushfstring(L, "%d ind%s expected for a %d-D array, got %d",
                                          a->ndim, a->ndim == 1 ? "ex" : "ices", a->ndim, nidx));
  }
  int64_t off = 0;
  for (int k = 0; k < a->ndim; k++) off += (checkindex(L, first + k, a->dims[k]) - 1) * a->strides[k];
  return off;
}

/* a:get(i, j, ...) */
static int get(lua_State *L) {
  mpb_array *a = mpb_array_checkv(L, 1);
  mpb_array_pushelem(L, a, checkoffset(L, a, 2, lua_gettop(L) - 1));
  return 1;
}

/* a:set(i, j, ..., v) */
static int set(lua_State *L) {
  mpb_array *a = mpb_array_checkv(L, 1);
  int top = lua_gettop(L);
  luaL_checkany(L, 2);
  int64_t off = checkoffset(L, a, 2, top - 2);
  const char *msg = mpb_array_storev(L, a, off, top);
  if (msg) mpb_arr_argmsg(L, top, msg);
  return 0;
}

static int dims(lua_State *L) {
  mpb_array *a = mpb_array_checkv(L, 1);
  luaL_checkstack(L, a->ndim, NULL);
  for (int k = 0; k < a->ndim; k++) lua_pushinteger(L, a->dims[k]);
  return a->ndim;
}

/* a:strides(): the step between neighbours along each dimension, in elements. */
static int strides(lua_State *L) {
  mpb_array *a = mpb_array_checkv(L, 1);
  luaL_checkstack(L, a->ndim, NULL);
  for (int k = 0; k < a->ndim; k++) lua_pushinteger(L, a->strides[k]);
  return a->ndim;
}

static void totable_level(lua_State *L, const mpb_array *a, int level, int64_t off) {
  int64_t d = a->dims[level];
  lua_createtable(L, d > INT32_MAX ? 0 : (int)d, 0);
  for (int64_t k = 1; k <= d; k++) {
    if (level == a->ndim - 1)
      mpb_array_pushelem(L, a, off + (k - 1) * a->strides[level]);
    else
      totable_level(L, a, level + 1, off + (k - 1) * a->strides[level]);
    lua_rawseti(L, -2, k);
  }
}

/* a:totable(): a list, or nested lists with t[i][j] == a:get(i, j). */
static int totable(lua_State *L) {
  mpb_array *a = mpb_array_checkv(L, 1);
  totable_level(L, a, 0, 0);
  return 1;
}

/* a:copy(): a new contiguous array owning its elements (packs a view). */
static int copy(lua_State *L) {
  mpb_array *a = mpb_array_checkv(L, 1);
  mpb_array *c = mpb_array_new(L, a->dtype, a->ndim, a->dims);
  mpb_array_pack(a, c->data);
  mpb_array_copyattr(L, 1, -1);
  return 1;
}

static int zeros_like(lua_State *L) {
  mpb_array *a = mpb_array_checkv(L, 1);
  mpb_array_new(L, a->dtype, a->ndim, a->dims);
  mpb_array_copyattr(L, 1, -1);
  return 1;
}

/* ---------------------------------------------------------------- metamethods */

/* a[i] (flat), a.dtype, a.ndim, a.contiguous, methods (upvalue 1).
** The fast path is a contiguous array and an integer key in range: one
** metatable comparison (upvalue 2, instead of luaL_checkudata's registry
** lookup) and no other call. */
static int mm_index(lua_State *L) {
  mpb_array *a = lua_touserdata(L, 1);
  int isnum = lua_type(L, 2) == LUA_TNUMBER;
  if (a && lua_getmetatable(L, 1) && lua_rawequal(L, -1, lua_upvalueindex(2))) {
    lua_pop(L, 1);
    if (isnum) {
      int isint;
      lua_Integer i = lua_tointegerx(L, 2, &isint);
      if (isint && (lua_Unsigned)i - 1u < (lua_Unsigned)a->n) {
        mpb_array_pushelem(L, a, a->contig ? i - 1 : mpb_array_offset(a, i - 1));
        return 1;
      }
    }
  } else {
    a = mpb_array_checkv(L, 1);  /* raises */
  }
  if (isnum) {
    mpb_array_pushelem(L, a, mpb_array_offset(a, checkindex(L, 2, a->n) - 1));
    return 1;
  }
  /* the attribute first (a distributed array's own methods and fields), then
  ** the methods: a:add(b) is more frequent than a.dtype */
  if (lua_getiuservalue(L, 1, 2) == LUA_TTABLE) {
    lua_pushvalue(L, 2);
    if (lua_gettable(L, -2) != LUA_TNIL) return 1;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
  if (k) {
    if (strcmp(k, "dtype") == 0) {
      lua_pushstring(L, mpb_dtype_name(a->dtype));
      return 1;
    }
    if (strcmp(k, "ndim") == 0) {
      lua_pushinteger(L, a->ndim);
      return 1;
    }
    if (strcmp(k, "contiguous") == 0) {
      lua_pushboolean(L, a->contig);
      return 1;
    }
  }
  return 1; /* nil */
}

/* a[i] = v: the same fast path as mm_index (upvalue 1: the metatable). */
static int mm_newindex(lua_State *L) {
  mpb_array *a = lua_touserdata(L, 1);
  if (!a || !lua_getmetatable(L, 1) || !lua_rawequal(L, -1, lua_upvalueindex(1)))
    a = mpb_array_checkv(L, 1);  /* raises */
  lua_settop(L, 3);
  if (lua_type(L, 2) != LUA_TNUMBER)
    mpb_arr_argmsg(L, 2, lua_pushfstring(L, "array index expected, got %s", luaL_typename(L, 2)));
  int isint;
  lua_Integer i = lua_tointegerx(L, 2, &isint);
  if (!isint || (lua_Unsigned)i - 1u >= (lua_Unsigned)a->n) i = checkindex(L, 2, a->n);
  const char *msg = mpb_array_storev(L, a, a->contig ? i - 1 : mpb_array_offset(a, i - 1), 3);
  if (msg) mpb_arr_argmsg(L, 3, msg);
  return 0;
}

static int mm_len(lua_State *L) {
  lua_pushinteger(L, mpb_array_checkv(L, 1)->n);
  return 1;
}

/* "mp.Array(f64, 2x3)", followed by the elements when there are few; an
** attribute with a `tostring` field prints the array instead. */
static int mm_tostring(lua_State *L) {
  mpb_array *a = mpb_array_checkv(L, 1);
  if (mpb_array_getattr(L, 1) == LUA_TTABLE && lua_getfield(L, -1, "tostring") == LUA_TFUNCTION) {
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    return 1;
  }
  lua_settop(L, 1);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "mp.Array(");
  luaL_addstring(&b, mpb_dtype_name(a->dtype));
  luaL_addstring(&b, ", ");
  mpb_arr_pushshape(L, a->ndim, a->dims);
  luaL_addvalue(&b);
  luaL_addchar(&b, ')');
  if (a->n > 0 && a->n <= 8) {
    for (int64_t i = 0; i < a->n; i++) {
      luaL_addstring(&b, i ? ", " : " {");
      mpb_array_pushelem(L, a, mpb_array_offset(a, i));
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
  mpb_array *a = mpb_array_checkv(L, 1);
  lua_Integer i = luaL_checkinteger(L, 2);
  if (i < 0 || i >= a->n) return 0;
  lua_pushinteger(L, i + 1);
  mpb_array_pushelem(L, a, mpb_array_offset(a, i));
  return 2;
}

/* pairs(a) walks 1..#a (ipairs would stop with an error at #a + 1). */
static int mm_pairs(lua_State *L) {
  mpb_array_checkv(L, 1);
  lua_pushcfunction(L, pairs_next);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 0);
  return 3;
}

static const luaL_Reg methods[] = {
  {"get", get}, {"set", set}, {"dims", dims}, {"strides", strides}, {"totable", totable},
  {"copy", copy}, {"zeros_like", zeros_like}, {NULL, NULL}};

static const luaL_Reg metamethods[] = {
  {"__len", mm_len}, {"__tostring", mm_tostring}, {"__pairs", mm_pairs}, {NULL, NULL}};

void mpb_array_pushmt(lua_State *L) {
  if (luaL_newmetatable(L, MPB_ARRAY_MT)) {
    int mt = lua_gettop(L);
    luaL_setfuncs(L, metamethods, 0);
    luaL_newlib(L, methods);
    mpb_array_open_view(L);
    mpb_array_open_math(L);
    mpb_array_open_reduce(L);
    mpb_array_open_lincomb(L);
    lua_pushvalue(L, mt);
    lua_pushcclosure(L, mm_index, 2);
    lua_setfield(L, mt, "__index");
    lua_pushvalue(L, mt);
    lua_pushcclosure(L, mm_newindex, 1);
    lua_setfield(L, mt, "__newindex");
  }
}

static const luaL_Reg funcs[] = {
  {"array", array}, {"array_like", array_like}, {NULL, NULL}};

/* mp.array, mp.array_like, and mp.Array: the methods table, so that every
** method is also a function (mp.Array.add(a, b) is a:add(b)). */
void mpb_open_array(lua_State *L) {
  mpb_open_complex(L);
  mpb_array_pushmt(L);
  lua_getfield(L, -1, "__index");
  lua_getupvalue(L, -1, 1);
  lua_setfield(L, -4, "Array");
  lua_pop(L, 2);
  luaL_setfuncs(L, funcs, 0);
}


const char *mpb_arr_pushname(lua_State *L, int *arg) {
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar) || !lua_getinfo(L, "nf", &ar)) return lua_pushliteral(L, "?");
  lua_CFunction f = lua_tocfunction(L, -1);
  lua_pop(L, 1);
  if (strcmp(ar.namewhat, "metamethod") == 0 && ar.name) {
    if (strcmp(ar.name, "index") == 0) return lua_pushliteral(L, "a[i]");
    if (strcmp(ar.name, "newindex") == 0) return lua_pushliteral(L, "a[i] = v");
    return lua_pushfstring(L, "mp.Array __%s", ar.name);
  }
  if (strcmp(ar.namewhat, "method") == 0 && ar.name) {
    if (arg) (*arg)--;
    return lua_pushfstring(L, "a:%s", ar.name);
  }
  for (int i = 0; funcs[i].name; i++)
    if (funcs[i].func == f) return lua_pushfstring(L, "mp.%s", funcs[i].name);
  int top = lua_gettop(L);
  mpb_array_pushmt(L); /* mp.Array.f(a, ...): the methods table */
  lua_getfield(L, -1, "__index");
  if (lua_getupvalue(L, -1, 1) && lua_istable(L, -1)) {
    int t = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, t)) {
      if (lua_type(L, -2) == LUA_TSTRING && lua_tocfunction(L, -1) == f && f) {
        const char *name = lua_pushfstring(L, "mp.Array.%s", lua_tostring(L, -2));
        lua_replace(L, t - 2);
        lua_settop(L, t - 2);
        return name;
      }
      lua_pop(L, 1);
    }
  }
  lua_settop(L, top);
  return lua_pushstring(L, ar.name ? ar.name : "?");
}
