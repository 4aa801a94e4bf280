/* SPDX-License-Identifier: MIT */
/* Converting Lua values to the core's ad_arg, and keeping borrowed constant
** vectors alive for as long as the tape may read them. */
#include <string.h>
#include "adlib/lad_internal.h"
#include "array/array.h"

void lad_pushnumbers(lua_State *L, const double *x, size_t n) {
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushnumber(L, x[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static double *newbuf(lua_State *L, size_t n) {
  return lua_newuserdatauv(L, (n ? n : 1) * sizeof(double), 0);
}

double *lad_tonumbers(lua_State *L, int idx, int arg, const char *fname, size_t *n) {
  idx = lua_absindex(L, idx);
  lad_const *c = lad_testconst(L, idx);
  if (c) {
    double *b = newbuf(L, c->n);
    if (c->n) memcpy(b, c->x, c->n * sizeof(double));
    *n = c->n;
    return b;
  }
  mpb_array *a = mpb_array_test(L, idx);
  if (a && MPB_DTYPE_COMPLEX(a->dtype))
    luaL_error(L, "bad argument #%d to '%s' (real numbers expected, got a %s array)", arg, fname,
               mpb_dtype_name(a->dtype));
  if (a) {
    double *b = newbuf(L, (size_t)a->n);
    for (int64_t i = 0; i < a->n; i++) b[i] = mpb_array_getd(a, i);
    *n = (size_t)a->n;
    return b;
  }
  if (lua_type(L, idx) != LUA_TTABLE) {
    luaL_error(L, "bad argument #%d to '%s' (table of numbers or typed array expected, got %s)",
               arg, fname, luaL_typename(L, idx));
    return NULL;
  }
  lua_Integer len = luaL_len(L, idx);
  double *b = newbuf(L, (size_t)len);
  for (lua_Integer i = 1; i <= len; i++) {
    int isnum;
    lua_geti(L, idx, i);
    b[i - 1] = lua_tonumberx(L, -1, &isnum);
    if (!isnum)
      luaL_error(L, "bad argument #%d to '%s' (element %d is a %s, number expected)", arg,
                 fname, (int)i, luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  *n = (size_t)len;
  return b;
}

ad_arg lad_toarg(lua_State *L, lad_state *S, int idx, int arg, const char *fname,
                 int *owner) {
  ad_idx v;
  lad_vec *pv;
  lad_const *c;
  mpb_array *a;
  idx = lua_absindex(L, idx);
  *owner = 0;
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER: return ad_arg_scalar(lua_tonumber(L, idx));
    case LUA_TLIGHTUSERDATA:
      lad_checkvar(L, S, idx, arg, &v);
      return ad_arg_var(v, 1);
    case LUA_TTABLE: break;
    case LUA_TUSERDATA:
      if ((pv = lad_testvec(L, idx))) {
        lad_vec w;
        lad_checkvec(L, S, idx, arg, &w);
        return ad_arg_var(w.var, w.n);
      }
      if ((c = lad_testconst(L, idx))) { /* borrowed: no copy */
        *owner = idx;
        return ad_arg_const(c->x, c->n);
      }
      if ((a = mpb_array_test(L, idx))) {
        if (a->dtype == MPB_F64) { /* borrowed: no copy */
          *owner = idx;
          return ad_arg_const(a->data, (size_t)a->n);
        }
        size_t n;
        double *b = lad_tonumbers(L, idx, arg, fname, &n);
        *owner = lua_gettop(L);
        return ad_arg_const(b, n);
      }
      /* fall through */
    default:
      luaL_error(L, "bad argument #%d to '%s' (number, ad var, table or array expected, got %s)",
                 arg, fname, luaL_typename(L, idx));
  }
  /* A table: numbers only -> constant vector; with vars -> packed vector var. */
  lua_Integer len = luaL_len(L, idx), i;
  int anyvar = 0;
  for (i = 1; i <= len && !anyvar; i++) {
    anyvar = lua_geti(L, idx, i) == LUA_TLIGHTUSERDATA;
    lua_pop(L, 1);
  }
  if (!anyvar) {
    size_t n;
    double *b = lad_tonumbers(L, idx, arg, fname, &n);
    *owner = lua_gettop(L);
    return ad_arg_const(b, n);
  }
  size_t n = (size_t)len;
  double *val = newbuf(L, n ? 2 * n : 1);
  ad_idx *var = (ad_idx *)(val + n);
  _Static_assert(sizeof(ad_idx) <= sizeof(double), "ad_idx fits a double slot");
  for (i = 1; i <= len; i++) {
    int t = lua_geti(L, idx, i);
    if (t == LUA_TNUMBER) {
      val[i - 1] = lua_tonumber(L, -1);
      var[i - 1] = AD_NOVAR;
    } else if (t == LUA_TLIGHTUSERDATA) {
      lad_checkvar(L, S, -1, arg, &var[i - 1]);
    } else {
      luaL_error(L, "bad argument #%d to '%s' (element %d is a %s, number or ad var expected)",
                 arg, fname, (int)i, luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  ad_idx first;
  int rc = ad_pack(&S->tape, n, var, val, &first);
  lua_pop(L, 1);
  if (rc) lad_error(L, rc, arg, fname);
  return ad_arg_var(first, n);
}

void lad_anchor(lua_State *L, lad_state *S, int owner) {
  if (!owner) return;
  lua_getfield(L, LUA_REGISTRYINDEX, LAD_STATE_KEY);
  lua_getiuservalue(L, -1, 1);
  lua_pushvalue(L, owner);
  lua_rawseti(L, -2, ++S->nanchor);
  lua_pop(L, 2);
}
