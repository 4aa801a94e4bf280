/* SPDX-License-Identifier: MIT */
/*
** ad.grad, ad.jacobian, ad.hessian, ad.jvp, ad.vjp, ad.hvp, ad.check_grad.
** Each records the user's function once inside a nested region, guarded by a
** to-be-closed value so an error inside f (or ours) ends the region and
** releases its memory, with the original error and traceback intact.
*/
#include <math.h>
#include <string.h>
#include "adlib/lad_internal.h"
#include "array/array.h"

#define REGION_MT "ad.Region"

typedef struct guard {
  int depth; /* the region's depth; 0 once closed */
} guard;

static int guard_close(lua_State *L) {
  lad_state *S = lad_S(L);
  guard *g = luaL_checkudata(L, 1, REGION_MT);
  while (g->depth > 0 && S->tape.depth >= g->depth) lad_region_end(L, S);
  g->depth = 0;
  return 0;
}

/* A session: theta read, region opened, leaves created, f called. */
typedef struct session {
  lad_state *S;
  int array_theta;   /* theta was a typed array: return arrays */
  size_t n;          /* inputs */
  ad_idx *in;        /* their vars (buffer owned by the Lua stack) */
  int guard_idx;
  int result;        /* stack index of f's first result */
} session;

/* Stack effect: pushes [inputs buffer, guard, Vec, result]. f at fidx is
** called with the Vec and the values at stack indices a0..a1 (a1 < a0: none).
** With second, the region is marked as recording for a Hessian. */
static void run2(lua_State *L, session *s, int fidx, int tidx, int a0, int a1,
                 const char *fname, int second) {
  lad_state *S = s->S = lad_S(L);
  luaL_checktype(L, fidx, LUA_TFUNCTION);
  s->array_theta = mpb_array_test(L, tidx) != NULL;
  double *x = lad_tonumbers(L, tidx, 2, fname, &s->n);
  /* keep x: replace it with the index buffer after copying */
  s->in = lua_newuserdatauv(L, (s->n ? s->n : 1) * sizeof(ad_idx), 0);
  guard *g = lua_newuserdatauv(L, sizeof *g, 0);
  g->depth = 0;
  luaL_setmetatable(L, REGION_MT);
  s->guard_idx = lua_gettop(L);
  lua_toclose(L, s->guard_idx);
  lad_region_begin(L, S);
  g->depth = S->tape.depth;
  S->second[S->tape.depth] = (uint8_t)second;
  ad_idx first;
  int rc = ad_vars_new(&S->tape, s->n, x, &first);
  if (rc) lad_error(L, rc, 0, fname);
  for (size_t j = 0; j < s->n; j++) s->in[j] = first + (ad_idx)j;
  lad_newvec(L, S, first, s->n);
  int vec = lua_gettop(L);
  lua_pushvalue(L, fidx);
  lua_pushvalue(L, vec);
  int nextra = a1 >= a0 ? a1 - a0 + 1 : 0;
  luaL_checkstack(L, nextra, "too many arguments");
  for (int i = a0; i <= a1; i++) lua_pushvalue(L, i);
  lua_call(L, 1 + nextra, 1);
  s->result = lua_gettop(L);
}

static void run(lua_State *L, session *s, int fidx, int tidx, int a0, int a1,
                const char *fname) {
  run2(L, s, fidx, tidx, a0, a1, fname, 0);
}

static void finish(lua_State *L, session *s) {
  lua_closeslot(L, s->guard_idx);
}

/* f's result as one scalar var (a number becomes a constant leaf). */
static ad_idx scalar_result(lua_State *L, session *s, const char *fname) {
  ad_idx y;
  int rc;
  if (lua_type(L, s->result) == LUA_TNUMBER) {
    if ((rc = ad_var_new(&s->S->tape, lua_tonumber(L, s->result), &y)))
      lad_error(L, rc, 0, fname);
    return y;
  }
  if (lua_type(L, s->result) != LUA_TLIGHTUSERDATA)
    luaL_error(L, "%s: the function must return a number or a scalar ad var, got %s", fname,
               luaL_typename(L, s->result));
  lad_checkvar(L, s->S, s->result, 1, &y);
  return y;
}

/* f's result as m vars (pushes their buffer); *scalar if it was one value. */
static ad_idx *vector_result(lua_State *L, session *s, size_t *m, int *scalar,
                             const char *fname) {
  lad_state *S = s->S;
  int r = s->result, t = lua_type(L, r), rc;
  *scalar = t == LUA_TNUMBER || t == LUA_TLIGHTUSERDATA;
  if (*scalar) {
    ad_idx *y = lua_newuserdatauv(L, sizeof(ad_idx), 0);
    *y = scalar_result(L, s, fname);
    *m = 1;
    return y;
  }
  lad_vec *pv = lad_testvec(L, r);
  if (pv) {
    lad_vec v;
    lad_checkvec(L, S, r, 1, &v);
    ad_idx *y = lua_newuserdatauv(L, (v.n ? v.n : 1) * sizeof(ad_idx), 0);
    for (size_t i = 0; i < v.n; i++) y[i] = v.var + (ad_idx)i;
    *m = v.n;
    return y;
  }
  if (t != LUA_TTABLE)
    luaL_error(L, "%s: the function must return numbers, ad vars or a table of them, got %s",
               fname, luaL_typename(L, r));
  size_t n = (size_t)luaL_len(L, r);
  ad_idx *y = lua_newuserdatauv(L, (n ? n : 1) * sizeof(ad_idx), 0);
  for (size_t i = 0; i < n; i++) {
    int et = lua_geti(L, r, (lua_Integer)i + 1);
    if (et == LUA_TNUMBER) {
      if ((rc = ad_var_new(&S->tape, lua_tonumber(L, -1), &y[i]))) lad_error(L, rc, 0, fname);
    } else if (et != LUA_TLIGHTUSERDATA) {
      luaL_error(L, "%s: result element %d is a %s", fname, (int)i + 1, luaL_typename(L, -1));
    } else {
      lad_checkvar(L, S, -1, 1, &y[i]);
    }
    lua_pop(L, 1);
  }
  *m = n;
  return y;
}

static double *newbuf(lua_State *L, size_t n) {
  return lua_newuserdatauv(L, (n ? n : 1) * sizeof(double), 0);
}

/* A vector of the inputs' shape: typed array if theta was one, else table. */
static void push_vec(lua_State *L, const session *s, const double *x, size_t n) {
  if (s->array_theta) {
    int64_t d = (int64_t)n;
    mpb_array *a = mpb_array_new(L, MPB_F64, 1, &d);
    for (size_t i = 0; i < n; i++) mpb_array_setd(a, (int64_t)i, x[i]);
  } else {
    lad_pushnumbers(L, x, n);
  }
}

static void push_rows(lua_State *L, const double *J, size_t m, size_t n) {
  lua_createtable(L, (int)m, 0);
  for (size_t i = 0; i < m; i++) {
    lad_pushnumbers(L, J + i * n, n);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static void check(lua_State *L, int rc, const char *fname) {
  if (rc) lad_error(L, rc, 0, fname);
}

/* ------------------------------------------------------------ drivers */

static int l_grad(lua_State *L) {
  session s;
  int top = lua_gettop(L);
  run(L, &s, 1, 2, 3, top, "ad.grad");
  ad_idx y = scalar_result(L, &s, "ad.grad");
  double *g = newbuf(L, s.n), v = s.S->tape.val[y];
  check(L, ad_grad(&s.S->tape, y, s.n, s.in, g), "ad.grad");
  finish(L, &s);
  lua_pushnumber(L, v);
  push_vec(L, &s, g, s.n);
  return 2;
}

static int l_jacobian(lua_State *L) {
  session s;
  size_t m;
  int scalar, top = lua_gettop(L);
  run(L, &s, 1, 2, 3, top, "ad.jacobian");
  ad_idx *y = vector_result(L, &s, &m, &scalar, "ad.jacobian");
  double *J = newbuf(L, m * s.n), *v = newbuf(L, m);
  for (size_t i = 0; i < m; i++) v[i] = s.S->tape.val[y[i]];
  check(L, ad_jacobian(&s.S->tape, m, y, s.n, s.in, J), "ad.jacobian");
  finish(L, &s);
  lad_pushnumbers(L, v, m);
  push_rows(L, J, m, s.n);
  return 2;
}

static int l_hessian(lua_State *L) {
  session s;
  int top = lua_gettop(L);
  run2(L, &s, 1, 2, 3, top, "ad.hessian", 1);
  ad_idx y = scalar_result(L, &s, "ad.hessian");
  double *g = newbuf(L, s.n), *H = newbuf(L, s.n * s.n), v = s.S->tape.val[y];
  check(L, ad_hessian(&s.S->tape, y, s.n, s.in, g, H), "ad.hessian");
  finish(L, &s);
  lua_pushnumber(L, v);
  push_vec(L, &s, g, s.n);
  push_rows(L, H, s.n, s.n);
  return 3;
}

static double *direction(lua_State *L, int idx, size_t want, const char *fname) {
  size_t n;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    double *d = newbuf(L, 1);
    *d = lua_tonumber(L, idx);
    n = 1;
    if (n != want) luaL_error(L, "bad argument #3 to '%s' (length 1 does not match %d)",
                              fname, (int)want);
    return d;
  }
  double *d = lad_tonumbers(L, idx, 3, fname, &n);
  if (n != want)
    luaL_error(L, "bad argument #3 to '%s' (length %d does not match %d)", fname, (int)n,
               (int)want);
  return d;
}

static void push_out(lua_State *L, int scalar, const double *x, size_t n) {
  if (scalar) lua_pushnumber(L, x[0]);
  else lad_pushnumbers(L, x, n);
}

static int l_jvp(lua_State *L) {
  session s;
  size_t m;
  int scalar, top = lua_gettop(L);
  luaL_checkany(L, 3);
  run(L, &s, 1, 2, 4, top, "ad.jvp");
  double *dir = direction(L, 3, s.n, "ad.jvp");
  ad_idx *y = vector_result(L, &s, &m, &scalar, "ad.jvp");
  double *jv = newbuf(L, m), *v = newbuf(L, m);
  for (size_t i = 0; i < m; i++) v[i] = s.S->tape.val[y[i]];
  check(L, ad_jvp(&s.S->tape, m, y, s.n, s.in, dir, jv), "ad.jvp");
  finish(L, &s);
  push_out(L, scalar, v, m);
  push_out(L, scalar, jv, m);
  return 2;
}

static int l_vjp(lua_State *L) {
  session s;
  size_t m;
  int scalar, top = lua_gettop(L);
  luaL_checkany(L, 3);
  run(L, &s, 1, 2, 4, top, "ad.vjp");
  ad_idx *y = vector_result(L, &s, &m, &scalar, "ad.vjp");
  double *u = direction(L, 3, m, "ad.vjp");
  double *g = newbuf(L, s.n), *v = newbuf(L, m);
  for (size_t i = 0; i < m; i++) v[i] = s.S->tape.val[y[i]];
  check(L, ad_vjp(&s.S->tape, m, y, u, s.n, s.in, g), "ad.vjp");
  finish(L, &s);
  push_out(L, scalar, v, m);
  push_vec(L, &s, g, s.n);
  return 2;
}

static int l_hvp(lua_State *L) {
  session s;
  int top = lua_gettop(L);
  luaL_checkany(L, 3);
  run2(L, &s, 1, 2, 4, top, "ad.hvp", 1);
  double *dir = direction(L, 3, s.n, "ad.hvp");
  ad_idx y = scalar_result(L, &s, "ad.hvp");
  double *g = newbuf(L, s.n), *hv = newbuf(L, s.n), v = s.S->tape.val[y];
  check(L, ad_hvp(&s.S->tape, y, s.n, s.in, 1, dir, g, hv), "ad.hvp");
  finish(L, &s);
  lua_pushnumber(L, v);
  push_vec(L, &s, g, s.n);
  push_vec(L, &s, hv, s.n);
  return 3;
}

/* ------------------------------------------------------------ check_grad */

/* Value of f at x (recorded in a region of its own, then released). */
static double eval_at(lua_State *L, int fidx, const double *x, size_t n) {
  int top = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(2)); /* ad.grad-like runner: value only */
  lua_pushvalue(L, fidx);
  lad_pushnumbers(L, x, n);
  lua_call(L, 2, 1);
  double v = lua_tonumber(L, -1);
  lua_settop(L, top);
  return v;
}

static int l_value_of(lua_State *L) {
  session s;
  run(L, &s, 1, 2, 3, 2, "ad.check_grad");
  ad_idx y = scalar_result(L, &s, "ad.check_grad");
  double v = s.S->tape.val[y];
  finish(L, &s);
  lua_pushnumber(L, v);
  return 1;
}

static double optnum(lua_State *L, int t, const char *k, double d) {
  if (lua_type(L, t) != LUA_TTABLE) return d;
  lua_getfield(L, t, k);
  double v = luaL_optnumber(L, -1, d);
  lua_pop(L, 1);
  return v;
}

/* ok, report = check_grad(f, theta, {h=1e-3, rtol=1e-6, atol=1e-6}):
** central differences of order 6 with step h*max(1,|x_i|). Coordinate i
** passes if its absolute error <= atol or its relative error <= rtol. */
static int l_check_grad(lua_State *L) {
  double h = optnum(L, 3, "h", 1e-3), rtol = optnum(L, 3, "rtol", 1e-6),
         atol = optnum(L, 3, "atol", 1e-6);
  lua_settop(L, 3);
  lua_pushvalue(L, lua_upvalueindex(3)); /* ad.grad */
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_call(L, 2, 2); /* 4: value, 5: gradient */
  size_t n;
  double *x = lad_tonumbers(L, 2, 2, "ad.check_grad", &n); /* 6 */
  double *g = lad_tonumbers(L, 5, 2, "ad.check_grad", &n); /* 7 */
  double *fd = newbuf(L, 3 * n), *ae = fd + n, *re = fd + 2 * n;
  static const double w[3] = {45, -9, 1};
  double maxa = 0, maxr = 0;
  int ok = 1, worst = 0;
  for (size_t i = 0; i < n; i++) {
    double xi = x[i], hi = h * fmax(1.0, fabs(xi)), s = 0;
    for (int k = 1; k <= 3; k++) {
      x[i] = xi + k * hi;
      double fp = eval_at(L, 1, x, n);
      x[i] = xi - k * hi;
      double fm = eval_at(L, 1, x, n);
      s += w[k - 1] * (fp - fm);
    }
    x[i] = xi;
    fd[i] = s / (60 * hi);
    ae[i] = fabs(g[i] - fd[i]);
    double scale = fmax(fabs(g[i]), fabs(fd[i]));
    re[i] = scale > 0 ? ae[i] / scale : 0;
    if (!(ae[i] <= atol || re[i] <= rtol)) ok = 0;
    if (ae[i] > maxa || isnan(ae[i])) { maxa = ae[i]; worst = (int)i + 1; }
    if (re[i] > maxr || isnan(re[i])) maxr = re[i];
  }
  lua_pushboolean(L, ok);
  lua_createtable(L, 0, 8);
  lua_pushnumber(L, maxa); lua_setfield(L, -2, "max_abs_err");
  lua_pushnumber(L, maxr); lua_setfield(L, -2, "max_rel_err");
  lua_pushinteger(L, worst); lua_setfield(L, -2, "worst");
  lua_pushvalue(L, 4); lua_setfield(L, -2, "value");
  lad_pushnumbers(L, g, n); lua_setfield(L, -2, "grad");
  lad_pushnumbers(L, fd, n); lua_setfield(L, -2, "fd");
  lad_pushnumbers(L, ae, n); lua_setfield(L, -2, "abs_err");
  lad_pushnumbers(L, re, n); lua_setfield(L, -2, "rel_err");
  return 2;
}

void lad_open_drive(lua_State *L, int st) {
  luaL_newmetatable(L, REGION_MT);
  lua_pushvalue(L, st);
  lua_pushcclosure(L, guard_close, 1);
  lua_setfield(L, -2, "__close");
  lua_pop(L, 1);
  static const luaL_Reg fs[] = {{"grad", l_grad}, {"jacobian", l_jacobian},
                                {"hessian", l_hessian}, {"jvp", l_jvp}, {"vjp", l_vjp},
                                {"hvp", l_hvp}, {NULL, NULL}};
  lua_pushvalue(L, st);
  luaL_setfuncs(L, fs, 1);
  /* check_grad: upvalues state, the value-only runner, ad.grad */
  lua_pushvalue(L, st);
  lua_pushvalue(L, st);
  lua_pushcclosure(L, l_value_of, 1);
  lua_getfield(L, -3, "grad");
  lua_pushcclosure(L, l_check_grad, 3);
  lua_setfield(L, -2, "check_grad");
}
