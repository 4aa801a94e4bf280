/* SPDX-License-Identifier: MIT */
/*
** Cartesian topologies as values (README "Topologies"), seed 004: a process
** grid with its naming scheme (coordinates), periodicity, neighbours and
** distances, made before and without any communicator. It lives with the
** layouts because a layout's process grid is one: t:layout(spec) is the
** layout over this grid, and mp.halo takes its periodicity.
**
**   mp.cart(dims | n [, opts])   dims: a list of grid extents; n: a number of
**                 ranks, factored by mp.dims (opts.extents weigh the axes,
**                 opts.ndim their number, default the number of extents or 2)
**                 opts.periodic: true, or a list of booleans per axis
**   t.dims, t.periodic, t.ndim, t.nranks
**   t:coords([r])          {c1, ...}, 0-based (r default mp.rank)
**   t:rank(c1, ...)        the rank at those coordinates (periodic axes
**                          wrap), or nil off the grid
**   t:shift(axis, disp [, r])  source, dest: MPI_Cart_shift's pair (nil
**                          where there is none)
**   t:neighbors([r])       {lo1, hi1, lo2, hi2, ...}: the shift(axis, 1)
**                          pairs per axis, false where there is none
**   t:distance(r1, r2)     hops along the grid (shorter way round periodic axes)
**   t:layout(spec [, opts])  mp.layout(spec, opts) on this grid
**   t:neighbor_allgather, t:neighbor_alltoall, t:attach   (neighbor.c)
** Ranks are column-major over the grid (the first axis varies fastest), as
** in layouts.
*/
#include <string.h>

#include "topo/topo.h"
#include "layout/layout_grid.h"

#define CART_MT "mp.Cart"

static mpb_cart *check(lua_State *L, int arg, const char *fname) {
  mpb_cart *t = luaL_testudata(L, arg, CART_MT);
  if (!t) mpb_lay_argerror(L, arg, fname, "Cartesian topology expected, got %s",
                           luaL_typename(L, arg));
  return t;
}

mpb_cart *mpb_cart_test(lua_State *L, int arg) { return luaL_testudata(L, arg, CART_MT); }

static void coords_of(const mpb_cart *t, int r, int *c) {
  for (int a = 0; a < t->ndim; a++) {
    c[a] = r % t->dims[a];
    r /= t->dims[a];
  }
}

/* The rank at c, wrapping periodic axes; -1 off the grid. */
static int rank_of(const mpb_cart *t, const int64_t *c) {
  int r = 0, m = 1;
  for (int a = 0; a < t->ndim; a++) {
    int64_t v = c[a];
    if (t->periodic[a]) v = ((v % t->dims[a]) + t->dims[a]) % t->dims[a];
    else if (v < 0 || v >= t->dims[a]) return -1;
    r += (int)v * m;
    m *= t->dims[a];
  }
  return r;
}

int mpb_cart_shift(const mpb_cart *t, int r, int axis, int disp) {
  int c[MPB_LAYOUT_MAXDIM];
  int64_t d[MPB_LAYOUT_MAXDIM];
  coords_of(t, r, c);
  for (int a = 0; a < t->ndim; a++) d[a] = c[a];
  d[axis] += disp;
  return rank_of(t, d);
}

/* The integer at stack index idx, reported as argument arg. */
static int intat(lua_State *L, int idx, int arg, const char *fname, const char *what,
                 lua_Integer lo, lua_Integer hi) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok) mpb_lay_argerror(L, arg, fname, "%s must be an integer, got %s", what,
                            luaL_typename(L, idx));
  if (v < lo || v > hi)
    mpb_lay_argerror(L, arg, fname, "%s %I out of range %I..%I", what, (LUAI_UACINT)v,
                     (LUAI_UACINT)lo, (LUAI_UACINT)hi);
  return (int)v;
}

static int intarg(lua_State *L, int arg, const char *fname, const char *what, lua_Integer lo,
                  lua_Integer hi) {
  return intat(L, arg, arg, fname, what, lo, hi);
}

static int rankarg(lua_State *L, const mpb_cart *t, int arg, const char *fname) {
  if (lua_isnoneornil(L, arg)) {
    int r = mpb_get(L)->rank;
    if (r >= t->nranks)
      mpb_lay_argerror(L, arg, fname, "this rank (%d) is not in the grid's %d ranks: pass a "
                       "rank", r, t->nranks);
    return r;
  }
  return intarg(L, arg, fname, "rank", 0, t->nranks - 1);
}

/* mp.cart(dims | n [, opts]) */
static int cart(lua_State *L) {
  const char *fn = "cart";
  mpb_cart t;
  memset(&t, 0, sizeof t);
  int64_t w[MPB_LAYOUT_MAXDIM];
  int weighted = 0;
  if (!lua_isnoneornil(L, 2) && !lua_istable(L, 2))
    mpb_lay_argerror(L, 2, fn, "options table expected, got %s", luaL_typename(L, 2));
  if (lua_istable(L, 2) && lua_getfield(L, 2, "extents") == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, -1);
    if (n < 1 || n > MPB_LAYOUT_MAXDIM) mpb_lay_argerror(L, 2, fn, "1 to 8 extents expected");
    t.ndim = (int)n;
    for (int a = 0; a < t.ndim; a++) {
      lua_geti(L, -1, a + 1);
      w[a] = intat(L, -1, 2, fn, "extent", 1, INT32_MAX);
      lua_pop(L, 1);
    }
    weighted = 1;
  }
  if (lua_istable(L, 2)) {
    if (lua_getfield(L, 2, "ndim") != LUA_TNIL) {
      int nd = intat(L, -1, 2, fn, "ndim", 1, MPB_LAYOUT_MAXDIM);
      if (weighted && nd != t.ndim)
        mpb_lay_argerror(L, 2, fn, "ndim %d but %d extents", nd, t.ndim);
      t.ndim = nd;
    }
    lua_settop(L, 2);
  }
  if (lua_istable(L, 1)) {
    lua_Integer n = luaL_len(L, 1);
    if (n < 1 || n > MPB_LAYOUT_MAXDIM) mpb_lay_argerror(L, 1, fn, "1 to 8 grid extents expected");
    t.ndim = (int)n;
    for (int a = 0; a < t.ndim; a++) {
      lua_geti(L, 1, a + 1);
      t.dims[a] = intat(L, -1, 1, fn, "grid extent", 1, INT32_MAX);
      lua_pop(L, 1);
    }
  } else {
    int n = intarg(L, 1, fn, "number of ranks", 1, INT32_MAX);
    if (t.ndim == 0) t.ndim = 2;
    int rc = mpb_grid_factor(n, t.ndim, weighted ? w : NULL, t.dims);
    if (rc < 0) mpb_lay_argerror(L, 1, fn, "%s", mpb_layout_strerror(rc));
  }
  int64_t total = 1;
  for (int a = 0; a < t.ndim; a++) total *= t.dims[a];
  if (total > INT32_MAX) mpb_lay_argerror(L, 1, fn, "too many ranks");
  t.nranks = (int)total;
  if (lua_istable(L, 2)) {
    int ty = lua_getfield(L, 2, "periodic");
    if (ty == LUA_TBOOLEAN) {
      for (int a = 0; a < t.ndim; a++) t.periodic[a] = lua_toboolean(L, -1);
    } else if (ty == LUA_TTABLE) {
      if (luaL_len(L, -1) != t.ndim)
        mpb_lay_argerror(L, 2, fn, "periodic: one boolean per axis (%d) expected", t.ndim);
      for (int a = 0; a < t.ndim; a++) {
        lua_geti(L, -1, a + 1);
        t.periodic[a] = lua_toboolean(L, -1);
        lua_pop(L, 1);
      }
    } else if (ty != LUA_TNIL) {
      mpb_lay_argerror(L, 2, fn, "periodic: boolean or list expected, got %s",
                       luaL_typename(L, -1));
    }
  }
  mpb_cart *u = lua_newuserdatauv(L, sizeof *u, 0);
  *u = t;
  luaL_setmetatable(L, CART_MT);
  return 1;
}

static int coords(lua_State *L) {
  mpb_cart *t = check(L, 1, "Cart.coords");
  int c[MPB_LAYOUT_MAXDIM];
  coords_of(t, rankarg(L, t, 2, "Cart.coords"), c);
  lua_createtable(L, t->ndim, 0);
  for (int a = 0; a < t->ndim; a++) {
    lua_pushinteger(L, c[a]);
    lua_rawseti(L, -2, a + 1);
  }
  return 1;
}

static int rank(lua_State *L) {
  mpb_cart *t = check(L, 1, "Cart.rank");
  int list = lua_istable(L, 2);
  int64_t c[MPB_LAYOUT_MAXDIM];
  for (int a = 0; a < t->ndim; a++) {
    if (list) lua_geti(L, 2, a + 1);
    else lua_pushvalue(L, a + 2);
    c[a] = intat(L, -1, list ? 2 : a + 2, "Cart.rank", "coordinate", INT32_MIN, INT32_MAX);
    lua_pop(L, 1);
  }
  int r = rank_of(t, c);
  if (r < 0) lua_pushnil(L);
  else lua_pushinteger(L, r);
  return 1;
}

static void push_rank(lua_State *L, int r, int none_false) {
  if (r >= 0) lua_pushinteger(L, r);
  else if (none_false) lua_pushboolean(L, 0);
  else lua_pushnil(L);
}

static int shift(lua_State *L) {
  mpb_cart *t = check(L, 1, "Cart.shift");
  int axis = intarg(L, 2, "Cart.shift", "axis", 1, t->ndim) - 1;
  int disp = intarg(L, 3, "Cart.shift", "displacement", INT32_MIN / 2, INT32_MAX / 2);
  int r = rankarg(L, t, 4, "Cart.shift");
  push_rank(L, mpb_cart_shift(t, r, axis, -disp), 0);
  push_rank(L, mpb_cart_shift(t, r, axis, disp), 0);
  return 2;
}

static int neighbors(lua_State *L) {
  mpb_cart *t = check(L, 1, "Cart.neighbors");
  int r = rankarg(L, t, 2, "Cart.neighbors");
  lua_createtable(L, 2 * t->ndim, 0);
  for (int a = 0; a < t->ndim; a++)
    for (int s = 0; s < 2; s++) {
      push_rank(L, mpb_cart_shift(t, r, a, s ? 1 : -1), 1);
      lua_rawseti(L, -2, 2 * a + s + 1);
    }
  return 1;
}

static int distance(lua_State *L) {
  mpb_cart *t = check(L, 1, "Cart.distance");
  int a = intarg(L, 2, "Cart.distance", "rank", 0, t->nranks - 1);
  int b = intarg(L, 3, "Cart.distance", "rank", 0, t->nranks - 1);
  int ca[MPB_LAYOUT_MAXDIM], cb[MPB_LAYOUT_MAXDIM];
  coords_of(t, a, ca);
  coords_of(t, b, cb);
  lua_Integer d = 0;
  for (int k = 0; k < t->ndim; k++) {
    int h = ca[k] > cb[k] ? ca[k] - cb[k] : cb[k] - ca[k];
    if (t->periodic[k] && t->dims[k] - h < h) h = t->dims[k] - h;
    d += h;
  }
  lua_pushinteger(L, d);
  return 1;
}

/* t:layout(spec [, opts]): mp.layout(spec, opts) with grid = t.dims. */
static int layout(lua_State *L) {
  mpb_cart *t = check(L, 1, "Cart.layout");
  lua_settop(L, 3);
  if (lua_isnil(L, 3)) {
    lua_newtable(L);
    lua_replace(L, 3);
  } else if (!lua_istable(L, 3)) {
    mpb_lay_argerror(L, 3, "Cart.layout", "options table expected, got %s", luaL_typename(L, 3));
  }
  lua_createtable(L, t->ndim, 0);
  for (int a = 0; a < t->ndim; a++) {
    lua_pushinteger(L, t->dims[a]);
    lua_rawseti(L, -2, a + 1);
  }
  lua_setfield(L, 3, "grid");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 3);
  lua_call(L, 2, 1);
  return 1;
}

static int tostr(lua_State *L) {
  mpb_cart *t = check(L, 1, "Cart.__tostring");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "mp.Cart ");
  for (int a = 0; a < t->ndim; a++) {
    lua_pushfstring(L, a ? "x%d" : "%d", t->dims[a]);
    luaL_addvalue(&b);
  }
  luaL_addstring(&b, " (periodic: ");
  for (int a = 0; a < t->ndim; a++) luaL_addstring(&b, a ? (t->periodic[a] ? ", yes" : ", no")
                                                        : (t->periodic[a] ? "yes" : "no"));
  luaL_addchar(&b, ')');
  luaL_pushresult(&b);
  return 1;
}

static int index_(lua_State *L) {
  mpb_cart *t = check(L, 1, "Cart.__index");
  const char *k = lua_tostring(L, 2);
  if (!k) return 0;
  if (strcmp(k, "ndim") == 0) lua_pushinteger(L, t->ndim);
  else if (strcmp(k, "nranks") == 0) lua_pushinteger(L, t->nranks);
  else if (strcmp(k, "dims") == 0 || strcmp(k, "periodic") == 0) {
    lua_createtable(L, t->ndim, 0);
    for (int a = 0; a < t->ndim; a++) {
      if (k[0] == 'd') lua_pushinteger(L, t->dims[a]);
      else lua_pushboolean(L, t->periodic[a]);
      lua_rawseti(L, -2, a + 1);
    }
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

/* (value, mpb_lay_grid *) -> whether value is an mp.Cart (MPB_LAY_GRID_KEY). */
static int grid_of(lua_State *L) {
  mpb_cart *t = mpb_cart_test(L, 1);
  mpb_lay_grid *g = lua_touserdata(L, 2);
  if (t && g) {
    g->ndim = t->ndim;
    memcpy(g->dims, t->dims, sizeof g->dims);
    memcpy(g->periodic, t->periodic, sizeof g->periodic);
  }
  lua_pushboolean(L, t && g);
  return 1;
}

void mpb_open_cart(lua_State *L) {
  static const luaL_Reg methods[] = {{"coords", coords}, {"rank", rank}, {"shift", shift},
                                     {"neighbors", neighbors}, {"distance", distance},
                                     {NULL, NULL}};
  int mpt = lua_gettop(L);
  static const luaL_Reg meta[] = {{"__tostring", tostr}, {NULL, NULL}};
  mpb_class_begin(L, CART_MT, methods);
  mpb_topo_neighbor_methods(L, lua_gettop(L));
  lua_getfield(L, mpt, "layout");
  lua_pushcclosure(L, layout, 1);
  lua_setfield(L, -2, "layout");
  mpb_class_end(L, index_, meta);
  lua_pushcfunction(L, cart);
  lua_setfield(L, mpt, "cart");
  lua_pushcfunction(L, grid_of);
  lua_setfield(L, LUA_REGISTRYINDEX, MPB_LAY_GRID_KEY);
}
