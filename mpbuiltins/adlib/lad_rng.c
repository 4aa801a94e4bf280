/* SPDX-License-Identifier: MIT */
/* ad's _rng functions (Stan's names and argument orders) over ad/ad_rng.h,
** and ad.rng_seed. One generator per lua_State (in the module's state):
** ad.rng_seed(k1, k2, ...) sets it from integers (hmc.generate sets it from
** the seed, the chain and the draw, so draws do not depend on the rank that
** makes them). Arguments are numbers (vars give their values), vectors
** (tables, ad.Const, ad vectors, mp.arrays) broadcasting as the densities
** do; the result is a number (an integer for counts) or, when an argument
** is a vector, a table of them. Bad arguments are errors naming them. */
#include <math.h>
#include <string.h>
#include "adlib/lad_internal.h"
#include "ad_rng.h"
#include "array/array.h"

/* ----------------------------------------------------------- arguments */

/* The values of argument idx (pushed buffer owned by the stack): *n of them. */
static const double *values(lua_State *L, lad_state *S, int idx, int arg, const char *fname, size_t *n) {
  ad_idx v;
  lad_vec *pv;
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TNUMBER || lua_type(L, idx) == LUA_TLIGHTUSERDATA) {
    double *b = lua_newuserdatauv(L, sizeof(double), 0);
    if (lua_type(L, idx) == LUA_TNUMBER) *b = lua_tonumber(L, idx);
    else if (lad_checkvar(L, S, idx, arg, &v)) *b = S->tape.val[v];
    *n = 1;
    return b;
  }
  if ((pv = lad_testvec(L, idx))) {
    lad_vec w;
    lad_checkvec(L, S, idx, arg, &w);
    double *b = lua_newuserdatauv(L, (w.n ? w.n : 1) * sizeof(double), 0);
    if (w.n) memcpy(b, S->tape.val + w.var, w.n * sizeof(double));
    *n = w.n;
    return b;
  }
  if (lua_type(L, idx) == LUA_TTABLE) { /* numbers or vars */
    size_t len = (size_t)luaL_len(L, idx);
    double *b = lua_newuserdatauv(L, (len ? len : 1) * sizeof(double), 0);
    for (size_t i = 0; i < len; i++) {
      int t = lua_geti(L, idx, (lua_Integer)i + 1);
      if (t == LUA_TNUMBER) b[i] = lua_tonumber(L, -1);
      else if (t == LUA_TLIGHTUSERDATA && lad_checkvar(L, S, -1, arg, &v)) b[i] = S->tape.val[v];
      else
        luaL_error(L, "bad argument #%d to '%s' (element %d is a %s, number expected)", arg, fname,
                   (int)i + 1, luaL_typename(L, -1));
      lua_pop(L, 1);
    }
    *n = len;
    return b;
  }
  return lad_tonumbers(L, idx, arg, fname, n);
}

/* A square or rectangular matrix argument's values (column-major, pushed):
** a table of rows, or anything with a matrix shape. */
static const double *matrix(lua_State *L, lad_state *S, int idx, int arg, const char *fname, size_t *rows,
                            size_t *cols) {
  idx = lua_absindex(L, idx);
  size_t n;
  if (lad_matshape(L, idx, rows, cols)) return values(L, S, idx, arg, fname, &n);
  if (lua_type(L, idx) == LUA_TTABLE && lua_geti(L, idx, 1) == LUA_TTABLE) {
    size_t m = (size_t)luaL_len(L, idx), c = (size_t)luaL_len(L, -1);
    lua_pop(L, 1);
    double *b = lua_newuserdatauv(L, (m * c > 0 ? m * c : 1) * sizeof(double), 0);
    for (size_t i = 0; i < m; i++) {
      lua_geti(L, idx, (lua_Integer)i + 1);
      if (!lua_istable(L, -1) || (size_t)luaL_len(L, -1) != c)
        luaL_error(L, "bad argument #%d to '%s' (row %d is not a table of length %d)", arg, fname, (int)i + 1, (int)c);
      for (size_t j = 0; j < c; j++) {
        lua_geti(L, -1, (lua_Integer)j + 1);
        ad_idx v;
        if (lua_type(L, -1) == LUA_TNUMBER) b[i + j * m] = lua_tonumber(L, -1);
        else if (lad_checkvar(L, S, -1, arg, &v)) b[i + j * m] = S->tape.val[v];
        else luaL_error(L, "bad argument #%d to '%s' (element [%d][%d] is not a number)", arg, fname, (int)i + 1, (int)j + 1);
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
    *rows = m, *cols = c;
    return b;
  }
  luaL_error(L, "bad argument #%d to '%s' (matrix expected: a table of rows, a matrix or a 2-d mp.array)", arg, fname);
  return NULL;
}

static void push_draw(lua_State *L, double v, int integer) {
  if (integer && fabs(v) < 9e15) lua_pushinteger(L, (lua_Integer)v);
  else lua_pushnumber(L, v);
}

/* ----------------------------------------------------------- univariate */

static int f_rng(lua_State *L) {
  lad_state *S = lad_S(L);
  int d = (int)lua_tointeger(L, lua_upvalueindex(2));
  const char *fname = lua_tostring(L, lua_upvalueindex(3));
  int na = ad_rng_nargs(d), integer = ad_rng_integer(d);
  const double *v[4];
  size_t len[4], n = 1;
  int vec = 0;
  for (int k = 0; k < na; k++) luaL_checkany(L, k + 1);
  lua_settop(L, na);
  for (int k = 0; k < na; k++) {
    v[k] = values(L, S, k + 1, k + 1, fname, &len[k]);
    vec |= lua_type(L, k + 1) != LUA_TNUMBER && lua_type(L, k + 1) != LUA_TLIGHTUSERDATA;
    if (len[k] != 1) {
      if (n != 1 && len[k] != n)
        return luaL_error(L, "bad argument #%d to '%s' (length %d does not match %d)", k + 1, fname, (int)len[k], (int)n);
      n = len[k];
    }
  }
  if (vec) lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    double a[4] = {0, 0, 0, 0};
    const char *what = "";
    for (int k = 0; k < na; k++) a[k] = v[k][len[k] > 1 ? i : 0];
    int bad = ad_rng_check(d, a, &what);
    if (bad) {
      if (vec)
        return luaL_error(L, "bad argument #%d to '%s' (element %d must be %s, got %f)", bad, fname, (int)i + 1, what, a[bad - 1]);
      return luaL_error(L, "bad argument #%d to '%s' (must be %s, got %f)", bad, fname, what, a[bad - 1]);
    }
    push_draw(L, ad_rng_draw(&S->rng, d, a), integer);
    if (vec) lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* ad.rng_seed(k1, k2, ...): the generator's state from integers */
static int l_rng_seed(lua_State *L) {
  lad_state *S = lad_S(L);
  int n = lua_gettop(L);
  luaL_argcheck(L, n >= 1, 1, "an integer expected");
  int64_t key[16];
  luaL_argcheck(L, n <= 16, 17, "at most 16 integers");
  for (int i = 0; i < n; i++) key[i] = (int64_t)luaL_checkinteger(L, i + 1);
  ad_rng_seed(&S->rng, key, (size_t)n);
  return 0;
}

/* --------------------------------------------------------- multivariate */

static int check_rc(lua_State *L, int rc, const char *fname, const char *what) {
  if (rc == AD_EARG) return luaL_error(L, "%s: %s", fname, what);
  if (rc) return lad_error(L, rc, 0, fname);
  return 0;
}

static void push_list(lua_State *L, const double *x, size_t n, int integer) {
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    push_draw(L, x[i], integer);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static void push_matrix(lua_State *L, const double *x, size_t n) {
  double *c = lad_newconst(L, n * n);
  memcpy(c, x, n * n * sizeof(double));
  lad_setshape(L, -1, n, n);
}

static double *scratch(lua_State *L, size_t n) { return lua_newuserdatauv(L, (n ? n : 1) * sizeof(double), 0); }

static int l_dirichlet_rng(lua_State *L) {
  size_t K;
  const double *a = values(L, lad_S(L), 1, 1, "ad.dirichlet_rng", &K);
  double *out = scratch(L, K);
  check_rc(L, ad_rng_dirichlet(&lad_S(L)->rng, K, a, out), "ad.dirichlet_rng", "alpha must be positive and finite");
  push_list(L, out, K, 0);
  return 1;
}

/* softmax of x into p */
static void softmax(const double *x, size_t K, double *p) {
  double m = -INFINITY, s = 0;
  for (size_t k = 0; k < K; k++) m = x[k] > m ? x[k] : m;
  for (size_t k = 0; k < K; k++) s += p[k] = exp(x[k] - m);
  for (size_t k = 0; k < K; k++) p[k] /= s;
}

static int categorical(lua_State *L, int logit) {
  const char *fname = logit ? "ad.categorical_logit_rng" : "ad.categorical_rng";
  size_t K;
  const double *t = values(L, lad_S(L), 1, 1, fname, &K);
  double *p = scratch(L, K), out;
  if (logit) softmax(t, K, p);
  else memcpy(p, t, K * sizeof *p);
  check_rc(L, ad_rng_categorical(&lad_S(L)->rng, K, p, &out), fname, "theta must be a simplex");
  lua_pushinteger(L, (lua_Integer)out);
  return 1;
}
static int l_categorical_rng(lua_State *L) { return categorical(L, 0); }
static int l_categorical_logit_rng(lua_State *L) { return categorical(L, 1); }

static int multinomial(lua_State *L, int logit) {
  const char *fname = logit ? "ad.multinomial_logit_rng" : "ad.multinomial_rng";
  size_t K;
  const double *t = values(L, lad_S(L), 1, 1, fname, &K);
  double N = luaL_checknumber(L, 2), *p = scratch(L, 2 * K), *out = p + K;
  if (logit) softmax(t, K, p);
  else memcpy(p, t, K * sizeof *p);
  check_rc(L, ad_rng_multinomial(&lad_S(L)->rng, K, p, N, out), fname,
           "theta must be a simplex and N a non-negative integer");
  push_list(L, out, K, 1);
  return 1;
}
static int l_multinomial_rng(lua_State *L) { return multinomial(L, 0); }
static int l_multinomial_logit_rng(lua_State *L) { return multinomial(L, 1); }

/* The lower Cholesky factor of a covariance argument (or the factor itself). */
static const double *factor(lua_State *L, int idx, int arg, const char *fname, size_t n, int chol) {
  size_t r, c;
  const double *A = matrix(L, lad_S(L), idx, arg, fname, &r, &c);
  if (r != n || c != n)
    luaL_error(L, "bad argument #%d to '%s' (%dx%d matrix expected, got %dx%d)", arg, fname, (int)n, (int)n, (int)r, (int)c);
  if (chol) return A;
  double *Lf = scratch(L, n * n);
  ad_chol_values(A, n, Lf);
  for (size_t i = 0; i < n; i++)
    if (!(Lf[i + i * n] > 0)) luaL_error(L, "bad argument #%d to '%s' (not positive definite)", arg, fname);
  return Lf;
}

static int mvn(lua_State *L, int chol, int student) {
  const char *fname = student ? (chol ? "ad.multi_student_t_cholesky_rng" : "ad.multi_student_t_rng")
                              : (chol ? "ad.multi_normal_cholesky_rng" : "ad.multi_normal_rng");
  int a = student ? 2 : 1;
  double nu = student ? luaL_checknumber(L, 1) : 0;
  size_t n;
  const double *mu = values(L, lad_S(L), a, a, fname, &n);
  const double *Lf = factor(L, a + 1, a + 1, fname, n, chol);
  double *out = scratch(L, n);
  ad_rng *r = &lad_S(L)->rng;
  int rc = student ? ad_rng_multi_student_t_cholesky(r, n, nu, mu, Lf, out) : ad_rng_multi_normal_cholesky(r, n, mu, Lf, out);
  check_rc(L, rc, fname, "nu must be positive");
  push_list(L, out, n, 0);
  return 1;
}
static int l_multi_normal_rng(lua_State *L) { return mvn(L, 0, 0); }
static int l_multi_normal_cholesky_rng(lua_State *L) { return mvn(L, 1, 0); }
static int l_multi_student_t_rng(lua_State *L) { return mvn(L, 0, 1); }
static int l_multi_student_t_cholesky_rng(lua_State *L) { return mvn(L, 1, 1); }

static int lkj(lua_State *L, int cholesky) {
  const char *fname = cholesky ? "ad.lkj_corr_cholesky_rng" : "ad.lkj_corr_rng";
  lua_Integer K = luaL_checkinteger(L, 1);
  double eta = luaL_checknumber(L, 2);
  luaL_argcheck(L, K >= 1 && K <= 10000, 1, "K must be a positive integer");
  size_t n = (size_t)K;
  double *Lf = scratch(L, 2 * n * n);
  check_rc(L, ad_rng_lkj_corr_cholesky(&lad_S(L)->rng, n, eta, Lf), fname, "eta must be positive");
  if (!cholesky) {
    double *O = Lf + n * n;
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j <= i; j++) {
        double s = 0;
        for (size_t k = 0; k <= j; k++) s += Lf[i + k * n] * Lf[j + k * n];
        O[i + j * n] = O[j + i * n] = s;
      }
    Lf = O;
  }
  push_matrix(L, Lf, n);
  return 1;
}
static int l_lkj_corr_cholesky_rng(lua_State *L) { return lkj(L, 1); }
static int l_lkj_corr_rng(lua_State *L) { return lkj(L, 0); }

/* the inverse of a symmetric positive definite matrix from its factor Lf */
static void spd_inverse(const double *Lf, size_t n, double *inv) {
  memset(inv, 0, n * n * sizeof *inv);
  for (size_t i = 0; i < n; i++) inv[i + i * n] = 1;
  ad_trisolve_values(Lf, n, n, 0, inv);
  ad_trisolve_values(Lf, n, n, 1, inv);
}

static int wishart(lua_State *L, int inv) {
  const char *fname = inv ? "ad.inv_wishart_rng" : "ad.wishart_rng";
  double nu = luaL_checknumber(L, 1);
  size_t r, c;
  matrix(L, lad_S(L), 2, 2, fname, &r, &c);
  lua_pop(L, 1);
  if (r != c) return luaL_error(L, "bad argument #2 to '%s' (square matrix expected)", fname);
  size_t n = r;
  const double *Lf = factor(L, 2, 2, fname, n, 0);
  double *W = scratch(L, 5 * n * n), *work = W + n * n, *T = W + 3 * n * n, *T2 = W + 4 * n * n;
  if (inv) { /* W^-1 with W ~ wishart(nu, S^-1) */
    spd_inverse(Lf, n, T);
    ad_chol_values(T, n, T2);
    Lf = T2;
  }
  check_rc(L, ad_rng_wishart_cholesky(&lad_S(L)->rng, n, nu, Lf, W, work), fname, "nu must be greater than K - 1");
  if (inv) {
    ad_chol_values(W, n, T);
    spd_inverse(T, n, W);
  }
  push_matrix(L, W, n);
  return 1;
}
static int l_wishart_rng(lua_State *L) { return wishart(L, 0); }
static int l_inv_wishart_rng(lua_State *L) { return wishart(L, 1); }

/* ordered_logistic_rng(eta, c): 1..K+1 with P(y <= k) = inv_logit(c_k - eta) */
static int l_ordered_logistic_rng(lua_State *L) {
  const char *fname = "ad.ordered_logistic_rng";
  double eta = luaL_checknumber(L, 1);
  size_t K;
  const double *c = values(L, lad_S(L), 2, 2, fname, &K);
  double *p = scratch(L, K + 1), prev = 0, out;
  for (size_t k = 0; k < K; k++) {
    if (k && !(c[k] > c[k - 1])) return luaL_error(L, "bad argument #2 to '%s' (cut points must be increasing)", fname);
    double F = 1 / (1 + exp(eta - c[k]));
    p[k] = F - prev;
    prev = F;
  }
  p[K] = 1 - prev;
  check_rc(L, ad_rng_categorical(&lad_S(L)->rng, K + 1, p, &out), fname, "bad cut points");
  lua_pushinteger(L, (lua_Integer)out);
  return 1;
}

void lad_open_rng(lua_State *L, int st) {
  int64_t key = 0;
  ad_rng_seed(&lad_getstate(L)->rng, &key, 1);
  for (int d = 0; d < AD_RNG_COUNT_; d++) {
    lad_push_coded(L, st, f_rng, d, ad_rng_name(d));
    lua_setfield(L, -2, ad_rng_name(d));
  }
  static const luaL_Reg fs[] = {
    {"rng_seed", l_rng_seed}, {"dirichlet_rng", l_dirichlet_rng},
    {"categorical_rng", l_categorical_rng}, {"categorical_logit_rng", l_categorical_logit_rng},
    {"multinomial_rng", l_multinomial_rng}, {"multinomial_logit_rng", l_multinomial_logit_rng},
    {"multi_normal_rng", l_multi_normal_rng}, {"multi_normal_cholesky_rng", l_multi_normal_cholesky_rng},
    {"multi_student_t_rng", l_multi_student_t_rng},
    {"multi_student_t_cholesky_rng", l_multi_student_t_cholesky_rng},
    {"lkj_corr_cholesky_rng", l_lkj_corr_cholesky_rng}, {"lkj_corr_rng", l_lkj_corr_rng},
    {"wishart_rng", l_wishart_rng}, {"inv_wishart_rng", l_inv_wishart_rng},
    {"ordered_logistic_rng", l_ordered_logistic_rng}, {NULL, NULL}};
  lua_pushvalue(L, st);
  luaL_setfuncs(L, fs, 1);
}
