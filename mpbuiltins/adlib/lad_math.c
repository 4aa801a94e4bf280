/* ad's math: elementwise functions (numbers, vars, vectors), reductions,
** matrix-vector product and log densities, each one tape node per call. */
#include <string.h>
#include "adlib/lad_internal.h"
#include "array/array.h"

/* ------------------------------------------------------------- errors */

/* "bad argument #k to 'f' (length 3 does not match 4)" for AD_ESIZE. */
static int size_error(lua_State *L, const ad_arg *args, int nargs, int first_arg,
                      const char *fname) {
  size_t n = 1;
  int k;
  for (k = 0; k < nargs; k++)
    if (args[k].n != 1) { n = args[k].n; break; }
  for (k = 0; k < nargs; k++)
    if (args[k].n != 1 && args[k].n != n) break;
  if (k == nargs) k = nargs - 1;
  return luaL_error(L, "bad argument #%d to '%s' (length %d does not match %d)",
                    k + first_arg, fname, (int)args[k].n, (int)n);
}

/* --------------------------------------------------------- elementwise */

int lad_unary_any(lua_State *L, lad_state *S, int op, int idx, const char *fname) {
  ad_idx v, y;
  double d;
  int rc, owner;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    lua_pushnumber(L, ad_unary_eval(op, lua_tonumber(L, idx), &d));
    return 1;
  }
  if (lad_checkvar(L, S, idx, 1, &v)) {
    if ((rc = ad_unary(&S->tape, op, v, &y))) return lad_error(L, rc, 0, fname);
    lua_pushlightuserdata(L, lad_handle(y, S->tape.reg[S->tape.depth].serial));
    return 1;
  }
  ad_arg a = lad_toarg(L, S, idx, 1, fname, &owner);
  if (!ad_arg_isvar(&a)) {
    lua_createtable(L, (int)a.n, 0);
    for (size_t i = 0; i < a.n; i++) {
      lua_pushnumber(L, ad_unary_eval(op, a.c ? a.c[i] : a.cval, &d));
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
  }
  if ((rc = ad_vec_unary(&S->tape, op, a, &y))) return lad_error(L, rc, 1, fname);
  lad_newvec(L, S, y, a.n);
  return 1;
}

int lad_binary_any(lua_State *L, lad_state *S, int op, int ia, int ib, const char *fname) {
  ad_idx a, b, y;
  double pa, pb;
  int rc, oa, ob;
  int ta = lua_type(L, ia), tb = lua_type(L, ib);
  if (ta == LUA_TNUMBER && tb == LUA_TNUMBER) {
    lua_pushnumber(L, ad_binary_eval(op, lua_tonumber(L, ia), lua_tonumber(L, ib), &pa, &pb));
    return 1;
  }
  int sa = ta == LUA_TNUMBER || ta == LUA_TLIGHTUSERDATA;
  int sb = tb == LUA_TNUMBER || tb == LUA_TLIGHTUSERDATA;
  if (sa && sb) {
    if (ta == LUA_TLIGHTUSERDATA) lad_checkvar(L, S, ia, 1, &a);
    if (tb == LUA_TLIGHTUSERDATA) lad_checkvar(L, S, ib, 2, &b);
    if (ta == LUA_TNUMBER) rc = ad_binary_cv(&S->tape, op, lua_tonumber(L, ia), b, &y);
    else if (tb == LUA_TNUMBER) rc = ad_binary_vc(&S->tape, op, a, lua_tonumber(L, ib), &y);
    else rc = ad_binary(&S->tape, op, a, b, &y);
    if (rc) return lad_error(L, rc, 0, fname);
    lad_push(L, S, y);
    return 1;
  }
  ad_arg args[2];
  args[0] = lad_toarg(L, S, ia, 1, fname, &oa);
  args[1] = lad_toarg(L, S, ib, 2, fname, &ob);
  size_t n;
  if (ad_args_length(2, args, &n, NULL)) return size_error(L, args, 2, 1, fname);
  if (!ad_arg_isvar(&args[0]) && !ad_arg_isvar(&args[1])) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
      lua_pushnumber(L, ad_binary_eval(op, ad_arg_at(&S->tape, &args[0], i),
                                       ad_arg_at(&S->tape, &args[1], i), &pa, &pb));
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
  }
  if ((rc = ad_vec_binary(&S->tape, op, args[0], args[1], &y, &n)))
    return lad_error(L, rc, 0, fname);
  lad_anchor(L, S, oa);
  lad_anchor(L, S, ob);
  lad_newvec(L, S, y, n);
  return 1;
}

static int f_unary(lua_State *L) {
  int op = (int)lua_tointeger(L, lua_upvalueindex(2));
  luaL_checkany(L, 1);
  return lad_unary_any(L, lad_S(L), op, 1, ad_op_name(op));
}

static int f_binary(lua_State *L) {
  int op = (int)lua_tointeger(L, lua_upvalueindex(2));
  luaL_checkany(L, 1);
  luaL_checkany(L, 2);
  return lad_binary_any(L, lad_S(L), op, 1, 2, ad_op_name(op));
}

/* ---------------------------------------------------------- reductions */

static void push_result(lua_State *L, lad_state *S, double value, ad_idx y) {
  if (y == AD_NOVAR) lua_pushnumber(L, value);
  else lad_push(L, S, y);
}

static int l_sum(lua_State *L) {
  lad_state *S = lad_S(L);
  int owner, rc;
  ad_idx y;
  double v;
  luaL_checkany(L, 1);
  ad_arg a = lad_toarg(L, S, 1, 1, "sum", &owner);
  if ((rc = ad_sum(&S->tape, a, &v, &y))) return lad_error(L, rc, 1, "sum");
  push_result(L, S, v, y);
  return 1;
}

static int l_log_sum_exp(lua_State *L) {
  lad_state *S = lad_S(L);
  int owner, rc;
  ad_idx y;
  double v;
  luaL_checkany(L, 1);
  if (!lua_isnoneornil(L, 2))
    return lad_binary_any(L, S, AD_OP_LOG_SUM_EXP2, 1, 2, "log_sum_exp");
  ad_arg a = lad_toarg(L, S, 1, 1, "log_sum_exp", &owner);
  if ((rc = ad_log_sum_exp(&S->tape, a, &v, &y))) return lad_error(L, rc, 1, "log_sum_exp");
  push_result(L, S, v, y);
  return 1;
}

static int l_dot(lua_State *L) {
  lad_state *S = lad_S(L);
  int oa, ob, rc;
  ad_idx y;
  double v;
  luaL_checkany(L, 1);
  luaL_checkany(L, 2);
  ad_arg args[2];
  args[0] = lad_toarg(L, S, 1, 1, "dot", &oa);
  args[1] = lad_toarg(L, S, 2, 2, "dot", &ob);
  if (args[0].n != args[1].n)
    return luaL_error(L, "bad argument #2 to 'dot' (length %d does not match %d)",
                      (int)args[1].n, (int)args[0].n);
  if ((rc = ad_dot(&S->tape, args[0], args[1], &v, &y))) return lad_error(L, rc, 0, "dot");
  if (y != AD_NOVAR) {
    lad_anchor(L, S, oa);
    lad_anchor(L, S, ob);
  }
  push_result(L, S, v, y);
  return 1;
}

/* matvec(A, x): A an m-by-n f64 typed array (borrowed) or a table of m rows
** (copied, column-major); x a vector of length n. */
static int l_matvec(lua_State *L) {
  lad_state *S = lad_S(L);
  int ox, owner = 0, rc;
  size_t m, n;
  const double *A;
  mpb_array *a = mpb_array_test(L, 1);
  if (a && a->ndim == 2 && a->dtype == MPB_F64) {
    m = (size_t)a->dims[0];
    n = (size_t)a->dims[1];
    A = a->data;
    owner = 1;
  } else {
    luaL_argexpected(L, lua_type(L, 1) == LUA_TTABLE, 1, "table of rows or 2-d f64 array");
    m = (size_t)luaL_len(L, 1);
    n = 0;
    if (m > 0) {
      lua_geti(L, 1, 1);
      n = lua_type(L, -1) == LUA_TTABLE ? (size_t)luaL_len(L, -1) : 0;
      lua_pop(L, 1);
    }
    double *buf = lua_newuserdatauv(L, (m * n > 0 ? m * n : 1) * sizeof(double), 0);
    for (size_t i = 0; i < m; i++) {
      if (lua_geti(L, 1, (lua_Integer)i + 1) != LUA_TTABLE || (size_t)luaL_len(L, -1) != n)
        return luaL_error(L, "bad argument #1 to 'matvec' (row %d is not a table of length %d)",
                          (int)i + 1, (int)n);
      for (size_t j = 0; j < n; j++) {
        int isnum;
        lua_geti(L, -1, (lua_Integer)j + 1);
        buf[i + j * m] = lua_tonumberx(L, -1, &isnum);
        if (!isnum)
          return luaL_error(L, "bad argument #1 to 'matvec' (element [%d][%d] is a %s)",
                            (int)i + 1, (int)j + 1, luaL_typename(L, -1));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
    A = buf;
    owner = buf ? lua_gettop(L) : 0;
  }
  ad_arg x = lad_toarg(L, S, 2, 2, "matvec", &ox);
  if (x.n != n)
    return luaL_error(L, "bad argument #2 to 'matvec' (length %d does not match %d)",
                      (int)x.n, (int)n);
  if (!ad_arg_isvar(&x)) {
    lua_createtable(L, (int)m, 0);
    for (size_t i = 0; i < m; i++) {
      double s = 0;
      for (size_t j = 0; j < n; j++) s += A[i + j * m] * ad_arg_at(&S->tape, &x, j);
      lua_pushnumber(L, s);
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
  }
  ad_idx y;
  if ((rc = ad_matvec(&S->tape, m, n, A, x, &y))) return lad_error(L, rc, 0, "matvec");
  (void)owner; /* partials are copied into the tape: A need not be anchored */
  lad_newvec(L, S, y, m);
  return 1;
}

/* ------------------------------------------------------- log densities */

static int f_dist(lua_State *L) {
  lad_state *S = lad_S(L);
  int dist = (int)lua_tointeger(L, lua_upvalueindex(2));
  int nargs = ad_dist_nargs(dist), owner[4], rc;
  const char *fname = ad_dist_name(dist);
  ad_arg args[4];
  for (int k = 0; k < nargs; k++) {
    luaL_checkany(L, k + 1);
  }
  lua_settop(L, nargs);
  for (int k = 0; k < nargs; k++) args[k] = lad_toarg(L, S, k + 1, k + 1, fname, &owner[k]);
  double v;
  ad_idx y;
  size_t bad = 0;
  rc = ad_dist(&S->tape, dist, args, &v, &y, &bad);
  if (rc == AD_ESIZE) return size_error(L, args, nargs, 1, fname);
  if (rc == AD_EARG)
    return luaL_error(L, "bad argument #%d to '%s' (counts are data: numbers, not vars)",
                      (int)bad + 1, fname);
  if (rc) return lad_error(L, rc, 0, fname);
  if (y != AD_NOVAR)
    for (int k = 0; k < nargs; k++) lad_anchor(L, S, owner[k]);
  push_result(L, S, v, y);
  return 1;
}

void lad_open_math(lua_State *L, int st) {
  static const struct { const char *name; int op; } un[] = {
#define AD_X_(e, s) {s, AD_OP_##e},
    AD_UNARY_OPS(AD_X_)
#undef AD_X_
  };
  for (size_t i = 0; i < sizeof un / sizeof un[0]; i++) {
    lua_pushvalue(L, st);
    lua_pushinteger(L, un[i].op);
    lua_pushcclosure(L, f_unary, 2);
    lua_setfield(L, -2, un[i].name);
  }
  static const struct { const char *name; int op; } bin[] = {
    {"add", AD_OP_ADD}, {"sub", AD_OP_SUB}, {"mul", AD_OP_MUL}, {"div", AD_OP_DIV},
    {"pow", AD_OP_POW}, {"fmin", AD_OP_FMIN}, {"fmax", AD_OP_FMAX}};
  for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++) {
    lua_pushvalue(L, st);
    lua_pushinteger(L, bin[i].op);
    lua_pushcclosure(L, f_binary, 2);
    lua_setfield(L, -2, bin[i].name);
  }
  for (int d = 0; d < AD_DIST_COUNT_; d++) {
    lua_pushvalue(L, st);
    lua_pushinteger(L, d);
    lua_pushcclosure(L, f_dist, 2);
    lua_setfield(L, -2, ad_dist_name(d));
  }
  static const luaL_Reg fs[] = {{"sum", l_sum}, {"dot", l_dot}, {"matvec", l_matvec},
                                {"log_sum_exp", l_log_sum_exp}, {NULL, NULL}};
  lua_pushvalue(L, st);
  luaL_setfuncs(L, fs, 1);
}
