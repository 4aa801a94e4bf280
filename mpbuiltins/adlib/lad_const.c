/* SPDX-License-Identifier: MIT */
/*
** ad.Const: a constant vector (or matrix) of doubles with the interface of a
** vector var. ad functions return one when no argument is a var, so the same
** model code runs on vars (recorded) and on numbers (computed, nothing
** taped): `ad.sub(y, mu) / s` works both ways, and a plain mp.mapper call
** hands f its parameters as ad.Consts. Values are contiguous doubles that
** every ad function borrows without copying.
*/
#include <string.h>
#include "adlib/lad_internal.h"
#include "array/array.h"

double *lad_newconst(lua_State *L, size_t n) {
  lad_const *c = lua_newuserdatauv(L, sizeof *c + n * sizeof(double), 1);
  c->x = (double *)(c + 1);
  c->n = n;
  c->rows = n;
  c->cols = 0;
  luaL_setmetatable(L, LAD_CONST_MT);
  return c->x;
}

void lad_pushconst(lua_State *L, const double *x, size_t n) {
  double *y = lad_newconst(L, n);
  if (n) memcpy(y, x, n * sizeof(double));
}

lad_const *lad_testconst(lua_State *L, int idx) {
  return luaL_testudata(L, idx, LAD_CONST_MT);
}

int lad_matshape(lua_State *L, int idx, size_t *rows, size_t *cols) {
  lad_vec *v;
  lad_const *c;
  mpb_array *a;
  if ((v = lad_testvec(L, idx)) && v->cols) {
    *rows = v->rows, *cols = v->cols;
    return 1;
  }
  if ((c = lad_testconst(L, idx)) && c->cols) {
    *rows = c->rows, *cols = c->cols;
    return 1;
  }
  if ((a = mpb_array_test(L, idx)) && a->ndim == 2) {
    *rows = (size_t)a->dims[0], *cols = (size_t)a->dims[1];
    return 1;
  }
  return 0;
}

/* c[i]: a number (nil out of range, as a table); c:method otherwise. */
static int const_index(lua_State *L) {
  lad_const *c = luaL_checkudata(L, 1, LAD_CONST_MT);
  size_t i;
  if (lua_type(L, 2) != LUA_TNUMBER) lad_method(L);
  else if (!lad_index(L, 2, c->n, &i)) lua_pushnil(L);
  else lua_pushnumber(L, c->x[i]);
  return 1;
}

static int const_newindex(lua_State *L) {
  return luaL_error(L, "ad.Const is read-only (ad.value(c) gives a table of its numbers)");
}

static int const_len(lua_State *L) {
  lad_const *c = luaL_checkudata(L, 1, LAD_CONST_MT);
  lua_pushinteger(L, (lua_Integer)c->n);
  return 1;
}

static int const_tostring(lua_State *L) {
  lad_const *c = luaL_checkudata(L, 1, LAD_CONST_MT);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  if (c->cols) lua_pushfstring(L, "ad.const(%dx%d)", (int)c->rows, (int)c->cols);
  else lua_pushfstring(L, "ad.const(%d)", (int)c->n);
  luaL_addvalue(&b);
  if (c->n <= 8) {
    for (size_t i = 0; i < c->n; i++) {
      lua_pushfstring(L, i ? ", %f" : ": %f", c->x[i]);
      luaL_addvalue(&b);
    }
  }
  luaL_pushresult(&b);
  return 1;
}

void lad_constview(lua_State *L, int idx, size_t first, size_t n) {
  idx = lua_absindex(L, idx);
  lad_const *c = luaL_checkudata(L, idx, LAD_CONST_MT);
  lad_const *w = lua_newuserdatauv(L, sizeof *w, 1);
  w->x = c->x + first;
  w->n = w->rows = n;
  w->cols = 0;
  lua_pushvalue(L, idx);
  lua_setiuservalue(L, -2, 1); /* keeps c's values alive */
  luaL_setmetatable(L, LAD_CONST_MT);
}

/* c:slice(i, j): elements i..j as an ad.Const sharing c's values. */
static int const_slice(lua_State *L) {
  lad_const *c = luaL_checkudata(L, 1, LAD_CONST_MT);
  lua_Integer i = luaL_checkinteger(L, 2), j = luaL_optinteger(L, 3, (lua_Integer)c->n);
  luaL_argcheck(L, i >= 1 && i <= (lua_Integer)c->n + 1, 2, "start out of range");
  luaL_argcheck(L, j >= i - 1 && j <= (lua_Integer)c->n, 3, "end out of range");
  lad_constview(L, 1, (size_t)(i - 1), (size_t)(j - i + 1));
  return 1;
}

/* c:dims(): rows, cols of a matrix; n of a vector. */
static int const_dims(lua_State *L) {
  lad_const *c = luaL_checkudata(L, 1, LAD_CONST_MT);
  if (!c->cols) {
    lua_pushinteger(L, (lua_Integer)c->n);
    return 1;
  }
  lua_pushinteger(L, (lua_Integer)c->rows);
  lua_pushinteger(L, (lua_Integer)c->cols);
  return 2;
}

void lad_open_const(lua_State *L, int st) {
  static const luaL_Reg meta[] = {{"__index", const_index}, {"__newindex", const_newindex},
                                  {"__len", const_len}, {"__tostring", const_tostring},
                                  {NULL, NULL}};
  luaL_newmetatable(L, LAD_CONST_MT);
  lua_pushvalue(L, st);
  luaL_setfuncs(L, lad_arith_meta, 1);
  luaL_setfuncs(L, meta, 0);
  lua_newtable(L);
  lua_pushcfunction(L, const_slice);
  lua_setfield(L, -2, "slice");
  lua_pushcfunction(L, const_dims);
  lua_setfield(L, -2, "dims");
  lua_setfield(L, -2, "methods");
  lua_pop(L, 1);
}
