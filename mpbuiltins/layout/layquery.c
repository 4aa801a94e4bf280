/* SPDX-License-Identifier: MIT */
/*
** Layout queries (README "Layouts"): what any rank holds, who holds what,
** and the local arrays of a layout. Indices are 1-based and inclusive, in
** the layout's listed order (its local memory order); ranks and grid
** coordinates are 0-based, like mp.rank (ranks are column-major over the
** grid: the first axis varies fastest). No communication: any rank may ask
** about any other.
**
**   l:local_shape([r])     {n1, n2, ...}: rank r's block (default: mp.rank)
**   l:range([r])           {{lo, hi}, ...}: the global indices r holds
**                          (a:view(table.unpack(l:range(r))) is that block
**                          of a global array a)
**   l:owner(i1, ..., in)   r, j1, ..., jn: who holds a global index, and where
**   l:coords(r), l:rank(c) grid coordinates <-> rank
**   l:alloc([halo])        a zero local array (halo: widths on split dims),
**                          distributed (darray.c)
**   l:wrap(a [, halo])     a, checked to be this rank's block
**   l:describe()           the layout, its grid and every rank's block
*/
#include <string.h>

#include "array/array.h"
#include "layout/laylib.h"

int mpb_lay_rankarg(lua_State *L, const mpb_lay *y, int arg, const char *fname) {
  lua_Integer r;
  if (lua_isnoneornil(L, arg)) {
    r = mpb_get(L)->rank;
    if (r >= y->l.nranks)
      mpb_lay_argerror(L, arg, fname, "this rank (%I) is not in the layout's %d ranks: pass a "
                       "rank", (LUAI_UACINT)r, y->l.nranks);
    return (int)r;
  }
  int ok;
  r = lua_tointegerx(L, arg, &ok);
  if (!ok) mpb_lay_argerror(L, arg, fname, "rank expected, got %s", luaL_typename(L, arg));
  if (r < 0 || r >= y->l.nranks)
    mpb_lay_argerror(L, arg, fname, "rank %I out of range 0..%d", (LUAI_UACINT)r, y->l.nranks - 1);
  return (int)r;
}

int mpb_lay_block_shape(const mpb_lay *y, int r, const int64_t *halo, int64_t *dims) {
  mpb_layout_local_shape(&y->l, r, dims);
  for (int k = 0; halo && k < y->l.ndim; k++) dims[k] += 2 * halo[k];
  return y->l.ndim;
}

void mpb_lay_halo_arg(lua_State *L, const mpb_lay *y, int arg, const char *fname, int64_t *w) {
  int nd = y->l.ndim;
  memset(w, 0, sizeof(int64_t) * (size_t)nd);
  if (lua_isnoneornil(L, arg)) return;
  int ok;
  if (lua_istable(L, arg)) {
    if (luaL_len(L, arg) != nd)
      mpb_lay_argerror(L, arg, fname, "a halo width per dimension (%d) expected", nd);
    for (int k = 0; k < nd; k++) {
      lua_geti(L, arg, k + 1);
      w[k] = lua_tointegerx(L, -1, &ok);
      lua_pop(L, 1);
      if (!ok || w[k] < 0) mpb_lay_argerror(L, arg, fname, "halo width %d is not an integer >= 0", k + 1);
    }
    return;
  }
  lua_Integer h = lua_tointegerx(L, arg, &ok);
  if (!ok || h < 0) mpb_lay_argerror(L, arg, fname, "halo width must be an integer >= 0");
  for (int k = 0; k < nd; k++) w[k] = y->l.axis[k] >= 0 ? h : 0;
}

/* "2x4x16" */
static const char *push_shape(lua_State *L, int nd, const int64_t *d) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int k = 0; k < nd; k++) {
    if (k) luaL_addchar(&b, 'x');
    lua_pushinteger(L, d[k]);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

mpb_array *mpb_lay_check_block(lua_State *L, const mpb_lay *y, int r, const int64_t *w,
                               const int64_t *shape, int arg, const char *fname) {
  mpb_array *a = mpb_array_testv(L, arg);
  if (!a) mpb_lay_argerror(L, arg, fname, "mp.Array expected, got %s", luaL_typename(L, arg));
  int64_t own[MPB_LAYOUT_MAXDIM];
  int nd = y->l.ndim;
  const int64_t *d = shape ? shape : own;
  if (!shape) mpb_lay_block_shape(y, r, w, own);
  if (a->dtype != y->dtype || a->ndim != nd || memcmp(a->dims, d, sizeof(int64_t) * (size_t)nd)) {
    char spec[512];
    mpb_layout_format(&y->l, mpb_dtype_name(y->dtype), 0, spec, sizeof spec);
    const char *want = push_shape(L, nd, d);
    int halo = 0;
    for (int k = 0; w && k < nd; k++) halo |= w[k] > 0;
    mpb_lay_argerror(L, arg, fname, "rank %d's block of %s%s is %s %s, got %s %s", r, spec,
                     halo ? " with its halo" : "", want, mpb_dtype_name(y->dtype),
                     push_shape(L, a->ndim, a->dims), mpb_dtype_name(a->dtype));
  }
  return a;
}

/* ------------------------------------------------------------ queries */
static void push_i64s(lua_State *L, int n, const int64_t *v) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushinteger(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* l:local_shape([r]) */
static int local_shape(lua_State *L) {
  mpb_lay *y = mpb_lay_check(L, 1, "Layout.local_shape");
  int64_t d[MPB_LAYOUT_MAXDIM];
  int nd = mpb_lay_block_shape(y, mpb_lay_rankarg(L, y, 2, "Layout.local_shape"), NULL, d);
  push_i64s(L, nd, d);
  return 1;
}

/* l:range([r]) */
static int range(lua_State *L) {
  mpb_lay *y = mpb_lay_check(L, 1, "Layout.range");
  int64_t lo[MPB_LAYOUT_MAXDIM], len[MPB_LAYOUT_MAXDIM];
  mpb_layout_range(&y->l, mpb_lay_rankarg(L, y, 2, "Layout.range"), lo, len);
  lua_createtable(L, y->l.ndim, 0);
  for (int k = 0; k < y->l.ndim; k++) {
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, lo[k] + 1);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, lo[k] + len[k]);
    lua_rawseti(L, -2, 2);
    lua_rawseti(L, -2, k + 1);
  }
  return 1;
}

/* l:owner(i1, ..., in) -> r, j1, ..., jn */
static int owner(lua_State *L) {
  mpb_lay *y = mpb_lay_check(L, 1, "Layout.owner");
  int nd = y->l.ndim;
  if (lua_gettop(L) - 1 != nd)
    mpb_lay_argerror(L, 0, "Layout.owner", "%d indices expected (one per dimension), got %d", nd,
                     lua_gettop(L) - 1);
  int64_t g[MPB_LAYOUT_MAXDIM], j[MPB_LAYOUT_MAXDIM];
  for (int k = 0; k < nd; k++) {
    int ok;
    lua_Integer i = lua_tointegerx(L, k + 2, &ok);
    if (!ok) mpb_lay_argerror(L, k + 2, "Layout.owner", "integer index expected, got %s",
                              luaL_typename(L, k + 2));
    if (i < 1 || i > y->l.extent[k])
      mpb_lay_argerror(L, k + 2, "Layout.owner", "index %I out of range 1..%I for '%s'",
                       (LUAI_UACINT)i, (LUAI_UACINT)y->l.extent[k], y->l.name[k]);
    g[k] = i - 1;
  }
  lua_pushinteger(L, mpb_layout_owner(&y->l, g, j));
  for (int k = 0; k < nd; k++) lua_pushinteger(L, j[k] + 1);
  return nd + 1;
}

/* l:coords(r) -> {c1, ...} (0-based) */
static int coords(lua_State *L) {
  mpb_lay *y = mpb_lay_check(L, 1, "Layout.coords");
  int c[MPB_LAYOUT_MAXDIM];
  int r = mpb_lay_rankarg(L, y, 2, "Layout.coords");
  mpb_layout_coords(&y->l, r, c);
  lua_createtable(L, y->l.naxes, 0);
  for (int a = 0; a < y->l.naxes; a++) {
    lua_pushinteger(L, c[a]);
    lua_rawseti(L, -2, a + 1);
  }
  return 1;
}

/* l:rank(c1, ...) or l:rank({c1, ...}) */
static int rank(lua_State *L) {
  mpb_lay *y = mpb_lay_check(L, 1, "Layout.rank");
  int c[MPB_LAYOUT_MAXDIM], list = lua_istable(L, 2);
  for (int a = 0; a < y->l.naxes; a++) {
    if (list) lua_geti(L, 2, a + 1);
    else lua_pushvalue(L, a + 2);
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok || v < 0 || v >= y->l.grid[a])
      mpb_lay_argerror(L, list ? 2 : a + 2, "Layout.rank", "coordinate %d must be an integer "
                       "in 0..%d", a + 1, y->l.grid[a] - 1);
    c[a] = (int)v;
  }
  lua_pushinteger(L, mpb_layout_rank(&y->l, c));
  return 1;
}

/* l:alloc([halo [, r]]): a distributed array (darray.c) */
static int alloc(lua_State *L) {
  mpb_lay *y = mpb_lay_check(L, 1, "Layout.alloc");
  int64_t w[MPB_LAYOUT_MAXDIM], d[MPB_LAYOUT_MAXDIM];
  mpb_lay_halo_arg(L, y, 2, "Layout.alloc", w);
  int nd = mpb_lay_block_shape(y, mpb_lay_rankarg(L, y, 3, "Layout.alloc"), w, d);
  mpb_array_new(L, y->dtype, nd, d);
  mpb_darray_attach(L, -1, 1, w, 0);
  return 1;
}

/* l:wrap(a [, halo]) */
static int wrap(lua_State *L) {
  mpb_lay *y = mpb_lay_check(L, 1, "Layout.wrap");
  int64_t w[MPB_LAYOUT_MAXDIM];
  mpb_lay_halo_arg(L, y, 3, "Layout.wrap", w);
  mpb_lay_check_block(L, y, mpb_lay_rankarg(L, y, 4, "Layout.wrap"), w, NULL, 2, "Layout.wrap");
  lua_settop(L, 2);
  return 1;
}

/* l:describe(): the spec, then one line per rank: coordinates, local shape,
** global ranges. */
static int describe(lua_State *L) {
  mpb_lay *y = mpb_lay_check(L, 1, "Layout.describe");
  const mpb_layout *l = &y->l;
  luaL_Buffer b;
  char spec[512];
  mpb_layout_format(l, mpb_dtype_name(y->dtype), 1, spec, sizeof spec);
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "%s: %d rank%s, %s split\n", spec, l->nranks, l->nranks == 1 ? "" : "s",
                  l->balanced ? "balanced" : "even");
  luaL_addvalue(&b);
  for (int r = 0; r < l->nranks; r++) {
    int c[MPB_LAYOUT_MAXDIM];
    int64_t lo[MPB_LAYOUT_MAXDIM], len[MPB_LAYOUT_MAXDIM];
    mpb_layout_coords(l, r, c);
    mpb_layout_range(l, r, lo, len);
    lua_pushfstring(L, "  rank %d (", r);
    luaL_addvalue(&b);
    for (int a = 0; a < l->naxes; a++) {
      lua_pushfstring(L, a ? ",%d" : "%d", c[a]);
      luaL_addvalue(&b);
    }
    luaL_addstring(&b, "): ");
    for (int k = 0; k < l->ndim; k++) {
      lua_pushfstring(L, k ? "x%I" : "%I", (LUAI_UACINT)len[k]);
      luaL_addvalue(&b);
    }
    luaL_addstring(&b, ", ");
    for (int k = 0; k < l->ndim; k++) {
      lua_pushfstring(L, "%s%s %I:%I", k ? ", " : "", l->name[k], (LUAI_UACINT)lo[k] + 1,
                      (LUAI_UACINT)(lo[k] + len[k]));
      luaL_addvalue(&b);
    }
    luaL_addchar(&b, '\n');
  }
  luaL_pushresult(&b);
  return 1;
}

void mpb_layout_open_query(lua_State *L, int methods) {
  static const luaL_Reg fns[] = {
      {"local_shape", local_shape}, {"range", range}, {"owner", owner}, {"coords", coords},
      {"rank", rank}, {"alloc", alloc}, {"wrap", wrap}, {"describe", describe}, {NULL, NULL}};
  lua_pushvalue(L, methods);
  luaL_setfuncs(L, fns, 0);
  lua_pop(L, 1);
}
