/* SPDX-License-Identifier: MIT */
/*
** Windows' atomic read-modify-write calls (README "One-sided"):
**
**   old = win:Fetch_and_op(a, rank, disp, op)         (a: one element)
**   old = win:Compare_and_swap(a, cmp, rank, disp)    (integer dtypes)
**   old = win:Get_accumulate(a, rank, disp, op [, out])
**
** Each returns an array holding the target's values before the operation,
** valid once the epoch completes them (Fence, Flush, Unlock), as Get's.
** Fetch_and_op and Get_accumulate are MPI_Rget_accumulate (a request,
** tested in the one wait by Fence, Flush and Unlock, as Get's); MPI has no
** request-based Compare_and_swap, whose result MPI_Win_flush completes
** (bounded, as mpi_win.c says). They are atomic with Accumulate's (same op
** or NO_OP, element by element), as MPI defines it.
*/
#include "mpi/mpi_win.h"

#define CHECK MPB_WIN_CHECK

static int integral(int dtype) {
  return dtype == MPB_I64 || dtype == MPB_I32 || dtype == MPB_U8;
}

/* A new 1-D array of n elements of w's dtype, pushed. */
static mpb_array *result(lua_State *L, mpb_win *w, int64_t n) {
  int64_t dims[1] = {n};
  return mpb_array_new(L, w->dtype, 1, dims);
}

static void one_element(lua_State *L, mpb_state *st, const mpb_array *a, int idx,
                        const char *fname) {
  if (a->n != 1)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " one element expected, got %I)",
               idx, fname, st->rank, st->size, (LUAI_UACINT)a->n);
}

/* win:Fetch_and_op(a, rank, disp, op) */
static int Fetch_and_op(lua_State *L) {
  const char *fname = "mpi.Fetch_and_op";
  mpb_state *st = mpb_get(L);
  MPB_MPI_REGION(L, st, fname);
  mpb_win *w = mpb_win_check(L, st, fname);
  mpb_array *a = mpb_win_data(L, st, w, 2, fname);
  one_element(L, st, a, 2, fname);
  int r = mpb_win_target(L, st, w, 3, fname);
  int64_t d = mpb_win_disp(L, st, w, 4, r, 1, fname);
  MPI_Op op = mpb_win_op(L, st, w, 5, fname, 1);
  mpb_win_epoch(L, st, w, r, fname);
  lua_settop(L, 5);
  mpb_array *out = result(L, w, 1);
  CHECK(MPI_Rget_accumulate(a->data, 1, w->etype, out->data, 1, w->etype, r, d, 1, w->etype,
                            op, w->w, mpb_win_new_req(L, st, w, r, fname)),
        "MPI_Rget_accumulate");
  mpb_win_pend(L, w, 2);
  mpb_win_pend(L, w, 6);
  return 1;
}

/* win:Compare_and_swap(a, cmp, rank, disp) */
static int Compare_and_swap(lua_State *L) {
  const char *fname = "mpi.Compare_and_swap";
  mpb_state *st = mpb_get(L);
  MPB_MPI_REGION(L, st, fname);
  mpb_win *w = mpb_win_check(L, st, fname);
  if (!integral(w->dtype))
    luaL_error(L, "mp.%s: " MPB_RANKFMT " the window holds %s: compare-and-swap needs an "
               "integer dtype (i64, i32, u8)", fname, st->rank, st->size,
               mpb_dtype_name(w->dtype));
  mpb_array *a = mpb_win_data(L, st, w, 2, fname);
  one_element(L, st, a, 2, fname);
  mpb_array *cmp = mpb_win_data(L, st, w, 3, fname);
  one_element(L, st, cmp, 3, fname);
  int r = mpb_win_target(L, st, w, 4, fname);
  int64_t d = mpb_win_disp(L, st, w, 5, r, 1, fname);
  mpb_win_epoch(L, st, w, r, fname);
  lua_settop(L, 5);
  mpb_array *out = result(L, w, 1);
  CHECK(MPI_Compare_and_swap(a->data, cmp->data, out->data, w->etype, r, d, w->w),
        "MPI_Compare_and_swap");
  mpb_win_pend(L, w, 2);
  mpb_win_pend(L, w, 3);
  mpb_win_pend(L, w, 6);
  return 1;
}

/* win:Get_accumulate(a, rank, disp, op [, out]) */
static int Get_accumulate(lua_State *L) {
  const char *fname = "mpi.Get_accumulate";
  mpb_state *st = mpb_get(L);
  MPB_MPI_REGION(L, st, fname);
  mpb_win *w = mpb_win_check(L, st, fname);
  mpb_array *a = mpb_win_data(L, st, w, 2, fname);
  int r = mpb_win_target(L, st, w, 3, fname);
  int64_t d = mpb_win_disp(L, st, w, 4, r, a->n, fname);
  MPI_Op op = mpb_win_op(L, st, w, 5, fname, 1);
  mpb_win_epoch(L, st, w, r, fname);
  lua_settop(L, 6);
  mpb_array *out;
  if (lua_isnil(L, 6)) {
    lua_pop(L, 1);
    out = result(L, w, a->n);
  } else {
    out = mpb_win_data(L, st, w, 6, fname);
    if (out->n != a->n)
      luaL_error(L, "bad argument #6 to 'mp.%s' (" MPB_RANKFMT " %I elements expected, got %I)",
                 fname, st->rank, st->size, (LUAI_UACINT)a->n, (LUAI_UACINT)out->n);
  }
  int n = (int)a->n;
  CHECK(MPI_Rget_accumulate(a->data, n, w->etype, out->data, n, w->etype, r, d, n, w->etype,
                            op, w->w, mpb_win_new_req(L, st, w, r, fname)),
        "MPI_Rget_accumulate");
  mpb_win_pend(L, w, 2);
  mpb_win_pend(L, w, 6);
  return 1;
}

void mpb_winatomic_methods(lua_State *L) {
  static const luaL_Reg methods[] = {{"Fetch_and_op", Fetch_and_op},
                                     {"Compare_and_swap", Compare_and_swap},
                                     {"Get_accumulate", Get_accumulate}, {NULL, NULL}};
  luaL_setfuncs(L, methods, 0);
}
