/* SPDX-License-Identifier: MIT */
/*
** The ad module: its state, var handles and their metamethods, var/vars/
** value, the C API of lad.h, and lad_open (which the host exports as
** luaopen_ad). Math functions live in lad_math.c, the gradient drivers in
** lad_drive.c.
**
** Handles. A scalar var is a light userdata (serial << 32 | index): creating
** one allocates nothing and collects nothing, faster per operation than a
** full userdata (scripts/bench/ad_handles.c measures both). The cost:
** all light userdata share one metatable, and `==` on light userdata compares
** the handles (Lua never calls __eq for them), so x == y is identity, not
** value equality. A handle is live while the region that created it is open
** (its serial matches); anything else raises "var from a finished tape".
*/
#include <stdio.h>
#include <string.h>
#include "adlib/lad_internal.h"
#include "array/array.h"

#include "ad_matrix_lua.h" /* generated from adlib/ad_matrix.lua */
#include "ad_mvdist_lua.h" /* generated from adlib/ad_mvdist.lua */

_Static_assert(sizeof(void *) >= 8, "var handles need 64-bit pointers");

/* ------------------------------------------------------------ the state */

lad_state *lad_getstate(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, LAD_STATE_KEY);
  lad_state *S = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return S;
}

static int state_gc(lua_State *L) {
  lad_state *S = lua_touserdata(L, 1);
  ad_tape_free(&S->tape);
  return 0;
}

int lad_error(lua_State *L, int code, int arg, const char *fname) {
  if (arg > 0)
    return luaL_error(L, "bad argument #%d to '%s' (%s)", arg, fname, ad_strerror(code));
  return luaL_error(L, "%s: %s", fname, ad_strerror(code));
}

void lad_region_begin(lua_State *L, lad_state *S) {
  int rc = ad_region_begin(&S->tape);
  if (rc) lad_error(L, rc, 0, "ad");
  S->anchor_mark[S->tape.depth] = S->nanchor;
  S->second[S->tape.depth] = 0;
}

void lad_region_end(lua_State *L, lad_state *S) {
  int d = S->tape.depth;
  int rc = ad_region_end(&S->tape);
  if (rc) lad_error(L, rc, 0, "ad");
  /* Drop the anchors of the region: borrowed arrays may be collected now. */
  lua_getfield(L, LUA_REGISTRYINDEX, LAD_STATE_KEY);
  lua_getiuservalue(L, -1, 1);
  for (int i = S->nanchor; i > S->anchor_mark[d]; i--) {
    lua_pushnil(L);
    lua_rawseti(L, -2, i);
  }
  S->nanchor = S->anchor_mark[d];
  lua_pop(L, 2);
}

/* -------------------------------------------------------------- handles */

void lad_push(lua_State *L, lad_state *S, ad_idx v) {
  lua_pushlightuserdata(L, lad_handle(v, ad_var_serial(&S->tape, v)));
}

int lad_checkvar(lua_State *L, lad_state *S, int idx, int arg, ad_idx *v) {
  if (lua_type(L, idx) != LUA_TLIGHTUSERDATA) return 0;
  uint64_t h = (uint64_t)(uintptr_t)lua_touserdata(L, idx);
  ad_idx i = (ad_idx)h;
  if (!ad_var_live(&S->tape, i, (uint32_t)(h >> 32)))
    luaL_argerror(L, arg, "var from a finished tape");
  *v = i;
  return 1;
}

lad_vec *lad_testvec(lua_State *L, int idx) {
  return luaL_testudata(L, idx, LAD_VEC_MT);
}

static int vec_live(const lad_state *S, const lad_vec *v) {
  if (v->n == 0) return 1; /* refers to nothing */
  return ad_var_live(&S->tape, v->var, v->serial) && v->n <= S->tape.nvar - v->var;
}

void lad_checkvec(lua_State *L, lad_state *S, int idx, int arg, lad_vec *v) {
  lad_vec *p = luaL_checkudata(L, idx, LAD_VEC_MT);
  if (!vec_live(S, p)) luaL_argerror(L, arg, "vector var from a finished tape");
  *v = *p;
}

void lad_newvec(lua_State *L, lad_state *S, ad_idx first, size_t n) {
  lad_vec *v = lua_newuserdatauv(L, sizeof *v, 0);
  v->var = first;
  v->n = v->rows = n;
  v->cols = 0;
  v->serial = ad_var_serial(&S->tape, first);
  luaL_setmetatable(L, LAD_VEC_MT);
}

void lad_setshape(lua_State *L, int idx, size_t rows, size_t cols) {
  lad_vec *v = lad_testvec(L, idx);
  lad_const *c = v ? NULL : lad_testconst(L, idx);
  if (v && rows * cols == v->n) v->rows = rows, v->cols = cols;
  if (c && rows * cols == c->n) c->rows = rows, c->cols = cols;
}

/* --------------------------------------------------- var metamethods */

/* Binary arithmetic: the scalar cases inline, everything else (vector vars,
** tables) through lad_binary_any in lad_math.c. */

/* The var of the light userdata at idx (argument idx), checked; the common
** case, a var of the innermost region, without ad_var_serial's walk. */
static inline ad_idx light_var(lua_State *L, const lad_state *S, int idx) {
  uint64_t h = (uint64_t)(uintptr_t)lua_touserdata(L, idx);
  ad_idx i = (ad_idx)h;
  uint32_t serial = (uint32_t)(h >> 32);
  const ad_tape *t = &S->tape;
  const ad_region *r = &t->reg[t->depth];
  if ((i >= t->nvar || i < r->nvar || serial != r->serial) && !ad_var_live(t, i, serial))
    luaL_argerror(L, idx, "var from a finished tape");
  return i;
}

static inline int arith(lua_State *L, int op, const char *fname) {
  lad_state *S = lad_S(L);
  int ta = lua_type(L, 1), tb = lua_type(L, 2), rc;
  ad_idx a, b, y;
  if (ta == LUA_TLIGHTUSERDATA) {
    a = light_var(L, S, 1);
    if (tb == LUA_TLIGHTUSERDATA) {
      b = light_var(L, S, 2);
      rc = ad_binary(&S->tape, op, a, b, &y);
    } else if (tb == LUA_TNUMBER) {
      rc = ad_binary_vc(&S->tape, op, a, lua_tonumber(L, 2), &y);
    } else {
      return lad_binary_any(L, S, op, 1, 2, fname);
    }
  } else if (ta == LUA_TNUMBER && tb == LUA_TLIGHTUSERDATA) {
    b = light_var(L, S, 2);
    rc = ad_binary_cv(&S->tape, op, lua_tonumber(L, 1), b, &y);
  } else {
    return lad_binary_any(L, S, op, 1, 2, fname);
  }
  if (rc) return lad_error(L, rc, 0, fname);
  lua_pushlightuserdata(L, lad_handle(y, S->tape.reg[S->tape.depth].serial));
  return 1;
}

static int m_add(lua_State *L) { return arith(L, AD_OP_ADD, "ad.add"); }
static int m_sub(lua_State *L) { return arith(L, AD_OP_SUB, "ad.sub"); }
static int m_mul(lua_State *L) { return arith(L, AD_OP_MUL, "ad.mul"); }
static int m_div(lua_State *L) { return arith(L, AD_OP_DIV, "ad.div"); }
static int m_pow(lua_State *L) { return arith(L, AD_OP_POW, "ad.pow"); }

static int m_unm(lua_State *L) {
  return lad_unary_any(L, lad_S(L), AD_OP_NEG, 1, "ad.neg");
}

const luaL_Reg lad_arith_meta[] = {
  {"__add", m_add}, {"__sub", m_sub}, {"__mul", m_mul}, {"__div", m_div},
  {"__pow", m_pow}, {"__unm", m_unm}, {NULL, NULL}};

static int m_nodiff(lua_State *L) {
  return luaL_error(L, "ad var: %s is not differentiable (use ad.value first)",
                    lua_tostring(L, lua_upvalueindex(2)));
}

/* Value of a number or scalar var for comparisons. */
static double cmpval(lua_State *L, lad_state *S, int idx) {
  ad_idx v;
  if (lua_type(L, idx) == LUA_TNUMBER) return lua_tonumber(L, idx);
  if (lad_checkvar(L, S, idx, idx, &v)) return S->tape.val[v];
  return luaL_error(L, "attempt to compare %s with an ad var", luaL_typename(L, idx));
}

static int m_lt(lua_State *L) {
  lad_state *S = lad_S(L);
  lua_pushboolean(L, cmpval(L, S, 1) < cmpval(L, S, 2));
  return 1;
}

static int m_le(lua_State *L) {
  lad_state *S = lad_S(L);
  lua_pushboolean(L, cmpval(L, S, 1) <= cmpval(L, S, 2));
  return 1;
}

static int m_tostring(lua_State *L) {
  lad_state *S = lad_S(L);
  uint64_t h = (uint64_t)(uintptr_t)lua_touserdata(L, 1);
  ad_idx i = (ad_idx)h;
  if (!ad_var_live(&S->tape, i, (uint32_t)(h >> 32))) {
    lua_pushliteral(L, "ad.var(<finished tape>)");
  } else {
    char buf[64];
    snprintf(buf, sizeof buf, "ad.var(%.17g)", S->tape.val[i]);
    lua_pushstring(L, buf);
  }
  return 1;
}

/* ------------------------------------------------ vector var metamethods */

int lad_index(lua_State *L, int idx, size_t n, size_t *i) {
  lua_Integer k;
  if (lua_isinteger(L, idx)) {
    k = lua_tointeger(L, idx);
  } else {
    lua_Number x = lua_tonumber(L, idx);
    if (x != (lua_Number)(lua_Integer)x) return 0;
    k = (lua_Integer)x;
  }
  if (k < 1 || (size_t)k > n) return 0;
  *i = (size_t)(k - 1);
  return 1;
}

void lad_method(lua_State *L) {
  lua_getmetatable(L, 1);
  lua_getfield(L, -1, "methods");
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
}

static int vec_index(lua_State *L) {
  lad_state *S = lad_S(L);
  lad_vec v;
  size_t i;
  lad_checkvec(L, S, 1, 1, &v);
  if (lua_type(L, 2) != LUA_TNUMBER) lad_method(L);
  else if (!lad_index(L, 2, v.n, &i)) lua_pushnil(L);
  else lua_pushlightuserdata(L, lad_handle(v.var + (ad_idx)i, v.serial));
  return 1;
}

static int vec_newindex(lua_State *L) {
  return luaL_error(L, "ad vector var is read-only (build a table of vars instead)");
}

static int vec_len(lua_State *L) {
  lad_vec *v = luaL_checkudata(L, 1, LAD_VEC_MT);
  lua_pushinteger(L, (lua_Integer)v->n);
  return 1;
}

static int vec_tostring(lua_State *L) {
  lad_vec *v = luaL_checkudata(L, 1, LAD_VEC_MT);
  lua_pushfstring(L, "ad.vec(%d)%s", (int)v->n, vec_live(lad_S(L), v) ? "" : " <finished tape>");
  return 1;
}

/* v:slice(i, j): vars i..j as a vector var (no copy). */
static int vec_slice(lua_State *L) {
  lad_state *S = lad_S(L);
  lad_vec v;
  lad_checkvec(L, S, 1, 1, &v);
  lua_Integer i = luaL_checkinteger(L, 2), j = luaL_optinteger(L, 3, (lua_Integer)v.n);
  luaL_argcheck(L, i >= 1 && i <= (lua_Integer)v.n + 1, 2, "start out of range");
  luaL_argcheck(L, j >= i - 1 && j <= (lua_Integer)v.n, 3, "end out of range");
  lad_vec *w = lua_newuserdatauv(L, sizeof *w, 0);
  w->var = v.var + (ad_idx)(i - 1);
  w->n = w->rows = (size_t)(j - i + 1);
  w->cols = 0;
  w->serial = v.serial;
  luaL_setmetatable(L, LAD_VEC_MT);
  return 1;
}

/* v:dims(): rows, cols of a matrix var; n of a vector var. */
static int vec_dims(lua_State *L) {
  lad_vec *v = luaL_checkudata(L, 1, LAD_VEC_MT);
  if (!v->cols) {
    lua_pushinteger(L, (lua_Integer)v->n);
    return 1;
  }
  lua_pushinteger(L, (lua_Integer)v->rows);
  lua_pushinteger(L, (lua_Integer)v->cols);
  return 2;
}

/* --------------------------------------------------- var, vars, value */

static int l_var(lua_State *L) {
  lad_state *S = lad_S(L);
  double x = luaL_checknumber(L, 1);
  ad_idx v;
  int rc = ad_var_new(&S->tape, x, &v);
  if (rc) return lad_error(L, rc, 0, "ad.var");
  lad_push(L, S, v);
  return 1;
}

static int l_vars(lua_State *L) {
  lad_state *S = lad_S(L);
  size_t n;
  size_t rows, cols;
  int mat = lad_matshape(L, 1, &rows, &cols);
  double *x = lad_tonumbers(L, 1, 1, "ad.vars", &n);
  ad_idx v;
  int rc = ad_vars_new(&S->tape, n, x, &v);
  if (rc) return lad_error(L, rc, 0, "ad.vars");
  lad_newvec(L, S, v, n);
  if (mat) lad_setshape(L, -1, rows, cols);
  return 1;
}

/* A vector's numbers as a list; a matrix's as a table of rows, t[i][j]. */
static void push_values(lua_State *L, const double *x, size_t n, size_t rows, size_t cols) {
  if (!cols) {
    lad_pushnumbers(L, x, n);
    return;
  }
  lua_createtable(L, (int)rows, 0);
  for (size_t i = 0; i < rows; i++) {
    lua_createtable(L, (int)cols, 0);
    for (size_t j = 0; j < cols; j++) {
      lua_pushnumber(L, x[i + j * rows]);
      lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static int l_value(lua_State *L) {
  lad_state *S = lad_S(L);
  ad_idx v;
  lad_vec *p;
  lad_const *c;
  luaL_checkany(L, 1);
  if (lua_type(L, 1) == LUA_TNUMBER) {
    lua_settop(L, 1);
  } else if ((c = lad_testconst(L, 1))) {
    push_values(L, c->x, c->n, c->rows, c->cols);
  } else if (lad_checkvar(L, S, 1, 1, &v)) {
    lua_pushnumber(L, S->tape.val[v]);
  } else if ((p = lad_testvec(L, 1))) {
    lad_vec w;
    lad_checkvec(L, S, 1, 1, &w);
    push_values(L, S->tape.val + w.var, w.n, w.rows, w.cols);
  } else if (lua_type(L, 1) == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, 1);
    lua_createtable(L, (int)n, 0);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_geti(L, 1, i);
      if (lad_checkvar(L, S, -1, 1, &v)) {
        lua_pop(L, 1);
        lua_pushnumber(L, S->tape.val[v]);
      } else if (lua_type(L, -1) != LUA_TNUMBER) {
        return luaL_error(L, "bad argument #1 to 'ad.value' (element %d is a %s)", (int)i,
                          luaL_typename(L, -1));
      }
      lua_rawseti(L, -2, i);
    }
  } else {
    return luaL_argerror(L, 1, "number, ad var or table expected");
  }
  return 1;
}

static int l_is_var(lua_State *L) {
  lad_state *S = lad_S(L);
  int t = lua_type(L, 1), r = 0;
  if (t == LUA_TLIGHTUSERDATA) {
    uint64_t h = (uint64_t)(uintptr_t)lua_touserdata(L, 1);
    r = ad_var_live(&S->tape, (ad_idx)h, (uint32_t)(h >> 32));
  } else if (lad_testvec(L, 1)) {
    r = vec_live(S, lad_testvec(L, 1));
  }
  lua_pushboolean(L, r);
  return 1;
}

static int l_reset(lua_State *L) {
  lad_state *S = lad_S(L);
  if (S->tape.depth > 0) return luaL_error(L, "ad.reset: cannot reset inside ad.grad & co");
  lua_getfield(L, LUA_REGISTRYINDEX, LAD_STATE_KEY);
  lua_newtable(L);
  lua_setiuservalue(L, -2, 1);
  S->nanchor = 0;
  ad_tape_reset(&S->tape);
  return 0;
}

static int l_tape_size(lua_State *L) {
  lad_state *S = lad_S(L);
  lua_pushinteger(L, S->tape.nvar);
  lua_pushinteger(L, S->tape.nent);
  lua_pushinteger(L, S->tape.nnode);
  lua_pushinteger(L, S->tape.depth);
  return 4;
}

/* ------------------------------------------------------------ C API */

ad_tape *lad_tape(lua_State *L) {
  lad_state *S = lad_getstate(L);
  return S ? &S->tape : NULL;
}

int lad_tovar(lua_State *L, int idx, ad_idx *var, double *value) {
  lad_state *S = lad_getstate(L);
  if (!S || lua_type(L, idx) != LUA_TLIGHTUSERDATA) return 0;
  uint64_t h = (uint64_t)(uintptr_t)lua_touserdata(L, idx);
  ad_idx i = (ad_idx)h;
  if (!ad_var_live(&S->tape, i, (uint32_t)(h >> 32))) return 0;
  if (var) *var = i;
  if (value) *value = S->tape.val[i];
  return 1;
}

int lad_toconst(lua_State *L, int idx, const double **x, size_t *n) {
  lad_const *c = lad_testconst(L, idx);
  if (!c) return 0;
  *x = c->x;
  *n = c->n;
  return 1;
}

int lad_tovec(lua_State *L, int idx, ad_idx *first, size_t *n) {
  lad_state *S = lad_getstate(L);
  lad_vec *v = S ? lad_testvec(L, idx) : NULL;
  if (!v || !vec_live(S, v)) return 0;
  *first = v->var;
  *n = v->n;
  return 1;
}

void lad_pushvar(lua_State *L, ad_idx var) {
  lad_state *S = lad_getstate(L);
  if (!S || var >= S->tape.nvar) luaL_error(L, "lad_pushvar: no such var");
  lad_push(L, S, var);
}

void lad_pushvec(lua_State *L, ad_idx first, size_t n) {
  lad_state *S = lad_getstate(L);
  if (!S || n > S->tape.nvar || first > S->tape.nvar - n)
    luaL_error(L, "lad_pushvec: no such vars");
  lad_newvec(L, S, first, n);
}

void lad_newvar(lua_State *L, double v, ad_idx *var) {
  lad_state *S = lad_getstate(L);
  ad_idx i;
  int rc = ad_var_new(&S->tape, v, &i);
  if (rc) lad_error(L, rc, 0, "ad");
  if (var) *var = i;
  lad_push(L, S, i);
}

void lad_begin(lua_State *L) { lad_region_begin(L, lad_getstate(L)); }

int lad_second_order(lua_State *L) {
  lad_state *S = lad_getstate(L);
  return S && S->second[S->tape.depth];
}
void lad_end(lua_State *L) { lad_region_end(L, lad_getstate(L)); }

int lad_jacobian(lua_State *L, size_t m, const ad_idx *y, size_t n,
                 const ad_idx *in, double *J) {
  return ad_jacobian(lad_tape(L), m, y, n, in, J);
}

void lad_precomputed(lua_State *L, double value, size_t n, const ad_idx *in,
                     const double *partial) {
  lad_state *S = lad_getstate(L);
  ad_idx y;
  int rc = ad_precomputed(&S->tape, value, n, in, partial, &y);
  if (rc) lad_error(L, rc, 0, "ad");
  lad_push(L, S, y);
}

/* ----------------------------------------------------------- luaopen */

static const luaL_Reg var_meta[] = {
  {"__lt", m_lt}, {"__le", m_le}, {"__tostring", m_tostring}, {NULL, NULL}};

static const luaL_Reg vec_meta[] = {
  {"__index", vec_index}, {"__newindex", vec_newindex}, {"__len", vec_len},
  {"__tostring", vec_tostring}, {NULL, NULL}};

static const luaL_Reg funcs[] = {
  {"var", l_var}, {"vars", l_vars}, {"value", l_value}, {"is_var", l_is_var},
  {"reset", l_reset}, {"tape_size", l_tape_size}, {NULL, NULL}};

static void set_nodiff(lua_State *L, int st, const char *mm, const char *what) {
  lua_pushvalue(L, st);
  lua_pushstring(L, what);
  lua_pushcclosure(L, m_nodiff, 2);
  lua_setfield(L, -2, mm);
}

int lad_open(lua_State *L) {
  lad_state *S = lad_getstate(L);
  if (!S) {
    /* inert first: the tape owns nothing until it records */
    S = lua_newuserdatauv(L, sizeof *S, 1);
    memset(S, 0, sizeof *S);
    ad_tape_init(&S->tape);
    lua_newtable(L);
    lua_setiuservalue(L, -2, 1); /* the anchor list */
    lua_newtable(L);
    lua_pushcfunction(L, state_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, LAD_STATE_KEY);
  } else {
    lua_getfield(L, LUA_REGISTRYINDEX, LAD_STATE_KEY);
  }
  int st = lua_gettop(L);

  /* scalar vars: the metatable of all light userdata */
  luaL_newmetatable(L, LAD_VAR_MT);
  lua_pushvalue(L, st);
  luaL_setfuncs(L, lad_arith_meta, 1);
  lua_pushvalue(L, st);
  luaL_setfuncs(L, var_meta, 1);
  set_nodiff(L, st, "__idiv", "//");
  set_nodiff(L, st, "__mod", "%");
  lua_pushlightuserdata(L, NULL);
  lua_pushvalue(L, -2);
  lua_setmetatable(L, -2);
  lua_pop(L, 2);

  /* vector vars */
  luaL_newmetatable(L, LAD_VEC_MT);
  lua_pushvalue(L, st);
  luaL_setfuncs(L, lad_arith_meta, 1);
  lua_pushvalue(L, st);
  luaL_setfuncs(L, vec_meta, 1);
  lua_newtable(L);
  lua_pushvalue(L, st);
  lua_pushcclosure(L, vec_slice, 1);
  lua_setfield(L, -2, "slice");
  lua_pushcfunction(L, vec_dims);
  lua_setfield(L, -2, "dims");
  lua_setfield(L, -2, "methods");
  lua_pop(L, 1);
  lad_open_const(L, st);

  lua_newtable(L);
  lua_pushvalue(L, st);
  luaL_setfuncs(L, funcs, 1);
  lad_open_math(L, st);
  lad_open_dist(L, st);
  lad_open_mat(L, st);
  lad_open_drive(L, st);
  lad_open_rng(L, st);
  lua_remove(L, st);
  /* the functions written in Lua over the primitives above */
  static const struct { const char *code, *name; size_t len; } chunks[] = {
    {ad_matrix_lua, "=ad.matrix", ad_matrix_lua_len}, {ad_mvdist_lua, "=ad.mvdist", ad_mvdist_lua_len}};
  for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
    if (luaL_loadbufferx(L, chunks[i].code, chunks[i].len, chunks[i].name, "t") != LUA_OK) lua_error(L);
    lua_pushvalue(L, -2);
    lua_call(L, 1, 0);
  }
  return 1;
}
