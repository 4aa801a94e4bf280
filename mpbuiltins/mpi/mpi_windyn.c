/* SPDX-License-Identifier: MIT */
/*
** Dynamic windows (README "One-sided"):
**
**   win = mpi.Win_create_dynamic([comm])    win:Attach(a)    win:Detach(a)
**   addr = mpi.Get_address(a)
**
** MPI_Win_create_dynamic (after the members' agreement, as Win_create) and
** MPI_Win_attach / MPI_Win_detach of mp.Array memory. As in C, a target
** displacement is an address: what mpi.Get_address gives on the target,
** sent to the origin by the user, plus a byte offset. MPI checks nothing
** about it (an address outside the attached memory writes anywhere), so
** mplua does: the first access of an origin to an array of a target asks
** the target (a LOOKUP message, answered in the target's arrival hook, in
** its waits or while it runs Lua) for the attached array holding the
** address, and keeps the answer (its bounds and dtype); every access is
** checked against it, and an address no array holds is an error. The
** target keeps every array attached to the window alive until the window
** is freed, detached ones included: an origin's kept answer may outlive a
** Detach (MPI calls an access then erroneous), and its data then lands in
** that array, never in freed memory.
*/
#include <stdlib.h>
#include <string.h>

#include "chan/wait.h"
#include "mpi/mpi_win.h"

typedef struct { MPI_Aint base, bytes; int dtype, rank; } region;

typedef struct mpb_windyn {
  region *mine, *known;         /* attached here; looked up at others (rank: its owner) */
  int nmine, capmine, nknown, capknown;
  int answered;                 /* the lookup in flight has its answer */
  region answer;                /* bytes -1: no array holds the address */
} windyn;

void mpb_windyn_free(mpb_win *w) {
  if (!w->dyn) return;
  free(w->dyn->mine);
  free(w->dyn->known);
  free(w->dyn);
  w->dyn = NULL;
}

static int add(region **v, int *n, int *cap, region x) {
  if (*n == *cap) {
    int c = *cap ? 2 * *cap : 8;
    region *p = realloc(*v, sizeof *p * (size_t)c);
    if (!p) return 0;
    *v = p, *cap = c;
  }
  (*v)[(*n)++] = x;
  return 1;
}

/* The region of v (of member rank) holding addr, or NULL. */
static const region *holding(const region *v, int n, int rank, MPI_Aint addr) {
  for (int i = 0; i < n; i++)
    if (v[i].rank == rank && addr >= v[i].base &&
        (addr - v[i].base < v[i].bytes || (v[i].bytes == 0 && addr == v[i].base)))
      return &v[i];
  return NULL;
}

void mpb_windyn_handle(mpb_state *st, mpb_win *w, int from, int op, const char *body,
                       size_t len) {
  windyn *y = w->dyn;
  if (!y) return;
  if (op == MPB_WOP_LOOKUP && len == sizeof(MPI_Aint)) {
    MPI_Aint addr;
    memcpy(&addr, body, sizeof addr);
    region none = {0, -1, 0, w->rank};
    const region *r = holding(y->mine, y->nmine, w->rank, addr);
    mpb_win_post(st, w, from, MPB_WOP_REGION, r ? r : &none, sizeof *r);
  } else if (op == MPB_WOP_REGION && len == sizeof(region)) {
    memcpy(&y->answer, body, sizeof y->answer);
    y->answered = 1;
  }
}

static int answered(mpb_state *st, void *ud) {
  (void)st;
  return ((windyn *)ud)->answered;
}

/* The array attached at r that holds addr: known, or asked (a wait for
** the answer, bounded by r's progress: not described, r counts as running). */
static const region *lookup(lua_State *L, mpb_state *st, mpb_win *w, int r, MPI_Aint addr,
                            const char *fname) {
  windyn *y = w->dyn;
  const region *k = holding(y->known, y->nknown, r, addr);
  if (k) return k;
  y->answered = 0;
  mpb_win_post(st, w, r, MPB_WOP_LOOKUP, &addr, sizeof addr);
  if (!y->answered) mpb_wait(L, st, answered, y, 0);
  if (y->answer.bytes < 0)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " address %I is in no array attached at rank %d "
               "(addresses are mpi.Get_address's on the target, plus a byte offset)", fname,
               st->rank, st->size, (LUAI_UACINT)addr, r);
  y->answer.rank = r;
  if (!add(&y->known, &y->nknown, &y->capknown, y->answer))
    luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory", fname, st->rank, st->size);
  return &y->known[y->nknown - 1];
}

MPI_Aint mpb_windyn_disp(lua_State *L, mpb_state *st, mpb_win *w, int idx, int r, int dtype,
                         int64_t n, const char *fname) {
  MPI_Aint addr = (MPI_Aint)lua_tointeger(L, idx), es = (MPI_Aint)mpb_dtype_size(dtype);
  const region *k = lookup(L, st, w, r, addr, fname);
  MPI_Aint len = (MPI_Aint)n * es, at = addr - k->base;
  if (len > k->bytes - at)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " %I %s elements at address %I "
               "reach past the end of the %s array attached at rank %d (%I bytes from %I))",
               idx, fname, st->rank, st->size, (LUAI_UACINT)n, mpb_dtype_name(dtype),
               (LUAI_UACINT)addr, mpb_dtype_name(k->dtype), r, (LUAI_UACINT)k->bytes,
               (LUAI_UACINT)k->base);
  MPI_Aint al = MPB_DTYPE_COMPLEX(dtype) ? es / 2 : es;
  if (addr % al != 0)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " address %I is not aligned for "
               "%s elements (%d bytes))", idx, fname, st->rank, st->size, (LUAI_UACINT)addr,
               mpb_dtype_name(dtype), (int)al);
  return addr;
}

int mpb_windyn_dtype(lua_State *L, mpb_state *st, mpb_win *w, int idx, int r, const char *fname) {
  int ok;
  lua_Integer addr = lua_tointegerx(L, idx, &ok);
  if (!ok)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " displacement expected, got %s)",
               idx, fname, st->rank, st->size, luaL_typename(L, idx));
  return lookup(L, st, w, r, (MPI_Aint)addr, fname)->dtype;
}

/* mpi.Win_create_dynamic([comm]) -> win */
static int Win_create_dynamic(lua_State *L) {
  mpb_mpi *M = lua_touserdata(L, lua_upvalueindex(1));
  lua_settop(L, 1);
  mpb_winspec s = {MPB_WIN_DYNAMIC, MPB_U8, 0, NULL, 0, NULL};
  mpb_win_make(L, M, "mpi.Win_create_dynamic", 1, &s);
  mpb_win *w = *(mpb_win **)lua_touserdata(L, -1);
  if (!(w->dyn = calloc(1, sizeof *w->dyn)))
    luaL_error(L, "mp.mpi.Win_create_dynamic: " MPB_RANKFMT " out of memory", M->st->rank,
               M->st->size);
  return 1;
}

static MPI_Aint address(lua_State *L, mpb_state *st, const void *p, const char *fname) {
  MPI_Aint a;
  int rc = MPI_Get_address(p, &a);
  if (rc != MPI_SUCCESS) mpb_win_fail(L, st, fname, rc, "MPI_Get_address");
  return a;
}

/* The array at 2 of Attach or Detach of w (dynamic): its memory as a region. */
static mpb_array *region_arg(lua_State *L, mpb_state *st, mpb_win *w, region *x,
                             const char *fname) {
  if (w->kind != MPB_WIN_DYNAMIC)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " not a window of Win_create_dynamic", fname, st->rank,
               st->size);
  mpb_array *a = mpb_win_data(L, st, w, 2, fname);
  x->base = address(L, st, a->data, fname);
  x->bytes = (MPI_Aint)(a->n * (int64_t)mpb_dtype_size(a->dtype));
  x->dtype = a->dtype, x->rank = w->rank;
  return a;
}

/* win:Attach(a): a's memory joins the window (a kept alive until it is freed) */
static int Attach(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_attach");
  region x;
  mpb_array *a = region_arg(L, st, w, &x, fname);
  windyn *y = w->dyn;
  MPI_Aint base = x.base, bytes = x.bytes;
  for (int i = 0; i < y->nmine; i++)
    if (base < y->mine[i].base + y->mine[i].bytes && y->mine[i].base < base + bytes)
      luaL_error(L, "bad argument #2 to 'mp.%s' (" MPB_RANKFMT " the array overlaps one "
                 "attached already (%I bytes at %I))", fname, st->rank, st->size,
                 (LUAI_UACINT)y->mine[i].bytes, (LUAI_UACINT)y->mine[i].base);
  lua_rawgeti(L, LUA_REGISTRYINDEX, w->xref);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  if (!add(&y->mine, &y->nmine, &y->capmine, x))
    luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory", fname, st->rank, st->size);
  int rc = MPI_Win_attach(w->w, a->data, bytes);
  if (rc != MPI_SUCCESS) {
    y->nmine--;
    mpb_win_fail(L, st, fname, rc, "MPI_Win_attach");
  }
  return 0;
}

/* win:Detach(a) */
static int Detach(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_detach");
  region x;
  mpb_array *a = region_arg(L, st, w, &x, fname);
  windyn *y = w->dyn;
  int i = 0;
  while (i < y->nmine && (y->mine[i].base != x.base || y->mine[i].bytes != x.bytes)) i++;
  if (i == y->nmine)
    luaL_error(L, "bad argument #2 to 'mp.%s' (" MPB_RANKFMT " the array is not attached to "
               "the window)", fname, st->rank, st->size);
  MPB_WIN_CHECK(MPI_Win_detach(w->w, a->data), "MPI_Win_detach");
  y->mine[i] = y->mine[--y->nmine];
  return 0;
}

/* mpi.Get_address(a) -> the address of a's first element (MPI_Aint) */
static int Get_address(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_array *a = mpb_array_testv(L, 1);
  if (!a)
    luaL_error(L, "bad argument #1 to 'mp.mpi.Get_address' (" MPB_RANKFMT " mp.Array "
               "expected, got %s)", st->rank, st->size, luaL_typename(L, 1));
  lua_pushinteger(L, (lua_Integer)address(L, st, a->data, "mpi.Get_address"));
  return 1;
}

void mpb_windyn_methods(lua_State *L) {
  static const luaL_Reg methods[] = {{"Attach", Attach}, {"Detach", Detach}, {NULL, NULL}};
  luaL_setfuncs(L, methods, 0);
}

void mpb_windyn_funcs(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.mpi.state");
  lua_pushcclosure(L, Win_create_dynamic, 1);
  lua_setfield(L, -2, "Win_create_dynamic");
  lua_pushcfunction(L, Get_address);
  lua_setfield(L, -2, "Get_address");
}
