/* SPDX-License-Identifier: MIT */
/*
** Windows of shared memory (README "One-sided"):
**
**   win, a = mpi.Win_allocate_shared(count, dtype [, comm])
**   b, size, disp_unit = win:Shared_query(rank)
**
** MPI_Win_allocate_shared on a communicator of one node (every member on
** this rank's host, as mpi.Comm_split_type(comm, COMM_TYPE_SHARED) gives):
** each member's segment is memory every member maps, a is an mp.Array view
** of this rank's, b of another rank's (loads and stores reach it directly,
** no MPI call). MPI_Win_free unmaps MPICH's mapping, so the arrays do not
** view it: each rank maps the same pages a second time (mremap of size 0,
** Linux's way to map a shared mapping again) and its arrays view that
** mapping, unmapped when nothing refers to it any more. Freeing the window
** (Free, the task's end, the abort protocol) empties a and every b, as
** Win_allocate's array; views made of them before keep the pages, so no
** use of them can touch unmapped memory. A communicator of one rank gets
** Win_allocate's memory (MPICH's segment is then its private memory).
*/
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "chan/wake.h" /* mpb_where: the host of a rank */
#include "mpi/mpi_win.h"

#define MAP_MT "mp.mpi.WinSharedMapping"

typedef struct { void *p; size_t len; } mapping;

static int map_gc(lua_State *L) {
  mapping *m = lua_touserdata(L, 1);
  if (m->p) munmap(m->p, m->len);
  m->p = NULL;
  return 0;
}

/* Raise unless every member of c runs on this rank's host. */
static void one_node(lua_State *L, mpb_state *st, const mpb_comm *c, const char *fname) {
  int h0, cpu, numa;
  mpb_where(st, c->ranks[0], &h0, &cpu, &numa);
  for (int i = 1; i < c->size; i++) {
    int h;
    mpb_where(st, c->ranks[i], &h, &cpu, &numa);
    if (h < 0 || h != h0)
      luaL_error(L, "bad argument #3 to 'mp.%s' (" MPB_RANKFMT " ranks %d and %d of the "
                 "communicator are on different nodes: a shared window needs a communicator "
                 "of one node (mpi.Comm_split_type(comm, mpi.COMM_TYPE_SHARED)))", fname,
                 st->rank, st->size, 0, i);
  }
}

/* Map the members' segments of w a second time (pushes the owner of the
** mapping); w->segbase, w->segat say where each one is. */
static void map_again(lua_State *L, mpb_state *st, mpb_win *w, const char *fname) {
  mapping *m = lua_newuserdatauv(L, sizeof *m, 0);
  m->p = NULL;
  luaL_setmetatable(L, MAP_MT);
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  uintptr_t *at = lua_newuserdatauv(L, sizeof *at * (size_t)w->size, 0);
  for (int r = 0; r < w->size; r++) {
    MPI_Aint size;
    int du;
    void *p = NULL;
    MPB_WIN_CHECK(MPI_Win_shared_query(w->w, r, &size, &du, &p), "MPI_Win_shared_query");
    at[r] = (uintptr_t)p;
    if (size > 0 && at[r] < lo) lo = at[r];
    if (size > 0 && at[r] + (uintptr_t)size > hi) hi = at[r] + (uintptr_t)size;
  }
  w->segat = calloc((size_t)(w->size > 0 ? w->size : 1), sizeof *w->segat);
  if (!w->segat) luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory", fname, st->rank, st->size);
  lua_pop(L, 1);
  if (hi == 0) return; /* every segment is empty */
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), first = lo & ~(page - 1);
  size_t len = (size_t)((hi - first + page - 1) & ~(page - 1));
  void *p = mremap((void *)first, 0, len, MREMAP_MAYMOVE);
  if (p == MAP_FAILED)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " cannot map the shared segments (mremap: %s)", fname,
               st->rank, st->size, strerror(errno));
  m->p = p, m->len = len;
  w->segbase = p;
  for (int r = 0; r < w->size; r++) w->segat[r] = at[r] >= first ? (int64_t)(at[r] - first) : 0;
}

/* Push a view of member r's segment (owned by the mapping, or by the
** window's own array at one rank), remembered to be emptied with the window. */
static void push_segment(lua_State *L, mpb_win *w, int r) {
  int64_t dims[1] = {w->len[r]};
  lua_rawgeti(L, LUA_REGISTRYINDEX, w->xref);
  lua_getfield(L, -1, "owner");
  mpb_array_view(L, lua_gettop(L), w->len[r] ? w->segbase + w->segat[r] : NULL, w->dtype, 1,
                 dims);
  lua_remove(L, -2);
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, (lua_Integer)lua_rawlen(L, -3) + 1);
  lua_remove(L, -2);
}

/* mpi.Win_allocate_shared(count, dtype [, comm]) -> win, array */
static int Win_allocate_shared(lua_State *L) {
  const char *fname = "mpi.Win_allocate_shared";
  mpb_mpi *M = lua_touserdata(L, lua_upvalueindex(1));
  mpb_state *st = M->st;
  int64_t n;
  int dtype = mpb_winalloc_args(L, st, &n, fname);
  lua_settop(L, 3);
  mpb_comm *c = mpb_mpi_comm(L, M, 3, fname);
  one_node(L, st, c, fname);
  mpb_win *w;
  if (c->size == 1) { /* Win_allocate's memory, the array its owner */
    mpb_array *a = mpb_winalloc_mem(L, st, n, dtype, fname);
    lua_replace(L, 1);
    lua_remove(L, 2); /* the array at 1, the communicator at 2 */
    mpb_winspec s = {MPB_WIN_PLAIN, dtype, n, a->data, 1, NULL};
    mpb_win_make(L, M, fname, 2, &s);
    w = *(mpb_win **)lua_touserdata(L, -1);
    w->segat = calloc(1, sizeof *w->segat);
    if (!w->segat) luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory", fname, st->rank, st->size);
    w->segbase = a->data;
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->xref);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "owner");
    lua_pop(L, 1);
    w->kind = MPB_WIN_SHARED;
    lua_pushvalue(L, 1);
    return 2;
  }
  void *base = NULL;
  mpb_winspec s = {MPB_WIN_SHARED, dtype, n, NULL, 0, &base};
  mpb_win_make(L, M, fname, 3, &s);
  int widx = lua_gettop(L);
  w = *(mpb_win **)lua_touserdata(L, widx);
  map_again(L, st, w, fname);
  lua_rawgeti(L, LUA_REGISTRYINDEX, w->xref);
  lua_insert(L, -2);
  lua_setfield(L, -2, "owner");
  lua_pop(L, 1);
  lua_pushvalue(L, widx);
  push_segment(L, w, w->rank);
  lua_pushvalue(L, -1);
  luaL_unref(L, LUA_REGISTRYINDEX, w->ref[1]);
  w->ref[1] = luaL_ref(L, LUA_REGISTRYINDEX);
  return 2;
}

/* win:Shared_query(rank) -> array, size (bytes), disp_unit (bytes) */
static int Shared_query(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_shared_query");
  if (w->kind != MPB_WIN_SHARED)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " not a window of Win_allocate_shared", fname, st->rank,
               st->size);
  int r;
  if (lua_isinteger(L, 2) && lua_tointeger(L, 2) == MPB_MPI_PROC_NULL) {
    for (r = 0; r < w->size - 1 && w->len[r] == 0; r++) {} /* MPI: the first with memory */
  } else {
    r = mpb_win_target(L, st, w, 2, fname);
  }
  push_segment(L, w, r);
  lua_pushinteger(L, (lua_Integer)(w->len[r] * w->esize));
  lua_pushinteger(L, w->esize);
  return 3;
}

void mpb_winshared_methods(lua_State *L) {
  lua_pushcfunction(L, Shared_query);
  lua_setfield(L, -2, "Shared_query");
}

void mpb_winshared_funcs(lua_State *L) {
  mpb_winalloc_open(L, MAP_MT, map_gc, Win_allocate_shared, "Win_allocate_shared");
}
