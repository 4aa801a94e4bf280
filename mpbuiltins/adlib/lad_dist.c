/* SPDX-License-Identifier: MIT */
/* ad's log densities and cdfs: summed over elements (ad.normal_lpdf, one
** scalar), per element (ad.each.normal_lpdf, one value per element), and
** log_mix. One tape node per call; counts are checked to be counts. */
#include <math.h>
#include "adlib/lad_internal.h"

/* The message for a count that is not one (AD_ECOUNT). */
static int count_error(lua_State *L, lad_state *S, int dist, const ad_arg *args, size_t n,
                       const char *fname) {
  size_t k = 0, i = 0;
  ad_dist_check_counts(&S->tape, dist, args, n, &k, &i);
  double v = ad_arg_at(&S->tape, &args[k], i);
  const char *want = "a non-negative integer";
  int kind = ad_dist_count_kind(dist);
  if (kind == AD_CNT_BINARY) want = "0 or 1";
  if (kind == AD_CNT_BOUNDED && k == 0) {
    lua_pushfstring(L, "an integer in 0..N (N = %f)", ad_arg_at(&S->tape, &args[1], i));
    want = lua_tostring(L, -1);
  }
  return luaL_error(L, "bad argument #%d to '%s' (element %d is %f, expected %s)", (int)k + 1,
                    fname, (int)i + 1, v, want);
}

/* Arguments 1..nargs as ad_args (their owners in owner[]); raises on a
** missing one. */
static void read_args(lua_State *L, lad_state *S, int nargs, ad_arg *args, int *owner,
                      const char *fname) {
  for (int k = 0; k < nargs; k++) luaL_checkany(L, k + 1);
  lua_settop(L, nargs);
  for (int k = 0; k < nargs; k++) args[k] = lad_toarg(L, S, k + 1, k + 1, fname, &owner[k]);
}

/* Errors of ad_dist / ad_dist_each. */
static int dist_error(lua_State *L, lad_state *S, int rc, int dist, const ad_arg *args,
                      size_t bad, const char *fname) {
  int nargs = ad_dist_nargs(dist);
  size_t n = 1;
  if (rc == AD_ESIZE) return lad_size_error(L, args, nargs, 1, fname);
  if (rc == AD_EARG)
    return luaL_error(L, "bad argument #%d to '%s' (counts are data: numbers, not vars)",
                      (int)bad + 1, fname);
  if (rc == AD_ECOUNT) {
    ad_args_length((size_t)nargs, args, &n, NULL);
    return count_error(L, S, dist, args, n, fname);
  }
  return lad_error(L, rc, 0, fname);
}

/* ad.<density>(x0, x1, ...): the sum over elements. Upvalue 2: the dist. */
static int f_dist(lua_State *L) {
  lad_state *S = lad_S(L);
  int dist = (int)lua_tointeger(L, lua_upvalueindex(2));
  int nargs = ad_dist_nargs(dist), owner[4], rc;
  const char *fname = lua_tostring(L, lua_upvalueindex(3));
  ad_arg args[4];
  read_args(L, S, nargs, args, owner, fname);
  double v;
  ad_idx y;
  size_t bad = 0;
  if ((rc = ad_dist(&S->tape, dist, args, &v, &y, &bad)))
    return dist_error(L, S, rc, dist, args, bad, fname);
  if (y != AD_NOVAR)
    for (int k = 0; k < nargs; k++) lad_anchor(L, S, owner[k]);
  lad_push_result(L, S, v, y);
  return 1;
}

/* ad.each.<density>(...) and ad.log_mix(theta, l1, l2): one value per
** element, a vector (a scalar when every argument is one). */
static int each(lua_State *L, int dist, const char *fname) {
  lad_state *S = lad_S(L);
  int nargs = ad_dist_nargs(dist), owner[4], rc;
  ad_arg args[4];
  read_args(L, S, nargs, args, owner, fname);
  size_t n = 1, bad = 0;
  ad_args_length((size_t)nargs, args, &n, NULL);
  double *cval = lad_newconst(L, n); /* the result if nothing is a var */
  ad_idx y;
  if ((rc = ad_dist_each(&S->tape, dist, args, cval, &y, &n, &bad)))
    return dist_error(L, S, rc, dist, args, bad, fname);
  int scalar = 1;
  for (int k = 0; k < nargs; k++) scalar &= lua_type(L, k + 1) == LUA_TNUMBER ||
                                           lua_type(L, k + 1) == LUA_TLIGHTUSERDATA;
  if (y == AD_NOVAR) {
    if (scalar) lua_pushnumber(L, cval[0]);
    return 1;
  }
  for (int k = 0; k < nargs; k++) lad_anchor(L, S, owner[k]);
  if (scalar) lad_push(L, S, y);
  else lad_newvec(L, S, y, n);
  return 1;
}

static int f_each(lua_State *L) {
  return each(L, (int)lua_tointeger(L, lua_upvalueindex(2)),
              lua_tostring(L, lua_upvalueindex(3)));
}

/* log_mix(theta, l1, l2) elementwise; log_mix(theta, lambdas) for a
** mixture of K components: log sum_k theta_k exp(lambda_k). */
static int l_log_mix(lua_State *L) {
  if (!lua_isnoneornil(L, 3)) return each(L, AD_DIST_LOG_MIX, "ad.log_mix");
  lad_state *S = lad_S(L);
  int o1, o2, rc;
  luaL_checkany(L, 2);
  lua_settop(L, 2);
  ad_arg th = lad_toarg(L, S, 1, 1, "ad.log_mix", &o1);
  ad_arg lam = lad_toarg(L, S, 2, 2, "ad.log_mix", &o2);
  if (th.n != lam.n)
    return luaL_error(L, "bad argument #2 to 'ad.log_mix' (length %d does not match %d)",
                      (int)lam.n, (int)th.n);
  /* log(theta) + lambda, then log_sum_exp: three nodes, or plain numbers */
  lad_unary_any(L, S, AD_OP_LOG, 1, "ad.log_mix");
  lad_binary_any(L, S, AD_OP_ADD, lua_gettop(L), 2, "ad.log_mix");
  ad_arg s = lad_toarg(L, S, lua_gettop(L), 1, "ad.log_mix", &o1);
  double v;
  ad_idx y;
  if ((rc = ad_log_sum_exp(&S->tape, s, &v, &y))) return lad_error(L, rc, 0, "ad.log_mix");
  lad_push_result(L, S, v, y);
  return 1;
}

void lad_open_dist(lua_State *L, int st) {
  lua_newtable(L); /* ad.each */
  for (int d = 0; d < AD_DIST_COUNT_; d++) {
    const char *name = ad_dist_name(d);
    if (d == AD_DIST_LOG_MIX) continue;
    if (ad_dist_is_function(d)) { /* ad.inc_beta(a, b, x): elementwise */
      lad_push_coded(L, st, f_each, d, name);
      lua_setfield(L, -3, name);
      continue;
    }
    lad_push_coded(L, st, f_dist, d, name);
    lua_setfield(L, -3, name);
    lua_pushfstring(L, "each.%s", name);
    lad_push_coded(L, st, f_each, d, lua_tostring(L, -1));
    lua_setfield(L, -3, name);
    lua_pop(L, 1);
  }
  lua_setfield(L, -2, "each");
  lua_pushvalue(L, st);
  lua_pushcclosure(L, l_log_mix, 1);
  lua_setfield(L, -2, "log_mix");
}
