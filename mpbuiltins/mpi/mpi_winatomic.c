/* SPDX-License-Identifier: MIT */
/*
** Windows' atomic read-modify-write calls (README "One-sided"):
**
**   old = win:Fetch_and_op(a, rank, disp, op)         (a: one element)
**   old = win:Compare_and_swap(a, cmp, rank, disp)    (integer dtypes)
**   old = win:Get_accumulate(a, rank, disp, op [, out])
**
** Each returns an array holding the target's values before the operation,
** valid once the epoch completes them (Fence, Flush, Unlock, Complete), as
** Get's. Fetch_and_op and Get_accumulate are MPI_Rget_accumulate (a
** request, tested in the one wait by Fence, Flush and Unlock, as Get's;
** Rget_accumulate in mpi_winreq.c gives it to the user); MPI has no
** request-based Compare_and_swap, whose result MPI_Win_flush completes
** (bounded, as mpi_win.c says). They are atomic with Accumulate's (same op
** or NO_OP, element by element), as MPI defines it. The arrays may be of any
** dtype (the target's memory is read and written as theirs); the result is
** of a's.
*/
#include "layout/file_io.h" /* mpb_file_etype */
#include "mpi/mpi_win.h"

#define CHECK MPB_WIN_CHECK

static int integral(int dtype) {
  return dtype == MPB_I64 || dtype == MPB_I32 || dtype == MPB_U8;
}

/* A new 1-D array of n elements of dtype, pushed. */
static mpb_array *result(lua_State *L, int dtype, int64_t n) {
  int64_t dims[1] = {n};
  return mpb_array_new(L, dtype, 1, dims);
}

static void one_element(lua_State *L, mpb_state *st, const mpb_array *a, int idx,
                        const char *fname) {
  if (a->n != 1)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " one element expected, got %I)",
               idx, fname, st->rank, st->size, (LUAI_UACINT)a->n);
}

static void same_dtype(lua_State *L, mpb_state *st, const mpb_array *a, const mpb_array *b,
                       int idx, const char *fname) {
  if (b->dtype != a->dtype)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " %s array expected (argument "
               "#2's dtype), got %s)", idx, fname, st->rank, st->size, mpb_dtype_name(a->dtype),
               mpb_dtype_name(b->dtype));
}

/* win:Fetch_and_op(a, rank, disp, op) */
static int Fetch_and_op(lua_State *L) {
  MPB_WIN_ENTER("mpi.Fetch_and_op");
  mpb_array *a = mpb_win_data(L, st, w, 2, fname);
  one_element(L, st, a, 2, fname);
  int r = mpb_win_target(L, st, w, 3, fname);
  MPI_Aint d = mpb_win_disp(L, st, w, 4, r, a->dtype, 1, fname);
  MPI_Op op = mpb_win_op(L, st, a->dtype, 5, fname, 1);
  mpb_win_epoch(L, st, w, r, fname);
  lua_settop(L, 5);
  mpb_array *out = result(L, a->dtype, 1);
  MPI_Datatype t = mpb_file_etype(a->dtype);
  CHECK(MPI_Rget_accumulate(a->data, 1, t, out->data, 1, t, r, d, 1, t, op, w->w,
                            mpb_win_new_req(L, st, w, r, fname)),
        "MPI_Rget_accumulate");
  mpb_win_pend(L, w, 2);
  mpb_win_pend(L, w, 6);
  return 1;
}

/* win:Compare_and_swap(a, cmp, rank, disp) */
static int Compare_and_swap(lua_State *L) {
  MPB_WIN_ENTER("mpi.Compare_and_swap");
  mpb_array *a = mpb_win_data(L, st, w, 2, fname);
  if (!integral(a->dtype))
    luaL_error(L, "bad argument #2 to 'mp.%s' (" MPB_RANKFMT " %s array: compare-and-swap "
               "needs an integer dtype (i64, i32, u8))", fname, st->rank, st->size,
               mpb_dtype_name(a->dtype));
  one_element(L, st, a, 2, fname);
  mpb_array *cmp = mpb_win_data(L, st, w, 3, fname);
  same_dtype(L, st, a, cmp, 3, fname);
  one_element(L, st, cmp, 3, fname);
  int r = mpb_win_target(L, st, w, 4, fname);
  MPI_Aint d = mpb_win_disp(L, st, w, 5, r, a->dtype, 1, fname);
  mpb_win_epoch(L, st, w, r, fname);
  lua_settop(L, 5);
  mpb_array *out = result(L, a->dtype, 1);
  CHECK(MPI_Compare_and_swap(a->data, cmp->data, out->data, mpb_file_etype(a->dtype), r, d, w->w),
        "MPI_Compare_and_swap");
  mpb_win_pend(L, w, 2);
  mpb_win_pend(L, w, 3);
  mpb_win_pend(L, w, 6);
  return 1;
}

int mpb_win_getacc(lua_State *L, const char *fname, MPI_Request *ureq) {
  mpb_state *st = mpb_get(L);
  MPB_MPI_REGION(L, st, fname);
  mpb_win *w = mpb_win_check(L, st, fname);
  mpb_array *a = mpb_win_data(L, st, w, 2, fname);
  int r = mpb_win_target(L, st, w, 3, fname);
  MPI_Aint d = mpb_win_disp(L, st, w, 4, r, a->dtype, a->n, fname);
  MPI_Op op = mpb_win_op(L, st, a->dtype, 5, fname, 1);
  lua_settop(L, 6);
  mpb_array *out;
  if (lua_isnil(L, 6)) {
    lua_pop(L, 1);
    out = result(L, a->dtype, a->n);
  } else {
    out = mpb_win_data(L, st, w, 6, fname);
    same_dtype(L, st, a, out, 6, fname);
    if (out->n != a->n)
      luaL_error(L, "bad argument #6 to 'mp.%s' (" MPB_RANKFMT " %I elements expected, got %I)",
                 fname, st->rank, st->size, (LUAI_UACINT)a->n, (LUAI_UACINT)out->n);
  }
  if (ureq) mpb_win_locked(L, st, w, r, fname);
  mpb_win_epoch(L, st, w, r, fname);
  int n = (int)a->n;
  MPI_Datatype t = mpb_file_etype(a->dtype);
  CHECK(MPI_Rget_accumulate(a->data, n, t, out->data, n, t, r, d, n, t, op, w->w,
                            ureq ? ureq : mpb_win_new_req(L, st, w, r, fname)),
        "MPI_Rget_accumulate");
  mpb_win_pend(L, w, 2);
  mpb_win_pend(L, w, 6);
  return 1;
}

/* win:Get_accumulate(a, rank, disp, op [, out]) */
static int Get_accumulate(lua_State *L) { return mpb_win_getacc(L, "mpi.Get_accumulate", NULL); }

void mpb_winatomic_methods(lua_State *L) {
  static const luaL_Reg methods[] = {{"Fetch_and_op", Fetch_and_op},
                                     {"Compare_and_swap", Compare_and_swap},
                                     {"Get_accumulate", Get_accumulate}, {NULL, NULL}};
  luaL_setfuncs(L, methods, 0);
}
