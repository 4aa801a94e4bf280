/* SPDX-License-Identifier: MIT */
/*
** Layouts as Lua values (README "Layouts"): mp.layout, mp.dims, and the
** "mp.Layout" userdata's fields, printing, equality and :with. The queries
** are in layquery.c. A layout holds no communicator and no rank: it is the
** same value on every rank, so the plans built on it can be made locally.
**
** The printed form is also the constructor:
**     f64[sp=2, r=4, theta=16, vpar=8@1, mu=4@2] over 8x2 balanced
** lists the dimensions in local memory order (column-major, the first
** fastest), "@k" splits one over axis k of the process grid (1-based), and
** the optional tail gives the grid and the kind of split. Without a grid,
** one is chosen for the ranks (mp.dims, weighted by the extents of the split
** dimensions; for an even split, among the grids that divide them).
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "layout/laylib.h"
#include "layout/layout_grid.h"
#include "p2p/p2p.h"

/* ------------------------------------------------------------- errors */
int mpb_lay_argerror(lua_State *L, int arg, const char *fname, const char *fmt, ...) {
  mpb_state *st = mpb_get(L);
  va_list ap;
  va_start(ap, fmt);
  const char *msg = lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  if (arg > 0)
    return luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " %s)", arg, fname,
                      st->rank, st->size, msg);
  return luaL_error(L, "mp.%s: " MPB_RANKFMT " %s", fname, st->rank, st->size, msg);
}

void mpb_lay_check_request(lua_State *L, int64_t task, int64_t naborts, int used,
                           const char *fname) {
  mpb_state *st = mpb_get(L);
  mpb_check_abort(L, st);
  if (task != st->task)
    mpb_lay_argerror(L, 0, fname, "request from an earlier task (task %I, now %I)",
                     (LUAI_UACINT)task, (LUAI_UACINT)st->task);
  if (naborts != st->naborts)
    mpb_lay_argerror(L, 0, fname, "request from an aborted task (task %I)", (LUAI_UACINT)task);
  mpb_check_task(L, st, fname);
  if (used) mpb_lay_argerror(L, 0, fname, "request already completed (its wait or test returned)");
}

/* --------------------------------------------------------- the value */
mpb_lay *mpb_lay_push(lua_State *L, const mpb_lay *a) {
  mpb_lay *y = lua_newuserdatauv(L, sizeof *y, 0);
  *y = *a;
  luaL_setmetatable(L, MPB_LAYOUT_MT);
  return y;
}

mpb_lay *mpb_lay_check(lua_State *L, int arg, const char *fname) {
  mpb_lay *y = luaL_testudata(L, arg, MPB_LAYOUT_MT);
  if (!y) mpb_lay_argerror(L, arg, fname, "layout expected, got %s", luaL_typename(L, arg));
  return y;
}

/* ---------------------------------------------------- the description */
/* What a layout is made from, before the grid is chosen. */
typedef struct {
  int dtype, nd;
  char name[MPB_LAYOUT_MAXDIM][MPB_LAYOUT_NAMELEN];
  int64_t ext[MPB_LAYOUT_MAXDIM];
  int axis[MPB_LAYOUT_MAXDIM];       /* -1: not split */
  int naxes, grid[MPB_LAYOUT_MAXDIM];/* naxes 0: choose a grid */
  int nranks;                        /* 0: this job's size */
  int balanced;
} lspec;

static void spec_of(const mpb_lay *y, lspec *s) {
  memset(s, 0, sizeof *s);
  s->dtype = y->dtype;
  s->nd = y->l.ndim;
  for (int k = 0; k < s->nd; k++) {
    memcpy(s->name[k], y->l.name[k], MPB_LAYOUT_NAMELEN);
    s->ext[k] = y->l.extent[k];
    s->axis[k] = y->l.axis[k];
  }
  s->naxes = y->l.naxes;
  memcpy(s->grid, y->l.grid, sizeof s->grid);
  s->nranks = y->l.nranks;
  s->balanced = y->l.balanced;
}

/* Choose the grid if none was given, make the layout, push it. */
static void spec_make(lua_State *L, lspec *s, int arg, const char *fname) {
  int used = 0;
  for (int k = 0; k < s->nd; k++)
    if (s->axis[k] + 1 > used) used = s->axis[k] + 1;
  if (s->naxes == 0) {
    int nranks = s->nranks > 0 ? s->nranks : used ? mpb_get(L)->size : 1;
    int64_t w[MPB_LAYOUT_MAXDIM];
    s->naxes = used ? used : 1;
    for (int a = 0; a < s->naxes; a++) {
      s->grid[a] = used ? 0 : 1;
      w[a] = 1;
    }
    for (int k = 0; k < s->nd; k++) /* even: the extents themselves (0 too) */
      if (s->axis[k] >= 0) w[s->axis[k]] = s->ext[k] > 0 || !s->balanced ? s->ext[k] : 1;
    if (!used && nranks != 1)
      mpb_lay_argerror(L, arg, fname, "no dimension is split, so the layout is for 1 rank, "
                       "not %d (a layout holds no copies)", nranks);
    int rc = !used ? 0 : s->balanced ? mpb_grid_factor(nranks, s->naxes, w, s->grid)
                                     : mpb_grid_factor_even(nranks, s->naxes, w, s->grid);
    if (rc == MPB_LAYOUT_EUNEVEN)
      mpb_lay_argerror(L, arg, fname, "no grid of %d ranks divides the split extents evenly "
                       "(give grid = {...}, or balanced = true)", nranks);
    if (rc < 0) mpb_lay_argerror(L, arg, fname, "%s", mpb_layout_strerror(rc));
  } else if (used > s->naxes) {
    mpb_lay_argerror(L, arg, fname, "a dimension is split over grid axis %d, but the grid "
                     "has %d axes", used, s->naxes);
  }
  mpb_lay y;
  memset(&y, 0, sizeof y);
  const char *names[MPB_LAYOUT_MAXDIM];
  for (int k = 0; k < s->nd; k++) names[k] = s->name[k];
  int rc = mpb_layout_init(&y.l, s->nd, s->ext, names, s->naxes, s->grid, s->axis, NULL,
                           s->balanced);
  if (rc == MPB_LAYOUT_EUNEVEN) {
    for (int k = 0; k < s->nd; k++)
      if (s->axis[k] >= 0 && s->ext[k] % s->grid[s->axis[k]])
        mpb_lay_argerror(L, arg, fname, "extent %I of '%s' does not divide evenly over the %d "
                         "ranks of grid axis %d (use balanced = true)", (LUAI_UACINT)s->ext[k],
                         s->name[k], s->grid[s->axis[k]], s->axis[k] + 1);
  }
  if (rc < 0) mpb_lay_argerror(L, arg, fname, "%s", mpb_layout_strerror(rc));
  if (s->nranks > 0 && y.l.nranks != s->nranks)
    mpb_lay_argerror(L, arg, fname, "the grid has %d ranks, not %d", y.l.nranks, s->nranks);
  y.dtype = s->dtype;
  mpb_lay_push(L, &y);
}

/* ------------------------------------------------------- the string form */
typedef struct { const char *s; size_t i; } cursor;

static void skip(cursor *c) {
  while (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n') c->i++;
}

static int accept(cursor *c, const char *word) {
  skip(c);
  size_t n = strlen(word);
  if (strncmp(c->s + c->i, word, n) != 0) return 0;
  c->i += n;
  return 1;
}

static int64_t number(lua_State *L, cursor *c, const char *what, int arg, const char *fname) {
  skip(c);
  const char *p = c->s + c->i;
  if (*p < '0' || *p > '9')
    mpb_lay_argerror(L, arg, fname, "%s expected at '%s'", what, p);
  int64_t v = 0;
  while (*p >= '0' && *p <= '9') {
    if (v > (INT64_MAX - 9) / 10) mpb_lay_argerror(L, arg, fname, "%s too large", what);
    v = v * 10 + (*p++ - '0');
  }
  c->i = (size_t)(p - c->s);
  return v;
}

static void parse_string(lua_State *L, const char *str, lspec *s, int arg, const char *fname) {
  cursor c = {str, 0};
  const char *fn = fname;
  skip(&c);
  size_t a = c.i;
  while (str[c.i] && str[c.i] != '[') c.i++;
  if (str[c.i] != '[') mpb_lay_argerror(L, arg, fn, "'[' expected in '%s'", str);
  char dt[16] = "f64";
  size_t dl = c.i - a;
  while (dl > 0 && (str[a + dl - 1] == ' ' || str[a + dl - 1] == '\t')) dl--;
  if (dl > 0) {
    if (dl >= sizeof dt) mpb_lay_argerror(L, arg, fn, "unknown dtype in '%s'", str);
    memcpy(dt, str + a, dl);
    dt[dl] = '\0';
  }
  s->dtype = mpb_dtype_from_name(dt);
  if (s->dtype < 0) mpb_lay_argerror(L, arg, fn, "unknown dtype '%s' (f64, f32, i64, i32, u8, c64, c128)", dt);
  c.i++;
  do {
    if (s->nd == MPB_LAYOUT_MAXDIM) mpb_lay_argerror(L, arg, fn, "%s", mpb_layout_strerror(MPB_LAYOUT_ENDIM));
    skip(&c);
    size_t b = c.i;
    while (str[c.i] && str[c.i] != '=' && str[c.i] != ' ' && str[c.i] != ',' && str[c.i] != ']')
      c.i++;
    if (c.i == b || c.i - b >= MPB_LAYOUT_NAMELEN)
      mpb_lay_argerror(L, arg, fn, "dimension name expected at '%s'", str + b);
    memcpy(s->name[s->nd], str + b, c.i - b);
    s->name[s->nd][c.i - b] = '\0';
    if (!accept(&c, "=")) mpb_lay_argerror(L, arg, fn, "'=' expected after '%s'", s->name[s->nd]);
    s->ext[s->nd] = number(L, &c, "extent", arg, fn);
    s->axis[s->nd] = -1;
    if (accept(&c, "@")) {
      int64_t ax = number(L, &c, "grid axis", arg, fn);
      if (ax < 1 || ax > MPB_LAYOUT_MAXDIM)
        mpb_lay_argerror(L, arg, fn, "grid axis %I out of range 1..%d", (LUAI_UACINT)ax,
                         MPB_LAYOUT_MAXDIM);
      s->axis[s->nd] = (int)ax - 1;
    }
    s->nd++;
  } while (accept(&c, ","));
  if (!accept(&c, "]")) mpb_lay_argerror(L, arg, fn, "']' expected at '%s'", str + c.i);
  if (accept(&c, "over")) {
    do {
      if (s->naxes == MPB_LAYOUT_MAXDIM) mpb_lay_argerror(L, arg, fn, "%s", mpb_layout_strerror(MPB_LAYOUT_EGRID));
      int64_t g = number(L, &c, "grid extent", arg, fn);
      if (g < 1 || g > INT32_MAX) mpb_lay_argerror(L, arg, fn, "%s", mpb_layout_strerror(MPB_LAYOUT_EGRID));
      s->grid[s->naxes++] = (int)g;
    } while (accept(&c, "x"));
  }
  if (accept(&c, "balanced")) s->balanced = 1;
  skip(&c);
  if (str[c.i]) mpb_lay_argerror(L, arg, fn, "unexpected '%s' at the end", str + c.i);
}

/* ------------------------------------------------------ the table forms */
static int getint(lua_State *L, int idx, const char *what, int arg, const char *fname,
                  lua_Integer lo, lua_Integer hi, lua_Integer *v) {
  int ok;
  *v = lua_tointegerx(L, idx, &ok);
  if (!ok) mpb_lay_argerror(L, arg, fname, "%s must be an integer, got %s", what, luaL_typename(L, idx));
  if (*v < lo || *v > hi)
    mpb_lay_argerror(L, arg, fname, "%s %I out of range %I..%I", what, (LUAI_UACINT)*v,
                     (LUAI_UACINT)lo, (LUAI_UACINT)hi);
  return 1;
}

static int find_name(const lspec *s, const char *name) {
  for (int k = 0; k < s->nd; k++)
    if (strcmp(s->name[k], name) == 0) return k;
  return -1;
}

/* split = {name = axis, ...} or {"name1", "name2", ...} (axis i splits the i-th). */
static void read_split(lua_State *L, int t, lspec *s, int arg, const char *fname) {
  for (int k = 0; k < s->nd; k++) s->axis[k] = -1;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_Integer ax;
    const char *name;
    if (lua_type(L, -2) == LUA_TNUMBER) {
      getint(L, -2, "split list index", arg, fname, 1, MPB_LAYOUT_MAXDIM, &ax);
      name = lua_tostring(L, -1);
    } else {
      name = lua_tostring(L, -2);
      getint(L, -1, "grid axis", arg, fname, 1, MPB_LAYOUT_MAXDIM, &ax);
    }
    int k = name ? find_name(s, name) : -1;
    if (k < 0) mpb_lay_argerror(L, arg, fname, "split names no dimension ('%s')", name ? name : "?");
    s->axis[k] = (int)ax - 1;
    lua_pop(L, 1);
  }
}

/* grid, nranks, balanced, split, dtype of the options table at t. */
static void read_opts(lua_State *L, int t, lspec *s, int arg, const char *fname) {
  lua_Integer v;
  if (lua_getfield(L, t, "dtype") != LUA_TNIL) {
    s->dtype = mpb_dtype_from_name(lua_tostring(L, -1) ? lua_tostring(L, -1) : "");
    if (s->dtype < 0) mpb_lay_argerror(L, arg, fname, "unknown dtype (f64, f32, i64, i32, u8, c64, c128)");
  }
  if (lua_getfield(L, t, "split") == LUA_TTABLE) {
    read_split(L, lua_gettop(L), s, arg, fname);
    s->naxes = 0; /* the grid is chosen again unless given */
  }
  if (lua_getfield(L, t, "nranks") != LUA_TNIL) {
    getint(L, -1, "nranks", arg, fname, 1, INT32_MAX, &v);
    s->nranks = (int)v;
    s->naxes = 0;
  }
  if (lua_getfield(L, t, "balanced") != LUA_TNIL) s->balanced = lua_toboolean(L, -1);
  if (lua_getfield(L, t, "grid") == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, -1);
    if (n < 1 || n > MPB_LAYOUT_MAXDIM) mpb_lay_argerror(L, arg, fname, "%s", mpb_layout_strerror(MPB_LAYOUT_EGRID));
    for (lua_Integer a = 1; a <= n; a++) {
      lua_geti(L, -1, a);
      getint(L, -1, "grid extent", arg, fname, 1, INT32_MAX, &v);
      s->grid[a - 1] = (int)v;
      lua_pop(L, 1);
    }
    s->naxes = (int)n;
  }
  lua_pop(L, 5);
}

/* {dtype =, dims = {{"sp", 2}, ...}, split =, grid =, nranks =, balanced =} */
static void parse_table(lua_State *L, int t, lspec *s, int arg, const char *fname) {
  s->dtype = MPB_F64;
  if (lua_getfield(L, t, "dims") != LUA_TTABLE)
    mpb_lay_argerror(L, arg, fname, "field 'dims' must be a list of {name, extent}");
  lua_Integer n = luaL_len(L, -1);
  if (n < 1 || n > MPB_LAYOUT_MAXDIM) mpb_lay_argerror(L, arg, fname, "%s", mpb_layout_strerror(MPB_LAYOUT_ENDIM));
  for (lua_Integer k = 1; k <= n; k++) {
    lua_Integer e;
    lua_geti(L, -1, k);
    if (!lua_istable(L, -1)) mpb_lay_argerror(L, arg, fname, "dims[%I] must be {name, extent}", (LUAI_UACINT)k);
    lua_geti(L, -1, 1);
    const char *name = lua_tostring(L, -1);
    if (!name || strlen(name) >= MPB_LAYOUT_NAMELEN)
      mpb_lay_argerror(L, arg, fname, "dims[%I]: %s", (LUAI_UACINT)k, mpb_layout_strerror(MPB_LAYOUT_ENAME));
    strcpy(s->name[k - 1], name);
    lua_geti(L, -2, 2);
    getint(L, -1, "extent", arg, fname, 0, INT64_MAX, &e);
    s->ext[k - 1] = e;
    s->axis[k - 1] = -1;
    lua_pop(L, 3);
  }
  s->nd = (int)n;
  lua_pop(L, 1);
  read_opts(L, t, s, arg, fname);
}

/* mp.layout(spec [, opts]): spec a string as printed, a table, or a layout. */
static int layout(lua_State *L) {
  lspec s;
  memset(&s, 0, sizeof s);
  if (lua_type(L, 1) == LUA_TSTRING) {
    parse_string(L, lua_tostring(L, 1), &s, 1, "layout");
  } else if (luaL_testudata(L, 1, MPB_LAYOUT_MT)) {
    spec_of(lua_touserdata(L, 1), &s);
  } else if (lua_istable(L, 1)) {
    parse_table(L, 1, &s, 1, "layout");
  } else {
    mpb_lay_argerror(L, 1, "layout", "string, table or layout expected, got %s", luaL_typename(L, 1));
  }
  if (!lua_isnoneornil(L, 2)) {
    if (!lua_istable(L, 2)) mpb_lay_argerror(L, 2, "layout", "table expected, got %s", luaL_typename(L, 2));
    read_opts(L, 2, &s, 2, "layout");
  }
  spec_make(L, &s, 1, "layout");
  return 1;
}

/* l:with{order =, split =, grid =, nranks =, balanced =, dtype =}: a new
** layout with those changed (order: the names in their new memory order). */
static int with(lua_State *L) {
  mpb_lay *y = mpb_lay_check(L, 1, "Layout.with");
  luaL_checktype(L, 2, LUA_TTABLE);
  lspec s, o;
  spec_of(y, &s);
  if (lua_getfield(L, 2, "order") == LUA_TTABLE) {
    o = s;
    if (luaL_len(L, -1) != s.nd)
      mpb_lay_argerror(L, 2, "Layout.with", "order must list the %d dimensions", s.nd);
    int seen[MPB_LAYOUT_MAXDIM] = {0};
    for (int j = 0; j < s.nd; j++) {
      lua_geti(L, -1, j + 1);
      const char *name = lua_tostring(L, -1);
      int k = name ? find_name(&o, name) : -1;
      if (k < 0 || seen[k]++)
        mpb_lay_argerror(L, 2, "Layout.with", "order item %d ('%s') is not a dimension, or "
                         "comes twice", j + 1, name ? name : luaL_typename(L, -1));
      memcpy(s.name[j], o.name[k], MPB_LAYOUT_NAMELEN);
      s.ext[j] = o.ext[k];
      s.axis[j] = o.axis[k];
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  read_opts(L, 2, &s, 2, "Layout.with");
  spec_make(L, &s, 2, "Layout.with");
  return 1;
}

/* -------------------------------------------------- fields and printing */
static void push_spec(lua_State *L, const mpb_lay *y, int full) {
  char buf[512];
  mpb_layout_format(&y->l, mpb_dtype_name(y->dtype), full, buf, sizeof buf);
  lua_pushstring(L, buf);
}

static int tostr(lua_State *L) {
  push_spec(L, mpb_lay_check(L, 1, "Layout.__tostring"), 0);
  return 1;
}

static int eq(lua_State *L) {
  mpb_lay *a = luaL_testudata(L, 1, MPB_LAYOUT_MT), *b = luaL_testudata(L, 2, MPB_LAYOUT_MT);
  lua_pushboolean(L, a && b && memcmp(a, b, sizeof *a) == 0);
  return 1;
}

static void push_ints(lua_State *L, int n, const int *v, int plus) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushinteger(L, v[i] + plus);
    lua_rawseti(L, -2, i + 1);
  }
}

static int index_(lua_State *L) {
  mpb_lay *y = mpb_lay_check(L, 1, "Layout.__index");
  const char *k = lua_tostring(L, 2);
  const mpb_layout *l = &y->l;
  if (!k) return 0;
  if (strcmp(k, "ndim") == 0) lua_pushinteger(L, l->ndim);
  else if (strcmp(k, "nranks") == 0) lua_pushinteger(L, l->nranks);
  else if (strcmp(k, "dtype") == 0) lua_pushstring(L, mpb_dtype_name(y->dtype));
  else if (strcmp(k, "balanced") == 0) lua_pushboolean(L, l->balanced);
  else if (strcmp(k, "spec") == 0) push_spec(L, y, 1);
  else if (strcmp(k, "grid") == 0) push_ints(L, l->naxes, l->grid, 0);
  else if (strcmp(k, "dims") == 0 || strcmp(k, "names") == 0) {
    int names = k[0] == 'n';
    lua_createtable(L, l->ndim, 0);
    for (int j = 0; j < l->ndim; j++) {
      if (names) lua_pushstring(L, l->name[j]);
      else lua_pushinteger(L, l->extent[j]);
      lua_rawseti(L, -2, j + 1);
    }
  } else if (strcmp(k, "split") == 0) {
    lua_newtable(L);
    for (int j = 0; j < l->ndim; j++)
      if (l->axis[j] >= 0) {
        lua_pushinteger(L, l->axis[j] + 1);
        lua_setfield(L, -2, l->name[j]);
      }
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

/* ------------------------------------------------------------ mp.dims */
/* mp.dims(n, extents | ndim [, fixed]): a process grid of n ranks
** (mpb_grid_factor): never worse than MPI_Dims_create on the perimeter sum,
** weighted by the extents when they are given. fixed: a list of extents
** to keep (0: free), as MPI_Dims_create's dims argument. */
static int dims(lua_State *L) {
  lua_Integer n, v;
  getint(L, 1, "number of ranks", 1, "dims", 1, INT32_MAX, &n);
  int nd, grid[MPB_LAYOUT_MAXDIM] = {0};
  int64_t w[MPB_LAYOUT_MAXDIM];
  int weighted = lua_istable(L, 2);
  if (weighted) {
    lua_Integer len = luaL_len(L, 2);
    if (len < 1 || len > MPB_LAYOUT_MAXDIM) mpb_lay_argerror(L, 2, "dims", "1 to 8 extents expected");
    nd = (int)len;
    for (int k = 0; k < nd; k++) {
      lua_geti(L, 2, k + 1);
      getint(L, -1, "extent", 2, "dims", 1, INT64_MAX, &v);
      w[k] = v;
      lua_pop(L, 1);
    }
  } else {
    getint(L, 2, "number of dimensions", 2, "dims", 1, MPB_LAYOUT_MAXDIM, &v);
    nd = (int)v;
  }
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    for (int k = 0; k < nd; k++) {
      lua_geti(L, 3, k + 1);
      if (!lua_isnil(L, -1)) {
        getint(L, -1, "fixed extent", 3, "dims", 0, INT32_MAX, &v);
        grid[k] = (int)v;
      }
      lua_pop(L, 1);
    }
  }
  int rc = mpb_grid_factor((int)n, nd, weighted ? w : NULL, grid);
  if (rc < 0) mpb_lay_argerror(L, 0, "dims", "%s", mpb_layout_strerror(rc));
  push_ints(L, nd, grid, 0);
  return 1;
}

/* ------------------------------------------------------------ opener */
int mpb_lay_grid_of(lua_State *L, int idx, mpb_lay_grid *g) {
  idx = lua_absindex(L, idx);
  if (lua_getfield(L, LUA_REGISTRYINDEX, MPB_LAY_GRID_KEY) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return 0;
  }
  lua_pushvalue(L, idx);
  lua_pushlightuserdata(L, g);
  lua_call(L, 2, 1);
  int is = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return is;
}

void mpb_open_layout(lua_State *L) {
  int mpt = lua_gettop(L);
  static const luaL_Reg methods[] = {{"with", with}, {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__tostring", tostr}, {"__eq", eq}, {NULL, NULL}};
  mpb_class_begin(L, MPB_LAYOUT_MT, methods);
  mpb_layout_open_query(L, lua_gettop(L));
  mpb_open_darray(L, mpt, lua_gettop(L));
  mpb_class_end(L, index_, meta);
  lua_pushcfunction(L, layout);
  lua_setfield(L, mpt, "layout");
  lua_pushcfunction(L, dims);
  lua_setfield(L, mpt, "dims");
  mpb_open_xchg(L);
  mpb_open_transpose(L);
  mpb_open_halo(L);
  mpb_open_fft(L);
  mpb_open_file(L);
}
