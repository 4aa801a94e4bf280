/* SPDX-License-Identifier: MIT */
/*
** What mp.mapper reads from its caller on rank 0: parameter vectors (numbers
** and vars, from tables, typed arrays and ad vectors) and the static data,
** checked for shipping when the handle is made and, with check_data,
** snapshotted and compared on each call.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "array/array.h"
#include "adlib/lad.h"
#include "map/map_int.h"
#include "wire/wire.h"

/* ------------------------------------------------------ parameters */
static void param_name(char *buf, size_t n, const char *what, int64_t j) {
  if (j > 0) snprintf(buf, n, "%s[%lld]", what, (long long)j);
  else snprintf(buf, n, "%s", what);
}

int64_t mpb_map_param_len(lua_State *L, int idx, const char *what, int64_t j) {
  ad_idx first;
  size_t n;
  mpb_array *a;
  const double *cx;
  if (lad_tovec(L, idx, &first, &n)) return (int64_t)n;
  if (lad_toconst(L, idx, &cx, &n)) return (int64_t)n;
  if ((a = mpb_array_test(L, idx)) != NULL && !MPB_DTYPE_COMPLEX(a->dtype)) return a->n;
  if (lua_type(L, idx) == LUA_TTABLE) return (int64_t)lua_rawlen(L, idx);
  mpb_state *st = mpb_get(L);
  char name[64];
  param_name(name, sizeof name, what, j);
  return luaL_error(L, "mp.mapper: [rank 0/%d] %s is a %s (expected a table of numbers, a real mp.array or an ad vector)",
                    st->size, name, a ? mpb_dtype_name(a->dtype) : luaL_typename(L, idx));
}

/* A vector read again (a finalizer may have run since its length was
** measured) that no longer has the length the buffers were made for. */
static void changed(lua_State *L, const char *what, int64_t j, size_t was, size_t now) {
  char name[64];
  param_name(name, sizeof name, what, j);
  luaL_error(L, "mp.mapper: [rank 0/%d] %s changed while the call read it (%d values, then %d)",
             mpb_get(L)->size, name, (int)was, (int)now);
}

size_t mpb_map_param_read(lua_State *L, int idx, double *v, ad_idx *var, size_t len,
                          const char *what, int64_t j) {
  ad_tape *t = lad_tape(L);
  ad_idx first;
  size_t n, nv = 0;
  mpb_array *a;
  if (lad_tovec(L, idx, &first, &n)) {
    if (n != len) changed(L, what, j, len, n);
    for (size_t i = 0; i < n; i++) v[i] = t->val[first + i], var[i] = first + (ad_idx)i;
    return n;
  }
  const double *cx;
  if (lad_toconst(L, idx, &cx, &n)) {
    if (n != len) changed(L, what, j, len, n);
    for (size_t i = 0; i < n; i++) v[i] = cx[i], var[i] = AD_NOVAR;
    return 0;
  }
  if ((a = mpb_array_test(L, idx)) != NULL) {
    if ((size_t)a->n != len) changed(L, what, j, len, (size_t)a->n);
    for (int64_t i = 0; i < a->n; i++) v[i] = mpb_array_getd(a, i), var[i] = AD_NOVAR;
    return 0;
  }
  if (lua_type(L, idx) != LUA_TTABLE) changed(L, what, j, len, 0);
  for (size_t i = 0; i < len; i++) { /* the length measured: a table may have grown since */
    lua_rawgeti(L, idx, (lua_Integer)i + 1);
    if (lua_type(L, -1) == LUA_TNUMBER) {
      v[i] = lua_tonumber(L, -1);
      var[i] = AD_NOVAR;
    } else if (lad_tovar(L, -1, &var[i], &v[i])) {
      nv++;
    } else {
      char name[64];
      param_name(name, sizeof name, what, j);
      luaL_error(L, "mp.mapper: [rank 0/%d] %s[%d] is a %s%s (expected a number or an ad var)",
                 mpb_get(L)->size, name, (int)i + 1, luaL_typename(L, -1),
                 lua_type(L, -1) == LUA_TLIGHTUSERDATA ? " (a var from a finished tape?)" : "");
    }
    lua_pop(L, 1);
  }
  return nv;
}

/* ------------------------------------------------------------ data */
void mpb_map_check_data(lua_State *L, int idx, int arg, int snapshot) {
  mpb_state *st = mpb_get(L);
  idx = lua_absindex(L, idx);
  mpb_wbuf *b = mpb_encode_msg(L, idx, 1, "mapper", arg, 0);
  if (!snapshot) {
    mpb_encode_done(st, b);
    lua_pop(L, 1);
    return;
  }
  size_t len = b->len + b->extlen;
  char *flat = lua_newuserdatauv(L, len ? len : 1, 0);
  mpb_wbuf_flatten(b, flat);
  mpb_encode_done(st, b);
  char err[MPB_ERRLEN];
  if (mpb_wire_decode(L, flat, len, 0, err, sizeof err) != 1)
    luaL_error(L, "mp.mapper: [rank 0/%d] cannot copy the data: %s", st->size, err);
  lua_replace(L, -3); /* the copy replaces the buffer userdata */
  lua_pop(L, 1);
}

/* Deep equality of the values at a and b; seen maps a's tables to b's (so
** shared and cyclic tables are compared once). */
static int same(lua_State *L, int a, int b, int seen, int depth) {
  int t = lua_type(L, a);
  if (t != lua_type(L, b)) return 0;
  if (t == LUA_TNUMBER) {
    if (lua_isinteger(L, a) != lua_isinteger(L, b)) return 0;
    if (lua_isinteger(L, a)) return lua_tointeger(L, a) == lua_tointeger(L, b);
    double x = lua_tonumber(L, a), y = lua_tonumber(L, b);
    return x == y ? signbit(x) == signbit(y) : (isnan(x) && isnan(y));
  }
  if (t == LUA_TFUNCTION) return 1; /* bytecode is not compared */
  if (t == LUA_TUSERDATA) {
    mpb_array *x = mpb_array_test(L, a), *y = mpb_array_test(L, b);
    if (!x || !y) return lua_rawequal(L, a, b);
    if (x->dtype != y->dtype || x->ndim != y->ndim || x->n != y->n) return 0;
    for (int d = 0; d < x->ndim; d++)
      if (x->dims[d] != y->dims[d]) return 0;
    return memcmp(x->data, y->data, mpb_array_bytes(x)) == 0;
  }
  if (t != LUA_TTABLE) return lua_rawequal(L, a, b);
  if (depth > MPB_WIRE_MAXDEPTH) return 0;
  lua_pushvalue(L, a);
  if (lua_rawget(L, seen) != LUA_TNIL) {
    int r = lua_rawequal(L, -1, b);
    lua_pop(L, 1);
    return r;
  }
  lua_pop(L, 1);
  lua_pushvalue(L, a);
  lua_pushvalue(L, b);
  lua_rawset(L, seen);
  luaL_checkstack(L, 4, "data too deep to check");
  lua_Integer na = 0, nb = 0;
  lua_pushnil(L);
  while (lua_next(L, a)) {
    na++;
    int v = lua_gettop(L);
    lua_pushvalue(L, v - 1);
    lua_rawget(L, b); /* table keys are copies: such an entry reads as changed */
    int ok = same(L, v, v + 1, seen, depth + 1);
    lua_pop(L, 2);
    if (!ok) {
      lua_pop(L, 1);
      return 0;
    }
  }
  lua_pushnil(L);
  while (lua_next(L, b)) nb++, lua_pop(L, 1);
  return na == nb;
}

int mpb_map_same(lua_State *L, int a, int b) {
  a = lua_absindex(L, a), b = lua_absindex(L, b);
  lua_newtable(L);
  int r = same(L, a, b, lua_gettop(L), 0);
  lua_pop(L, 1);
  return r;
}
