/* SPDX-License-Identifier: MIT */
/*
** Derived datatypes for file views (mp.mpi.Datatype): Type_contiguous,
** Type_vector, Type_indexed, Type_create_subarray, Type_create_resized
** (the others are in mpi_typecons.c),
** built from an element type (a dtype name: "f64", ...) or another
** datatype; each is committed when made (Type_commit is accepted and does
** nothing more). Counts, block lengths, strides and displacements count
** elements of the old type, starts are 0-based, as C's; Type_create_resized
** takes bytes, as C's.
**
** A datatype belongs to the task that made it: the task's end (and the
** abort protocol) frees the ones still alive, on every rank; one collected
** earlier is freed by its __gc. Freeing is local in MPI: nothing waits.
*/
#include <string.h>

#include "chan/class.h"
#include "mpi/mpi_file.h"
#include "tasks/tasks.h"

#define TYPES_KEY "mp.mpi.types" /* registry: the live datatypes of the task (weak) */

typedef mpb_mtype mtype;

static void free_type(mtype *t) {
  int fin = 1;
  if (t->t != MPI_DATATYPE_NULL && MPI_Finalized(&fin) == MPI_SUCCESS && !fin) MPI_Type_free(&t->t);
  t->t = MPI_DATATYPE_NULL;
}

mtype *mpb_mpi_type_test(lua_State *L, int idx, int arg, const char *fname) {
  mtype *t = luaL_testudata(L, idx, MPB_TYPE_MT);
  if (t && (t->t == MPI_DATATYPE_NULL || t->task != mpb_get(L)->task))
    mpb_mfile_argerror(L, arg, fname, "the datatype is %s", t->task == mpb_get(L)->task ?
                       "freed" : "freed (a datatype ends with the task that made it)");
  return t;
}

/* The old type at idx: a dtype name or a datatype; *dtype its elements'. */
MPI_Datatype mpb_mtype_old(lua_State *L, int idx, int arg, const char *fn, int *dtype) {
  mtype *t = mpb_mpi_type_test(L, idx, arg, fn);
  if (t) return *dtype = t->dtype, t->t;
  const char *name = lua_tostring(L, idx);
  int d = lua_type(L, idx) == LUA_TSTRING ? mpb_dtype_from_name(name) : -1;
  if (d < 0)
    mpb_mfile_argerror(L, arg, fn, "old type expected (a dtype name 'f64', ... or an "
                       "mp.mpi.Datatype), got %s",
                       name ? lua_pushfstring(L, "'%s'", name) : luaL_typename(L, idx));
  *dtype = d;
  return mpb_file_etype(d);
}

/* An int at idx within [lo, INT32_MAX]; what names it. */
int mpb_mtype_int(lua_State *L, int idx, int arg, const char *fn, const char *what, int lo) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok) mpb_mfile_argerror(L, arg, fn, "%s expected", what);
  if (v < lo || v > INT32_MAX)
    mpb_mfile_argerror(L, arg, fn, "%s", lua_pushfstring(L, "%s %I is out of range (%d..2^31-1)",
                       what, (LUAI_UACINT)v, lo));
  return (int)v;
}

/* A list of n ints (n: its length, when *n < 0) at idx. */
void mpb_mtype_ints(lua_State *L, int idx, int arg, const char *fn, const char *what, int lo,
                     int *out, int *n, int max) {
  if (!lua_istable(L, idx))
    mpb_mfile_argerror(L, arg, fn, "table of %s expected", what);
  int len = (int)lua_rawlen(L, idx);
  if (*n >= 0 && len != *n)
    mpb_mfile_argerror(L, arg, fn, "%s", lua_pushfstring(L, "%d %s for %d dimensions or blocks",
                       len, what, *n));
  if (len > max)
    mpb_mfile_argerror(L, arg, fn, "%s", lua_pushfstring(L, "more than %d %s", max, what));
  for (int i = 0; i < len; i++) {
    lua_rawgeti(L, idx, i + 1);
    out[i] = mpb_mtype_int(L, -1, arg, fn, what, lo);
    lua_pop(L, 1);
  }
  *n = len;
}

/* Push a datatype of dtype's elements, still empty: the call fills t. */
mtype *mpb_mtype_new(lua_State *L, int dtype) {
  mpb_state *st = mpb_get(L);
  mtype *t = lua_newuserdatauv(L, sizeof *t, 0);
  t->t = MPI_DATATYPE_NULL;
  t->dtype = dtype;
  t->task = st->task;
  luaL_setmetatable(L, MPB_TYPE_MT);
  return t;
}

/* Commit what the call made (rc its code) and list it in the task's. */
int mpb_mtype_made(lua_State *L, mtype *t, int rc, const char *fn) {
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&t->t);
  if (rc != MPI_SUCCESS) {
    if (t->t != MPI_DATATYPE_NULL) free_type(t);
    mpb_state *st = mpb_get(L);
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) strcpy(s, "MPI error");
    luaL_error(L, "mp.%s: " MPB_RANKFMT " %s", fn, st->rank, st->size, s);
  }
  if (lua_getfield(L, LUA_REGISTRYINDEX, TYPES_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_newtable(L);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, TYPES_KEY);
  }
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
  return 1;
}

#define BEGIN(name)                    \
  const char *fn = "mpi." name;        \
  mpb_check_task(L, mpb_get(L), fn);   \
  int dtype

/* mpi.Type_contiguous(count, oldtype) */
static int Type_contiguous(lua_State *L) {
  BEGIN("Type_contiguous");
  int count = mpb_mtype_int(L, 1, 1, fn, "count", 0);
  MPI_Datatype old = mpb_mtype_old(L, 2, 2, fn, &dtype);
  mtype *t = mpb_mtype_new(L, dtype);
  return mpb_mtype_made(L, t, MPI_Type_contiguous(count, old, &t->t), fn);
}

/* mpi.Type_vector(count, blocklength, stride, oldtype) */
static int Type_vector(lua_State *L) {
  BEGIN("Type_vector");
  int count = mpb_mtype_int(L, 1, 1, fn, "count", 0), blen = mpb_mtype_int(L, 2, 2, fn, "blocklength", 0);
  int stride = mpb_mtype_int(L, 3, 3, fn, "stride", INT32_MIN);
  MPI_Datatype old = mpb_mtype_old(L, 4, 4, fn, &dtype);
  mtype *t = mpb_mtype_new(L, dtype);
  return mpb_mtype_made(L, t, MPI_Type_vector(count, blen, stride, old, &t->t), fn);
}

/* mpi.Type_indexed(blocklengths, displacements, oldtype) */
static int Type_indexed(lua_State *L) {
  BEGIN("Type_indexed");
  luaL_checktype(L, 1, LUA_TTABLE);
  int n = -1, m;
  int *blens = lua_newuserdatauv(L, sizeof(int) * (lua_rawlen(L, 1) + 1), 0);
  mpb_mtype_ints(L, 1, 1, fn, "blocklengths", 0, blens, &n, INT32_MAX);
  m = n;
  int *disps = lua_newuserdatauv(L, sizeof(int) * ((size_t)n + 1), 0);
  mpb_mtype_ints(L, 2, 2, fn, "displacements", 0, disps, &m, n);
  MPI_Datatype old = mpb_mtype_old(L, 3, 3, fn, &dtype);
  mtype *t = mpb_mtype_new(L, dtype);
  return mpb_mtype_made(L, t, MPI_Type_indexed(n, blens, disps, old, &t->t), fn);
}

/* mpi.Type_create_subarray(sizes, subsizes, starts, order, oldtype) */
static int Type_create_subarray(lua_State *L) {
  BEGIN("Type_create_subarray");
  int sizes[MPB_MTYPE_MAXDIMS], sub[MPB_MTYPE_MAXDIMS], starts[MPB_MTYPE_MAXDIMS], n = -1;
  mpb_mtype_ints(L, 1, 1, fn, "sizes", 1, sizes, &n, MPB_MTYPE_MAXDIMS);
  if (n == 0) mpb_mfile_argerror(L, 1, fn, "%s", "no dimensions");
  mpb_mtype_ints(L, 2, 2, fn, "subsizes", 1, sub, &n, MPB_MTYPE_MAXDIMS);
  mpb_mtype_ints(L, 3, 3, fn, "starts", 0, starts, &n, MPB_MTYPE_MAXDIMS);
  for (int k = 0; k < n; k++)
    if (sub[k] > sizes[k] || starts[k] > sizes[k] - sub[k])
      mpb_mfile_argerror(L, 2, fn, "%s", lua_pushfstring(L, "dimension %d: subsize %d from start "
                         "%d is beyond size %d", k + 1, sub[k], starts[k], sizes[k]));
  int order = mpb_mtype_int(L, 4, 4, fn, "order", INT32_MIN);
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    mpb_mfile_argerror(L, 4, fn, "%s", "order is not mpi.ORDER_C or mpi.ORDER_FORTRAN");
  MPI_Datatype old = mpb_mtype_old(L, 5, 5, fn, &dtype);
  mtype *t = mpb_mtype_new(L, dtype);
  return mpb_mtype_made(L, t, MPI_Type_create_subarray(n, sizes, sub, starts, order, old, &t->t), fn);
}

/* mpi.Type_create_resized(oldtype, lb, extent): bytes */
static int Type_create_resized(lua_State *L) {
  BEGIN("Type_create_resized");
  MPI_Datatype old = mpb_mtype_old(L, 1, 1, fn, &dtype);
  lua_Integer lb = luaL_checkinteger(L, 2), extent = luaL_checkinteger(L, 3);
  if (extent < 0) mpb_mfile_argerror(L, 3, fn, "extent %s is negative", lua_tostring(L, 3));
  mtype *t = mpb_mtype_new(L, dtype);
  return mpb_mtype_made(L, t, MPI_Type_create_resized(old, (MPI_Aint)lb, (MPI_Aint)extent, &t->t), fn);
}

/* ------------------------------------------------------------ methods */
static mtype *check_live(lua_State *L, const char *fn) {
  mpb_check_task(L, mpb_get(L), fn);
  mtype *t = mpb_mpi_type_test(L, 1, 1, fn);
  if (!t) mpb_mfile_argerror(L, 1, fn, "mp.mpi.Datatype expected, got %s", luaL_typename(L, 1));
  return t;
}

static int Type_commit(lua_State *L) {
  check_live(L, "mpi.Type_commit");
  lua_settop(L, 1);
  return 1;
}

static int Type_free(lua_State *L) {
  free_type(check_live(L, "mpi.Type_free"));
  return 0;
}

static int Type_size(lua_State *L) {
  MPI_Count size = 0;
  MPI_Type_size_c(check_live(L, "mpi.Type_size")->t, &size);
  lua_pushinteger(L, (lua_Integer)size);
  return 1;
}

static int Type_get_extent(lua_State *L) {
  MPI_Count lb = 0, extent = 0;
  MPI_Type_get_extent_c(check_live(L, "mpi.Type_get_extent")->t, &lb, &extent);
  lua_pushinteger(L, (lua_Integer)lb);
  lua_pushinteger(L, (lua_Integer)extent);
  return 2;
}

static int t_gc(lua_State *L) {
  free_type(luaL_checkudata(L, 1, MPB_TYPE_MT));
  return 0;
}

static int t_tostring(lua_State *L) {
  mtype *t = luaL_checkudata(L, 1, MPB_TYPE_MT);
  lua_pushfstring(L, "mp.mpi.Datatype of %s (%s)", mpb_dtype_name(t->dtype),
                  t->t == MPI_DATATYPE_NULL ? "freed" : "committed");
  return 1;
}

/* The task's end (tasks.h): free what the task made and is still alive. */
static void types_end(lua_State *L, mpb_state *st, int aborted) {
  (void)st, (void)aborted;
  if (lua_getfield(L, LUA_REGISTRYINDEX, TYPES_KEY) == LUA_TTABLE) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
      mtype *t = lua_rawgeti(L, -1, i) == LUA_TUSERDATA ? lua_touserdata(L, -1) : NULL;
      if (t) free_type(t);
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, TYPES_KEY);
}

void mpb_mpi_type_funcs(lua_State *L) {
  static const luaL_Reg methods[] = {{"Commit", Type_commit}, {"Free", Type_free},
                                     {"Get_size", Type_size}, {"Get_extent", Type_get_extent},
                                     {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__gc", t_gc}, {"__tostring", t_tostring}, {NULL, NULL}};
  mpb_class(L, MPB_TYPE_MT, methods, NULL, meta);
  static const luaL_Reg funcs[] = {
      {"Type_contiguous", Type_contiguous}, {"Type_vector", Type_vector},
      {"Type_indexed", Type_indexed}, {"Type_create_subarray", Type_create_subarray},
      {"Type_create_resized", Type_create_resized}, {"Type_commit", Type_commit},
      {"Type_free", Type_free}, {"Type_size", Type_size}, {"Type_get_extent", Type_get_extent},
      {NULL, NULL}};
  luaL_setfuncs(L, funcs, 0);
  lua_pushinteger(L, MPI_ORDER_C);
  lua_setfield(L, -2, "ORDER_C");
  lua_pushinteger(L, MPI_ORDER_FORTRAN);
  lua_setfield(L, -2, "ORDER_FORTRAN");
  mpb_mpi_typecons_funcs(L);
  mpb_task_on_end(L, mpb_get(L), types_end);
}
