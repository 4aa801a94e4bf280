/* SPDX-License-Identifier: MIT */
/*
** ad's matrix functions over ad/ad_mat.h: matvec, matmul, cholesky_decompose,
** mdivide_left_tri_low (trisolve), log_determinant,
** multi_normal_cholesky_lpdf, add_diag, and ad.matrix to shape a vector.
**
** A matrix argument is a 2-d mp.Array (borrowed; f64 without a copy), a
** matrix var or constant (an ad.Vec / ad.Const with a shape: what these
** functions, ad.matrix, and elementwise math on a matrix return), or a
** table of rows of numbers and/or scalar vars (copied). Storage is
** column-major, as mp.Array's: M[i + (j-1) * rows] is row i, column j.
*/
#include <string.h>
#include "adlib/lad_internal.h"
#include "array/array.h"

/* The matrix at idx (or, with vec_ok, a vector: *rows = n, *cols = 0). */
static ad_arg tomatrix(lua_State *L, lad_state *S, int idx, int arg, const char *fname,
                       int vec_ok, size_t *rows, size_t *cols, int *owner) {
  idx = lua_absindex(L, idx);
  *owner = 0;
  mpb_array *a = mpb_array_test(L, idx);
  if (lad_matshape(L, idx, rows, cols) && !(a && a->dtype != MPB_F64))
    return lad_toarg(L, S, idx, arg, fname, owner);
  if (a && a->ndim == 2) { /* another dtype: a converted copy */
    size_t n;
    *rows = (size_t)a->dims[0], *cols = (size_t)a->dims[1];
    double *b = lad_tonumbers(L, idx, arg, fname, &n);
    *owner = lua_gettop(L);
    return ad_arg_const(b, n);
  }
  if (lua_type(L, idx) == LUA_TTABLE && lua_geti(L, idx, 1) == LUA_TTABLE) {
    size_t m = (size_t)luaL_len(L, idx), n = (size_t)luaL_len(L, -1);
    lua_pop(L, 1);
    size_t cnt = m * n > 0 ? m * n : 1;
    double *val = lua_newuserdatauv(L, cnt * (sizeof(double) + sizeof(ad_idx)), 0);
    ad_idx *var = (ad_idx *)(val + m * n);
    int anyvar = 0, buf = lua_gettop(L);
    for (size_t i = 0; i < m; i++) {
      if (lua_geti(L, idx, (lua_Integer)i + 1) != LUA_TTABLE || (size_t)luaL_len(L, -1) != n)
        luaL_error(L, "bad argument #%d to '%s' (row %d is not a table of length %d)", arg,
                   fname, (int)i + 1, (int)n);
      for (size_t j = 0; j < n; j++) {
        int t = lua_geti(L, -1, (lua_Integer)j + 1);
        size_t k = i + j * m;
        var[k] = AD_NOVAR;
        if (t == LUA_TNUMBER) val[k] = lua_tonumber(L, -1);
        else if (t == LUA_TLIGHTUSERDATA) lad_checkvar(L, S, -1, arg, &var[k]), anyvar = 1;
        else
          luaL_error(L, "bad argument #%d to '%s' (element [%d][%d] is a %s)", arg, fname,
                     (int)i + 1, (int)j + 1, luaL_typename(L, -1));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
    *rows = m, *cols = n;
    if (!anyvar) {
      *owner = buf;
      return ad_arg_const(val, m * n);
    }
    ad_idx first;
    int rc = ad_pack(&S->tape, m * n, var, val, &first);
    if (rc) lad_error(L, rc, arg, fname);
    return ad_arg_var(first, m * n);
  }
  if (lua_type(L, idx) == LUA_TTABLE) lua_pop(L, 1);
  if (!vec_ok)
    luaL_error(L, "bad argument #%d to '%s' (matrix expected: a 2-d mp.array, a table of rows or a matrix var, got %s)",
               arg, fname, luaL_typename(L, idx));
  ad_arg v = lad_toarg(L, S, idx, arg, fname, owner);
  *rows = v.n, *cols = 0;
  return v;
}

/* A square matrix argument (argument 1): n x n. */
static ad_arg square(lua_State *L, lad_state *S, const char *fname, size_t *n, int *owner) {
  size_t m;
  ad_arg A = tomatrix(L, S, 1, 1, fname, 0, &m, n, owner);
  if (m != *n)
    luaL_error(L, "bad argument #1 to '%s' (square matrix expected, got %dx%d)", fname, (int)m,
               (int)*n);
  return A;
}

/* The result: the ad.Const at cidx (already holding the values) when y is
** AD_NOVAR, else a new ad.Vec; a matrix shape unless cols is 0. */
static int push_out(lua_State *L, lad_state *S, int cidx, ad_idx y, size_t rows, size_t cols) {
  if (y == AD_NOVAR) lua_pushvalue(L, cidx);
  else lad_newvec(L, S, y, cols ? rows * cols : rows);
  if (cols) lad_setshape(L, -1, rows, cols);
  return 1;
}

static void anchor2(lua_State *L, lad_state *S, ad_idx y, int o1, int o2) {
  if (y == AD_NOVAR) return;
  lad_anchor(L, S, o1);
  lad_anchor(L, S, o2);
}

static int check(lua_State *L, int rc, const char *fname, size_t r1, size_t c1, size_t r2,
                 size_t c2) {
  if (rc == AD_ESIZE)
    return luaL_error(L, "%s: sizes do not match (%dx%d and %dx%d)", fname, (int)r1, (int)c1,
                      (int)r2, (int)c2);
  if (rc) return lad_error(L, rc, 0, fname);
  return 0;
}

/* ad.matvec(A, x): A x, a vector. */
static int l_matvec(lua_State *L) {
  lad_state *S = lad_S(L);
  size_t m, n, xr, xc;
  int oa, ox;
  luaL_checkany(L, 2);
  ad_arg A = tomatrix(L, S, 1, 1, "ad.matvec", 0, &m, &n, &oa);
  ad_arg x = tomatrix(L, S, 2, 2, "ad.matvec", 1, &xr, &xc, &ox);
  if (x.n != n || xc > 1)
    return luaL_error(L, "bad argument #2 to 'ad.matvec' (length %d does not match %d)",
                      (int)x.n, (int)n);
  int c = lua_gettop(L) + 1;
  double *cval = lad_newconst(L, m);
  ad_idx y;
  check(L, ad_matvec2(&S->tape, m, n, A, x, cval, &y), "ad.matvec", m, n, xr, xc);
  anchor2(L, S, y, oa, ox); /* matvec2 keeps A and x for the Hessian passes */
  return push_out(L, S, c, y, m, 0);
}

/* ad.matmul(A, B): A B, a matrix (a vector when B is one). */
static int l_matmul(lua_State *L) {
  lad_state *S = lad_S(L);
  size_t m, k, k2, n;
  int oa, ob;
  luaL_checkany(L, 2);
  ad_arg A = tomatrix(L, S, 1, 1, "ad.matmul", 0, &m, &k, &oa);
  ad_arg B = tomatrix(L, S, 2, 2, "ad.matmul", 1, &k2, &n, &ob);
  size_t nb = n ? n : 1; /* n = 0: B is a vector, and so is the result */
  if (k2 != k) check(L, AD_ESIZE, "ad.matmul", m, k, k2, nb);
  int c = lua_gettop(L) + 1;
  double *cval = lad_newconst(L, m * nb);
  ad_idx y;
  check(L, ad_matmul(&S->tape, m, k, nb, A, B, cval, &y), "ad.matmul", m, k, k2, nb);
  anchor2(L, S, y, oa, ob);
  return push_out(L, S, c, y, m, n);
}

/* ad.cholesky_decompose(A): the lower factor L, L L' = A. */
static int l_cholesky(lua_State *L) {
  lad_state *S = lad_S(L);
  size_t n;
  int oa;
  lua_settop(L, 1);
  ad_arg A = square(L, S, "ad.cholesky_decompose", &n, &oa);
  int c = lua_gettop(L) + 1;
  double *cval = lad_newconst(L, n * n);
  ad_idx y;
  check(L, ad_cholesky(&S->tape, n, A, cval, &y), "ad.cholesky_decompose", n, n, n, n);
  return push_out(L, S, c, y, n, n);
}

/* ad.mdivide_left_tri_low(L, B [, "T"]): L \ B (L' \ B with "T"); L lower. */
static int l_trisolve(lua_State *L) {
  lad_state *S = lad_S(L);
  size_t n, n2, br, bc;
  int ol, ob;
  const char *fname = "ad.mdivide_left_tri_low";
  luaL_checkany(L, 2);
  const char *how = luaL_optstring(L, 3, "N");
  luaL_argcheck(L, !strcmp(how, "N") || !strcmp(how, "T"), 3, "\"N\" or \"T\" expected");
  int trans = how[0] == 'T';
  lua_settop(L, 2);
  ad_arg Lf = tomatrix(L, S, 1, 1, fname, 0, &n, &n2, &ol);
  ad_arg B = tomatrix(L, S, 2, 2, fname, 1, &br, &bc, &ob);
  size_t k = bc ? bc : 1; /* bc = 0: B is a vector, and so is the result */
  if (n != n2 || br != n) check(L, AD_ESIZE, fname, n, n2, br, k);
  int c = lua_gettop(L) + 1;
  double *cval = lad_newconst(L, n * k);
  ad_idx y;
  check(L, ad_trisolve(&S->tape, n, k, Lf, B, trans, cval, &y), fname, n, n2, br, k);
  anchor2(L, S, y, ol, ob);
  return push_out(L, S, c, y, n, bc);
}

/* ad.log_determinant(A): log |det A|. */
static int l_logdet(lua_State *L) {
  lad_state *S = lad_S(L);
  size_t n;
  int oa;
  lua_settop(L, 1);
  ad_arg A = square(L, S, "ad.log_determinant", &n, &oa);
  double v;
  ad_idx y;
  check(L, ad_log_determinant(&S->tape, n, A, &v, &y), "ad.log_determinant", n, n, n, n);
  lad_push_result(L, S, v, y);
  return 1;
}

/* ad.multi_normal_cholesky_lpdf(y, mu, L): y a vector or an n x N matrix
** (N observations, as columns), mu a scalar, a vector or n x N. */
static int l_mvn_cholesky(lua_State *L) {
  lad_state *S = lad_S(L);
  const char *fname = "ad.multi_normal_cholesky_lpdf";
  size_t yr, yc, mr, mc, n, n2;
  int oy, om, ol;
  luaL_checkany(L, 3);
  lua_settop(L, 3);
  ad_arg y = tomatrix(L, S, 1, 1, fname, 1, &yr, &yc, &oy);
  ad_arg mu = tomatrix(L, S, 2, 2, fname, 1, &mr, &mc, &om);
  ad_arg Lf = tomatrix(L, S, 3, 3, fname, 0, &n, &n2, &ol);
  yc = yc ? yc : 1, mc = mc ? mc : 1;
  if (n != n2 || yr != n || (mu.n != 1 && mu.n != n && mu.n != y.n))
    return luaL_error(L, "%s: sizes do not match (y %dx%d, mu %dx%d, L %dx%d)", fname, (int)yr,
                      (int)yc, (int)mr, (int)mc, (int)n, (int)n2);
  double v;
  ad_idx out;
  check(L, ad_mvn_cholesky(&S->tape, n, y, mu, Lf, &v, &out), fname, yr, yc, n, n2);
  anchor2(L, S, out, oy, om); /* the Hessian passes read y, mu and L again */
  anchor2(L, S, out, ol, 0);
  lad_push_result(L, S, v, out);
  return 1;
}

/* ad.add_diag(A, d): A + diag(d), d a scalar or a vector. */
static int l_add_diag(lua_State *L) {
  lad_state *S = lad_S(L);
  size_t n;
  int oa, od;
  luaL_checkany(L, 2);
  lua_settop(L, 2);
  ad_arg A = square(L, S, "ad.add_diag", &n, &oa);
  ad_arg d = lad_toarg(L, S, 2, 2, "ad.add_diag", &od);
  if (d.n != 1 && d.n != n) check(L, AD_ESIZE, "ad.add_diag", n, n, d.n, 1);
  int c = lua_gettop(L) + 1;
  double *cval = lad_newconst(L, n * n);
  ad_idx y;
  check(L, ad_add_diag(&S->tape, n, A, d, cval, &y), "ad.add_diag", n, n, d.n, 1);
  return push_out(L, S, c, y, n, n);
}

/* ad.matrix(rows_table) or ad.matrix(x, m, n): a matrix var or constant
** (vectors and ad.Consts are reshaped without a copy). */
static int l_matrix(lua_State *L) {
  lad_state *S = lad_S(L);
  size_t m, n;
  int o;
  if (lua_isnoneornil(L, 2)) {
    ad_arg A = tomatrix(L, S, 1, 1, "ad.matrix", 0, &m, &n, &o);
    if (ad_arg_isvar(&A)) lad_newvec(L, S, A.var, A.n);
    else lad_pushconst(L, A.c, A.n);
    lad_setshape(L, -1, m, n);
    return 1;
  }
  lua_Integer r = luaL_checkinteger(L, 2), c = luaL_checkinteger(L, 3);
  luaL_argcheck(L, r >= 0, 2, "negative size");
  luaL_argcheck(L, c >= 0, 3, "negative size");
  lua_settop(L, 3);
  ad_arg x = lad_toarg(L, S, 1, 1, "ad.matrix", &o);
  if (x.n != (size_t)(r * c))
    return luaL_error(L, "bad argument #1 to 'ad.matrix' (%d elements, %dx%d needs %d)",
                      (int)x.n, (int)r, (int)c, (int)(r * c));
  if (ad_arg_isvar(&x)) {
    lad_newvec(L, S, x.var, x.n);
  } else if (lad_testconst(L, 1)) {
    lad_constview(L, 1, 0, x.n); /* a view sharing the values */
  } else {
    lad_pushconst(L, x.n == 1 && !x.c ? &x.cval : x.c, x.n);
  }
  lad_setshape(L, -1, (size_t)r, (size_t)c);
  return 1;
}

/* ad.eigenvalues_sym(A), ad.eigenvectors_sym(A): ascending eigenvalues (a
** vector) and the eigenvectors (a matrix, by columns) of a symmetric A.
** First order, of the symmetric part (A + A')/2: d lambda_k / dA_ij =
** v_ik v_jk; dv_k = sum_(l != k) v_l (v_l' dS v_k) / (lambda_k - lambda_l). Each output is a precomputed node
** over A's elements (no second order). */
static int eigen(lua_State *L, int vectors) {
  lad_state *S = lad_S(L);
  const char *fname = vectors ? "ad.eigenvectors_sym" : "ad.eigenvalues_sym";
  size_t n;
  int oa;
  lua_settop(L, 1);
  ad_arg A = square(L, S, fname, &n, &oa);
  size_t nn = n * n;
  double *buf = lua_newuserdatauv(L, (nn * 2 + n + nn + 1) * sizeof(double) + nn * sizeof(ad_idx), 0);
  double *vals = buf, *lam = vals + nn, *V = lam + n, *part = V + nn;
  ad_idx *in = (ad_idx *)(part + nn);
  const double *a = ad_arg_isvar(&A) ? S->tape.val + A.var : (A.c ? A.c : &A.cval);
  memcpy(vals, a, nn * sizeof(double));
  check(L, ad_eigen_sym_values(vals, n, lam, V), fname, n, n, n, n);
  size_t nout = vectors ? nn : n;
  if (!ad_arg_isvar(&A)) {
    lad_pushconst(L, vectors ? V : lam, nout);
    if (vectors) lad_setshape(L, -1, n, n);
    return 1;
  }
  for (size_t i = 0; i < nn; i++) in[i] = A.var + (ad_idx)i;
  ad_idx first = AD_NOVAR;
  for (size_t o = 0; o < nout; o++) {
    size_t k = vectors ? o / n : o, r = o % n; /* output: lambda_k, or V(r, k) */
    for (size_t j = 0; j < n; j++)
      for (size_t i = 0; i < n; i++) {
        double d;
        if (!vectors) {
          d = V[i + k * n] * V[j + k * n];
        } else {
          d = 0;
          for (size_t l = 0; l < n; l++)
            if (l != k && lam[k] != lam[l]) /* of the symmetric part (A + A') / 2 */
              d += V[r + l * n] * 0.5 * (V[i + l * n] * V[j + k * n] + V[j + l * n] * V[i + k * n]) /
                   (lam[k] - lam[l]);
        }
        part[i + j * n] = d;
      }
    ad_idx y;
    int rc = ad_precomputed(&S->tape, vectors ? V[r + k * n] : lam[k], nn, in, part, &y);
    if (rc) return lad_error(L, rc, 0, fname);
    if (o == 0) first = y; /* each node adds one var: the outputs are contiguous */
  }
  lad_newvec(L, S, first, nout);
  if (vectors) lad_setshape(L, -1, n, n);
  return 1;
}
static int l_eigenvalues_sym(lua_State *L) { return eigen(L, 0); }
static int l_eigenvectors_sym(lua_State *L) { return eigen(L, 1); }

void lad_open_mat(lua_State *L, int st) {
  static const luaL_Reg fs[] = {
    {"matvec", l_matvec}, {"matmul", l_matmul}, {"cholesky_decompose", l_cholesky},
    {"mdivide_left_tri_low", l_trisolve}, {"log_determinant", l_logdet},
    {"multi_normal_cholesky_lpdf", l_mvn_cholesky}, {"add_diag", l_add_diag},
    {"matrix", l_matrix}, {"eigenvalues_sym", l_eigenvalues_sym},
    {"eigenvectors_sym", l_eigenvectors_sym}, {NULL, NULL}};
  lua_pushvalue(L, st);
  luaL_setfuncs(L, fs, 1);
}
