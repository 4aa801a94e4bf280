/* SPDX-License-Identifier: MIT */
/*
** The arguments of the window calls (README "One-sided"), checked on the
** origin before anything reaches MPI: the window, a target rank, a
** displacement (against the target's memory, exchanged at creation, or the
** array a dynamic window's target attached), an array, an op valid on its
** dtype. An access may use arrays of any dtype: MPI reads and writes the
** target's memory as elements of the array's dtype (as C's target datatype),
** so a displacement is checked in bytes and for the dtype's alignment. And
** the epoch an operation needs.
*/
#include <string.h>

#include "mpi/mpi_win.h"

typedef mpb_win win;

win *mpb_win_check(lua_State *L, mpb_state *st, const char *fname) {
  win **h = luaL_testudata(L, 1, MPB_WIN_MT);
  if (!h)
    luaL_error(L, "bad argument #1 to 'mp.%s' (" MPB_RANKFMT " window expected, got %s)", fname,
               st->rank, st->size, luaL_typename(L, 1));
  if (!*h)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " the window is freed (by Free or its task's end)",
               fname, st->rank, st->size);
  return *h;
}

int mpb_win_target(lua_State *L, mpb_state *st, win *w, int idx, const char *fname) {
  int ok;
  lua_Integer r = lua_tointegerx(L, idx, &ok);
  if (!ok)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " target rank expected, got %s)",
               idx, fname, st->rank, st->size, luaL_typename(L, idx));
  if (r < 0 || r >= w->size)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " target rank %I out of range "
               "0..%d)", idx, fname, st->rank, st->size, (LUAI_UACINT)r, w->size - 1);
  return (int)r;
}

/* The displacement at idx of n elements of dtype at target r, checked
** against r's memory: in its bounds and aligned for dtype (MPI's accumulate
** reads and writes the target's elements as dtype's). */
MPI_Aint mpb_win_disp(lua_State *L, mpb_state *st, win *w, int idx, int r, int dtype, int64_t n,
                      const char *fname) {
  int ok;
  lua_Integer d = lua_tointegerx(L, idx, &ok);
  if (!ok)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " displacement expected, got %s)",
               idx, fname, st->rank, st->size, luaL_typename(L, idx));
  if (w->kind == MPB_WIN_DYNAMIC) return mpb_windyn_disp(L, st, w, idx, r, dtype, n, fname);
  int64_t es = (int64_t)mpb_dtype_size(dtype), bytes = w->len[r] * w->esize;
  if (dtype == w->dtype && (d < 0 || n > w->len[r] || d > w->len[r] - n))
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " elements %I..%I are outside "
               "rank %d's window of %I elements (displacements count from 0))", idx, fname,
               st->rank, st->size, (LUAI_UACINT)d, (LUAI_UACINT)(d + n - 1), r,
               (LUAI_UACINT)w->len[r]);
  if (d < 0 || d > bytes / w->esize || n * es > bytes - d * w->esize)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " %I %s elements at displacement "
               "%I (in %s elements, from 0) reach outside rank %d's window of %I %s elements)",
               idx, fname, st->rank, st->size, (LUAI_UACINT)n, mpb_dtype_name(dtype),
               (LUAI_UACINT)d, mpb_dtype_name(w->dtype), r, (LUAI_UACINT)w->len[r],
               mpb_dtype_name(w->dtype));
  int64_t at = w->off[r] + d * w->esize, al = MPB_DTYPE_COMPLEX(dtype) ? es / 2 : es;
  if (at % al != 0)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " displacement %I of rank %d's "
               "window is not aligned for %s elements (%d bytes))", idx, fname, st->rank,
               st->size, (LUAI_UACINT)d, r, mpb_dtype_name(dtype), (int)al);
  return (MPI_Aint)at; /* bytes from the target's base */
}

int mpb_win_dtype(lua_State *L, mpb_state *st, win *w, int idx, int r, const char *fname) {
  return w->kind == MPB_WIN_DYNAMIC ? mpb_windyn_dtype(L, st, w, idx, r, fname) : w->dtype;
}

mpb_array *mpb_win_array(lua_State *L, mpb_state *st, int idx, const char *fname) {
  mpb_array *a = mpb_array_test(L, idx);
  if (!a)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " contiguous mp.Array expected, "
               "got %s)", idx, fname, st->rank, st->size, luaL_typename(L, idx));
  return a;
}

mpb_array *mpb_win_data(lua_State *L, mpb_state *st, win *w, int idx, const char *fname) {
  (void)w;
  mpb_array *a = mpb_win_array(L, st, idx, fname);
  if (a->n > INT32_MAX)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " more than 2^31 - 1 elements)",
               idx, fname, st->rank, st->size);
  return a;
}

/* An operation on target r needs an access epoch: a fence's, r's lock, or
** a Start whose group has r. */
void mpb_win_epoch(lua_State *L, mpb_state *st, win *w, int r, const char *fname) {
  if (!w->fenced && !w->lock[r] && !w->started[r])
    luaL_error(L, "mp.%s: " MPB_RANKFMT " no access epoch on rank %d: call Fence(), "
               "Lock(%d) or Start with a group of it first", fname, st->rank, st->size, r, r);
  if (!w->lock[r] && !w->started[r]) w->nops++; /* the fence epoch's (the others end otherwise) */
}

void mpb_win_locked(lua_State *L, mpb_state *st, win *w, int r, const char *fname) {
  if (!w->lock[r])
    luaL_error(L, "mp.%s: " MPB_RANKFMT " no lock on rank %d: request-based operations need "
               "a passive-target epoch (Lock(%d) or Lock_all() first)", fname, st->rank,
               st->size, r, r);
}

static const char *const op_names[] = {"sum", "prod", "min", "max", "band", "bor", "land",
                                       "lor", "replace", "no_op", NULL};

MPI_Op mpb_win_op(lua_State *L, mpb_state *st, int dtype, int idx, const char *fname, int no_op) {
  static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_BAND, MPI_BOR, MPI_LAND,
                               MPI_LOR, MPI_REPLACE, MPI_NO_OP};
  const char *s = lua_tostring(L, idx);
  int k = 0;
  while (s && op_names[k] && strcmp(op_names[k], s) != 0) k++;
  if (!s || !op_names[k] || (k == 9 && !no_op))
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " op expected (mpi.SUM, PROD, MIN, "
               "MAX, BAND, BOR, LAND, LOR, REPLACE%s), got %s)", idx, fname, st->rank, st->size,
               no_op ? " or NO_OP" : "", s ? s : luaL_typename(L, idx));
  /* MPI's rules: bitwise and logical ops on integers, MIN and MAX on real numbers */
  int integral = dtype == MPB_I64 || dtype == MPB_I32 || dtype == MPB_U8;
  if ((k >= 4 && k <= 7 && !integral) || ((k == 2 || k == 3) && MPB_DTYPE_COMPLEX(dtype)))
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " op '%s' does not apply to %s)",
               idx, fname, st->rank, st->size, op_names[k], mpb_dtype_name(dtype));
  return ops[k];
}
