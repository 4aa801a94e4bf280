/* SPDX-License-Identifier: MIT */
/*
** Windows over memory MPI allocates (README "One-sided"):
**
**   win, a = mpi.Win_allocate(count, dtype [, comm])
**
** The memory comes from MPI_Alloc_mem (MPI's memory for RMA: registered
** with the transport), zeroed, and a is an mp.Array view of it; the window
** is Win_create's on it (the same agreement, checks and freeing). a must
** not outlive the window: when the window is freed (Free, the task's end,
** the abort protocol) a becomes empty (0 elements: an index is out of
** range) and its methods and fields raise "the window is freed". The memory
** itself is given back to MPI (MPI_Free_mem) only when nothing refers to it
** any more (views made of a before the Free keep it), so no use of it can
** touch freed memory.
*/
#include <string.h>

#include "mpi/mpi_win.h"

#define MEM_MT "mp.mpi.WinMemory"

typedef struct { void *p; } winmem;

static int mem_gc(lua_State *L) {
  winmem *m = lua_touserdata(L, 1);
  int done = 0;
  if (m->p && MPI_Finalized(&done) == MPI_SUCCESS && !done) MPI_Free_mem(m->p);
  m->p = NULL;
  return 0;
}

mpb_array *mpb_winalloc_mem(lua_State *L, mpb_state *st, int64_t n, int dtype, const char *fname) {
  size_t bytes = (size_t)n * mpb_dtype_size(dtype);
  winmem *m = lua_newuserdatauv(L, sizeof *m, 0);
  m->p = NULL;
  luaL_setmetatable(L, MEM_MT);
  int rc = MPI_Alloc_mem((MPI_Aint)(bytes ? bytes : 16), MPI_INFO_NULL, &m->p);
  if (rc != MPI_SUCCESS) {
    m->p = NULL;
    mpb_win_fail(L, st, fname, rc, "MPI_Alloc_mem");
  }
  memset(m->p, 0, bytes);
  int64_t dims[1] = {n};
  mpb_array *a = mpb_array_view(L, lua_gettop(L), m->p, dtype, 1, dims);
  lua_remove(L, -2);
  return a;
}

int mpb_winalloc_args(lua_State *L, mpb_state *st, int64_t *n, const char *fname) {
  int ok;
  lua_Integer k = lua_tointegerx(L, 1, &ok);
  if (!ok || k < 0 || k > INT32_MAX)
    luaL_error(L, "bad argument #1 to 'mp.%s' (" MPB_RANKFMT " count 0..2^31-1 expected, got %s)",
               fname, st->rank, st->size, ok ? lua_tostring(L, 1) : luaL_typename(L, 1));
  const char *dn = lua_tostring(L, 2);
  int dtype = dn ? mpb_dtype_from_name(dn) : -1;
  if (dtype < 0)
    luaL_error(L, "bad argument #2 to 'mp.%s' (" MPB_RANKFMT " dtype expected (f64, f32, i64, "
               "i32, u8, c64, c128), got %s)", fname, st->rank, st->size,
               dn ? dn : luaL_typename(L, 2));
  *n = k;
  return dtype;
}

/* mpi.Win_allocate(count, dtype [, comm]) -> win, array */
static int Win_allocate(lua_State *L) {
  const char *fname = "mpi.Win_allocate";
  mpb_mpi *M = lua_touserdata(L, lua_upvalueindex(1));
  int64_t n;
  int dtype = mpb_winalloc_args(L, M->st, &n, fname);
  lua_settop(L, 3);
  mpb_mpi_comm(L, M, 3, fname); /* checked before any memory is taken */
  mpb_array *a = mpb_winalloc_mem(L, M->st, n, dtype, fname);
  lua_replace(L, 1);
  lua_remove(L, 2); /* the array at 1, the communicator at 2 */
  mpb_winspec s = {MPB_WIN_PLAIN, dtype, n, a->data, 1, NULL};
  mpb_win_make(L, M, fname, 2, &s);
  (*(mpb_win **)lua_touserdata(L, -1))->allocated = 1;
  lua_pushvalue(L, 1);
  return 2;
}

/* The freed window's array: __index of its attribute. */
static int freed_index(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "tostring") == 0) {
    lua_pushvalue(L, lua_upvalueindex(2));
    return 1;
  }
  return luaL_error(L, "%s", lua_tostring(L, lua_upvalueindex(1)));
}

static int freed_tostring(lua_State *L) {
  lua_pushliteral(L, "mp.Array(the memory of a freed window)");
  return 1;
}

/* The array on top, if it is one, becomes empty, every use an error saying why. */
static void empty_array(lua_State *L, mpb_state *st, const char *fname) {
  mpb_array *a = mpb_array_test(L, -1);
  if (!a) return;
  a->n = 0, a->ndim = 1, a->dims[0] = 0, a->strides[0] = 1, a->contig = 1;
  lua_newtable(L); /* the attribute: every field or method raises */
  lua_createtable(L, 0, 1);
  lua_pushfstring(L, "mp.%s: " MPB_RANKFMT " the array is the memory of a freed window (Free "
                  "or its task's end frees it: copy what is kept first)", fname, st->rank,
                  st->size);
  lua_pushcfunction(L, freed_tostring);
  lua_pushcclosure(L, freed_index, 2);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  mpb_array_setattr(L, -2);
}

void mpb_winalloc_release(lua_State *L, mpb_win *w) {
  mpb_state *st = mpb_get(L);
  const char *fname = w->kind == MPB_WIN_SHARED ? "mpi.Win_allocate_shared" : "mpi.Win_allocate";
  lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref[1]);
  empty_array(L, st, fname);
  lua_pop(L, 1);
  if (w->kind != MPB_WIN_SHARED) return;
  lua_rawgeti(L, LUA_REGISTRYINDEX, w->xref); /* the views Shared_query gave */
  for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
    empty_array(L, st, fname);
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
}

void mpb_winalloc_open(lua_State *L, const char *mt, lua_CFunction gc, lua_CFunction f,
                       const char *name) {
  luaL_newmetatable(L, mt);
  lua_pushcfunction(L, gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.mpi.state");
  lua_pushcclosure(L, f, 1);
  lua_setfield(L, -2, name);
}

void mpb_winalloc_funcs(lua_State *L) {
  mpb_winalloc_open(L, MEM_MT, mem_gc, Win_allocate, "Win_allocate");
}
