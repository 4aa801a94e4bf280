/* SPDX-License-Identifier: MIT */
/*
** array_lincomb.c: fused linear combinations, BLAS's axpy family (README:
** "Linear combinations"). One pass over the data whatever the number of
** terms, which is what makes a stencil written with shifted views run at the
** speed of the C loop:
**
**   y:lincomb(c1, x1, c2, x2, ...)  y = c1*x1 + c2*x2 + ...   (up to 16 terms)
**   y:axpy(alpha, x)                y = y + alpha*x
**   y:axpby(alpha, x, beta)         y = alpha*x + beta*y
**
** Each returns y. The x's have y's dtype and broadcast to y's shape; a term
** may be y itself (the same view); a term that overlaps y otherwise is read
** as it was before the update. Floats are added left to right in double and
** rounded once; integer dtypes need integer coefficients and wrap; complex
** dtypes take numbers or mp.Complex coefficients.
*/
#include <string.h>

#include "lauxlib.h"
#include "array/array.h"
#include "array/array_int.h"
#include "array/array_iter.h"
#include "array/array_kern.h"

/* y (at 1) = sum of coefficient at cargs[k] times array at xargs[k]. */
static int combine(lua_State *L, int nterm, const int *cargs, const int *xargs, const char *fname) {
  mpb_array *y = mpb_arr_check(L, 1, fname);
  mpb_lc lc;
  mpb_array *x[MPB_LC_MAX];
  memset(&lc, 0, sizeof lc);
  lc.nterm = nterm;
  for (int k = 0; k < nterm; k++) {
    int ca = cargs[k], xa = xargs[k];
    if (MPB_ISCPLX(y->dtype) && mpb_complex_test(L, ca, &lc.cf[k], &lc.cfi[k])) {
      /* a complex coefficient */
    } else if (lua_type(L, ca) != LUA_TNUMBER) {
      mpb_arr_argerror(L, ca, fname, "number expected, got %s", luaL_typename(L, ca));
    } else if (MPB_ISFLOAT(y->dtype) || MPB_ISCPLX(y->dtype)) {
      lc.cf[k] = lua_tonumber(L, ca);
    } else {
      int isint;
      lua_Integer c = lua_tointegerx(L, ca, &isint);
      if (!isint)
        mpb_arr_argerror(L, ca, fname, "integer coefficient expected for an %s array, got %s",
                         mpb_dtype_name(y->dtype), luaL_tolstring(L, ca, NULL));
      lc.ci[k] = (uint64_t)c;
    }
    x[k] = mpb_arr_check(L, xa, fname);
    if (x[k]->dtype != y->dtype)
      mpb_arr_argerror(L, xa, fname, "%s array, the result is %s (convert it with mp.array)",
                       mpb_dtype_name(x[k]->dtype), mpb_dtype_name(y->dtype));
    if (!mpb_broadcasts_to(x[k]->ndim, x[k]->dims, y->ndim, y->dims))
      mpb_arr_shapeerror(L, xa, fname, "shape %s vs %s", x[k]->ndim, x[k]->dims, y->ndim, y->dims);
  }
  for (int k = 0; k < nterm; k++) {
    if (mpb_array_overlap(x[k], y) == MPB_OVERLAP) {
      mpb_array *t = mpb_array_new(L, x[k]->dtype, x[k]->ndim, x[k]->dims);
      mpb_array_pack(x[k], t->data);
      x[k] = t;
    }
  }
  mpb_iter it;
  mpb_iter_init(&it, y->ndim, y->dims);
  mpb_iter_add(&it, y);
  for (int k = 0; k < nterm; k++) mpb_iter_add(&it, x[k]);
  mpb_iter_run(&it, mpb_kern_lincomb(y->dtype), &lc);
  lua_pushvalue(L, 1);
  return 1;
}

static int lincomb(lua_State *L) {
  int nargs = lua_gettop(L) - 1;
  if (nargs < 2 || nargs % 2 != 0)
    mpb_arr_argerror(L, nargs + 2, "lincomb", "coefficient and array pairs expected, got %d value%s",
                     nargs, nargs == 1 ? "" : "s");
  if (nargs / 2 > MPB_LC_MAX)
    mpb_arr_argerror(L, 2 + 2 * MPB_LC_MAX, "lincomb", "at most %d terms", MPB_LC_MAX);
  int cargs[MPB_LC_MAX], xargs[MPB_LC_MAX];
  for (int k = 0; k < nargs / 2; k++) cargs[k] = 2 + 2 * k, xargs[k] = 3 + 2 * k;
  return combine(L, nargs / 2, cargs, xargs, "lincomb");
}

/* y:axpy(alpha, x): y + alpha*x, as lincomb(1, y, alpha, x). */
static int axpy(lua_State *L) {
  lua_settop(L, 3);
  lua_pushinteger(L, 1);
  const int cargs[2] = {4, 2}, xargs[2] = {1, 3};
  return combine(L, 2, cargs, xargs, "axpy");
}

/* y:axpby(alpha, x, beta): alpha*x + beta*y. */
static int axpby(lua_State *L) {
  lua_settop(L, 4);
  const int cargs[2] = {2, 4}, xargs[2] = {3, 1};
  return combine(L, 2, cargs, xargs, "axpby");
}

static const luaL_Reg funcs[] = {
  {"lincomb", lincomb}, {"axpy", axpy}, {"axpby", axpby}, {NULL, NULL}};

void mpb_array_open_lincomb(lua_State *L) { luaL_setfuncs(L, funcs, 0); }
