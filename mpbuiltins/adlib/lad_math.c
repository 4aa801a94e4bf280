/* SPDX-License-Identifier: MIT */
/* ad's math: elementwise functions (numbers, vars, vectors, matrices) and
** reductions, each one tape node per call. Densities are in lad_dist.c,
** matrix functions in lad_mat.c. */
#include <string.h>
#include "adlib/lad_internal.h"

/* ------------------------------------------------------------- errors */

/* "bad argument #k to 'f' (length 3 does not match 4)" for AD_ESIZE. */
int lad_size_error(lua_State *L, const ad_arg *args, int nargs, int first_arg,
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

/* The shape of a vector result: that of the first matrix-shaped argument
** among idx[0..k-1] with n elements (or none). */
static void shape_from(lua_State *L, const int *idx, int k, size_t n) {
  size_t r, c;
  for (int i = 0; i < k; i++)
    if (lad_matshape(L, idx[i], &r, &c) && r * c == n) {
      lad_setshape(L, -1, r, c);
      return;
    }
}

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
  idx = lua_absindex(L, idx);
  ad_arg a = lad_toarg(L, S, idx, 1, fname, &owner);
  if (!ad_arg_isvar(&a)) {
    double *r = lad_newconst(L, a.n);
    for (size_t i = 0; i < a.n; i++) r[i] = ad_unary_eval(op, a.c ? a.c[i] : a.cval, &d);
  } else {
    if ((rc = ad_vec_unary(&S->tape, op, a, &y))) return lad_error(L, rc, 1, fname);
    lad_newvec(L, S, y, a.n);
  }
  shape_from(L, &idx, 1, a.n);
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
  int ab[2] = {lua_absindex(L, ia), lua_absindex(L, ib)};
  args[0] = lad_toarg(L, S, ia, 1, fname, &oa);
  args[1] = lad_toarg(L, S, ib, 2, fname, &ob);
  size_t n;
  if (ad_args_length(2, args, &n, NULL)) return lad_size_error(L, args, 2, 1, fname);
  if (!ad_arg_isvar(&args[0]) && !ad_arg_isvar(&args[1])) {
    double *r = lad_newconst(L, n);
    for (size_t i = 0; i < n; i++)
      r[i] = ad_binary_eval(op, ad_arg_at(&S->tape, &args[0], i),
                            ad_arg_at(&S->tape, &args[1], i), &pa, &pb);
  } else {
    if ((rc = ad_vec_binary(&S->tape, op, args[0], args[1], &y, &n)))
      return lad_error(L, rc, 0, fname);
    lad_anchor(L, S, oa);
    lad_anchor(L, S, ob);
    lad_newvec(L, S, y, n);
  }
  shape_from(L, ab, 2, n);
  return 1;
}

/* Upvalues: 1 the state, 2 the op, 3 the function's full name ("ad.exp"). */
static int f_unary(lua_State *L) {
  int op = (int)lua_tointeger(L, lua_upvalueindex(2));
  luaL_checkany(L, 1);
  return lad_unary_any(L, lad_S(L), op, 1, lua_tostring(L, lua_upvalueindex(3)));
}

static int f_binary(lua_State *L) {
  int op = (int)lua_tointeger(L, lua_upvalueindex(2));
  luaL_checkany(L, 1);
  luaL_checkany(L, 2);
  return lad_binary_any(L, lad_S(L), op, 1, 2, lua_tostring(L, lua_upvalueindex(3)));
}

/* ---------------------------------------------------------- reductions */

void lad_push_result(lua_State *L, lad_state *S, double value, ad_idx y) {
  if (y == AD_NOVAR) lua_pushnumber(L, value);
  else lad_push(L, S, y);
}

static int l_sum(lua_State *L) {
  lad_state *S = lad_S(L);
  int owner, rc;
  ad_idx y;
  double v;
  luaL_checkany(L, 1);
  ad_arg a = lad_toarg(L, S, 1, 1, "ad.sum", &owner);
  if ((rc = ad_sum(&S->tape, a, &v, &y))) return lad_error(L, rc, 1, "ad.sum");
  lad_push_result(L, S, v, y);
  return 1;
}

static int l_log_sum_exp(lua_State *L) {
  lad_state *S = lad_S(L);
  int owner, rc;
  ad_idx y;
  double v;
  luaL_checkany(L, 1);
  if (!lua_isnoneornil(L, 2))
    return lad_binary_any(L, S, AD_OP_LOG_SUM_EXP2, 1, 2, "ad.log_sum_exp");
  ad_arg a = lad_toarg(L, S, 1, 1, "ad.log_sum_exp", &owner);
  if ((rc = ad_log_sum_exp(&S->tape, a, &v, &y))) return lad_error(L, rc, 1, "ad.log_sum_exp");
  lad_push_result(L, S, v, y);
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
  args[0] = lad_toarg(L, S, 1, 1, "ad.dot", &oa);
  args[1] = lad_toarg(L, S, 2, 2, "ad.dot", &ob);
  if (args[0].n != args[1].n)
    return luaL_error(L, "bad argument #2 to 'ad.dot' (length %d does not match %d)",
                      (int)args[1].n, (int)args[0].n);
  if ((rc = ad_dot(&S->tape, args[0], args[1], &v, &y))) return lad_error(L, rc, 0, "ad.dot");
  if (y != AD_NOVAR) {
    lad_anchor(L, S, oa);
    lad_anchor(L, S, ob);
  }
  lad_push_result(L, S, v, y);
  return 1;
}

/* Push a closure of f with upvalues: the state, an integer code, "ad.<name>". */
void lad_push_coded(lua_State *L, int st, lua_CFunction f, int code, const char *name) {
  lua_pushvalue(L, st);
  lua_pushinteger(L, code);
  lua_pushfstring(L, "ad.%s", name);
  lua_pushcclosure(L, f, 3);
}

void lad_open_math(lua_State *L, int st) {
  static const struct { const char *name; int op; } un[] = {
#define AD_X_(e, s) {s, AD_OP_##e},
    AD_UNARY_OPS(AD_X_)
#undef AD_X_
  };
  for (size_t i = 0; i < sizeof un / sizeof un[0]; i++) {
    lad_push_coded(L, st, f_unary, un[i].op, un[i].name);
    lua_setfield(L, -2, un[i].name);
  }
  static const struct { const char *name; int op; } bin[] = {
#define AD_X_(e, s) {s, AD_OP_##e},
    AD_BINARY_OPS(AD_X_)
#undef AD_X_
    {"multiply_log", AD_OP_LMULTIPLY}}; /* Stan's older name of lmultiply */
  for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++) {
    if (bin[i].op == AD_OP_LOG_SUM_EXP2) continue; /* ad.log_sum_exp: below */
    lad_push_coded(L, st, f_binary, bin[i].op, bin[i].name);
    lua_setfield(L, -2, bin[i].name);
  }
  static const luaL_Reg fs[] = {{"sum", l_sum}, {"dot", l_dot},
                                {"log_sum_exp", l_log_sum_exp}, {NULL, NULL}};
  lua_pushvalue(L, st);
  luaL_setfuncs(L, fs, 1);
}
