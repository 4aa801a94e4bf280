/* SPDX-License-Identifier: MIT */
/*
** The datatype constructors with byte displacements, equal blocks,
** several types and distributions (mp.mpi.Datatype, as mpi_type.c's):
**
**   mpi.Type_create_hvector(count, blocklength, stride, old)      stride in bytes
**   mpi.Type_create_hindexed(blocklengths, displacements, old)    displacements in bytes
**   mpi.Type_create_indexed_block(blocklength, displacements, old)
**   mpi.Type_create_struct(blocklengths, displacements, types)    displacements in bytes
**   mpi.Type_create_darray(size, rank, gsizes, distribs, dargs, psizes, order, old)
**
** A datatype records the element type it is made of (a view's filetype must
** be made of the etype): a struct of one element type is made of it, one of
** several is made of bytes (a filetype under the default view, whose etype
** is a byte). Type_create_darray's arguments are checked as MPI states them
** (MPICH returns some of these errors and not others), so that a bad one is
** an argument error naming the dimension.
*/
#include "mpi/mpi_file.h"

#define argerror mpb_mfile_argerror

/* A list of n (*n < 0: its length) byte displacements at idx. */
static MPI_Aint *aints_arg(lua_State *L, int idx, int arg, const char *fn, const char *what,
                           int *n) {
  if (!lua_istable(L, idx)) argerror(L, arg, fn, "table of %s expected", what);
  int len = (int)lua_rawlen(L, idx);
  if (*n >= 0 && len != *n)
    argerror(L, arg, fn, "%s", lua_pushfstring(L, "%d %s for %d blocks", len, what, *n));
  MPI_Aint *v = lua_newuserdatauv(L, sizeof *v * ((size_t)len + 1), 0);
  for (int i = 0; i < len; i++) {
    int ok;
    lua_rawgeti(L, idx, i + 1);
    lua_Integer x = lua_tointegerx(L, -1, &ok);
    if (!ok) argerror(L, arg, fn, "%s", lua_pushfstring(L, "%s[%d] is not an integer", what, i + 1));
    v[i] = (MPI_Aint)x;
    lua_pop(L, 1);
  }
  *n = len;
  return v;
}

/* A list of ints at idx as a new userdata (pushed), of *n (or its length). */
static int *ints_new(lua_State *L, int idx, int arg, const char *fn, const char *what, int lo,
                     int *n) {
  if (!lua_istable(L, idx)) argerror(L, arg, fn, "table of %s expected", what);
  int *v = lua_newuserdatauv(L, sizeof *v * (lua_rawlen(L, idx) + 1), 0);
  mpb_mtype_ints(L, idx, arg, fn, what, lo, v, n, INT32_MAX);
  return v;
}

/* mpi.Type_create_hvector(count, blocklength, stride, oldtype): stride in bytes */
static int Type_create_hvector(lua_State *L) {
  const char *fn = "mpi.Type_create_hvector";
  mpb_check_task(L, mpb_get(L), fn);
  int count = mpb_mtype_int(L, 1, 1, fn, "count", 0);
  int blen = mpb_mtype_int(L, 2, 2, fn, "blocklength", 0);
  lua_Integer stride = luaL_checkinteger(L, 3);
  int dtype;
  MPI_Datatype old = mpb_mtype_old(L, 4, 4, fn, &dtype);
  mpb_mtype *t = mpb_mtype_new(L, dtype);
  return mpb_mtype_made(L, t, MPI_Type_create_hvector(count, blen, (MPI_Aint)stride, old, &t->t),
                        fn);
}

/* mpi.Type_create_hindexed(blocklengths, displacements, oldtype): bytes */
static int Type_create_hindexed(lua_State *L) {
  const char *fn = "mpi.Type_create_hindexed";
  mpb_check_task(L, mpb_get(L), fn);
  int n = -1, dtype;
  int *blens = ints_new(L, 1, 1, fn, "blocklengths", 0, &n);
  MPI_Aint *disps = aints_arg(L, 2, 2, fn, "displacements", &n);
  MPI_Datatype old = mpb_mtype_old(L, 3, 3, fn, &dtype);
  mpb_mtype *t = mpb_mtype_new(L, dtype);
  return mpb_mtype_made(L, t, MPI_Type_create_hindexed(n, blens, disps, old, &t->t), fn);
}

/* mpi.Type_create_indexed_block(blocklength, displacements, oldtype):
** displacements in oldtype's extents */
static int Type_create_indexed_block(lua_State *L) {
  const char *fn = "mpi.Type_create_indexed_block";
  mpb_check_task(L, mpb_get(L), fn);
  int blen = mpb_mtype_int(L, 1, 1, fn, "blocklength", 0);
  int n = -1, dtype;
  int *disps = ints_new(L, 2, 2, fn, "displacements", INT32_MIN, &n);
  MPI_Datatype old = mpb_mtype_old(L, 3, 3, fn, &dtype);
  mpb_mtype *t = mpb_mtype_new(L, dtype);
  return mpb_mtype_made(L, t, MPI_Type_create_indexed_block(n, blen, disps, old, &t->t), fn);
}

/* mpi.Type_create_struct(blocklengths, displacements, types): bytes; types
** a list of dtype names or datatypes */
static int Type_create_struct(lua_State *L) {
  const char *fn = "mpi.Type_create_struct";
  mpb_check_task(L, mpb_get(L), fn);
  int n = -1;
  int *blens = ints_new(L, 1, 1, fn, "blocklengths", 0, &n);
  MPI_Aint *disps = aints_arg(L, 2, 2, fn, "displacements", &n);
  if (!lua_istable(L, 3)) argerror(L, 3, fn, "table of %s expected", "types");
  if ((int)lua_rawlen(L, 3) != n)
    argerror(L, 3, fn, "%s", lua_pushfstring(L, "%d types for %d blocks", (int)lua_rawlen(L, 3), n));
  MPI_Datatype *types = lua_newuserdatauv(L, sizeof *types * ((size_t)n + 1), 0);
  int dtype = -1;
  for (int i = 0; i < n; i++) {
    int d;
    lua_rawgeti(L, 3, i + 1);
    types[i] = mpb_mtype_old(L, lua_gettop(L), 3, fn, &d);
    lua_pop(L, 1); /* (a datatype stays alive in the list) */
    dtype = i == 0 || d == dtype ? d : MPB_U8;
  }
  mpb_mtype *t = mpb_mtype_new(L, dtype < 0 ? MPB_U8 : dtype);
  return mpb_mtype_made(L, t, MPI_Type_create_struct(n, blens, disps, types, &t->t), fn);
}

/* mpi.Type_create_darray(size, rank, gsizes, distribs, dargs, psizes, order, oldtype) */
static int Type_create_darray(lua_State *L) {
  const char *fn = "mpi.Type_create_darray";
  mpb_check_task(L, mpb_get(L), fn);
  int size = mpb_mtype_int(L, 1, 1, fn, "size", 1);
  int rank = mpb_mtype_int(L, 2, 2, fn, "rank", 0);
  if (rank >= size)
    argerror(L, 2, fn, "%s", lua_pushfstring(L, "rank %d out of range 0..%d", rank, size - 1));
  int g[MPB_MTYPE_MAXDIMS], dist[MPB_MTYPE_MAXDIMS], darg[MPB_MTYPE_MAXDIMS],
      p[MPB_MTYPE_MAXDIMS], n = -1;
  mpb_mtype_ints(L, 3, 3, fn, "gsizes", 1, g, &n, MPB_MTYPE_MAXDIMS);
  if (n == 0) argerror(L, 3, fn, "%s", "no dimensions");
  mpb_mtype_ints(L, 4, 4, fn, "distribs", INT32_MIN, dist, &n, MPB_MTYPE_MAXDIMS);
  mpb_mtype_ints(L, 5, 5, fn, "dargs", INT32_MIN, darg, &n, MPB_MTYPE_MAXDIMS);
  mpb_mtype_ints(L, 6, 6, fn, "psizes", 1, p, &n, MPB_MTYPE_MAXDIMS);
  int64_t procs = 1;
  for (int k = 0; k < n; k++) {
    procs *= p[k];
    const char *bad = NULL;
    if (dist[k] != MPI_DISTRIBUTE_BLOCK && dist[k] != MPI_DISTRIBUTE_CYCLIC &&
        dist[k] != MPI_DISTRIBUTE_NONE)
      bad = "is not mpi.DISTRIBUTE_BLOCK, DISTRIBUTE_CYCLIC or DISTRIBUTE_NONE";
    else if (darg[k] != MPI_DISTRIBUTE_DFLT_DARG && darg[k] < 1)
      argerror(L, 5, fn, "%s", lua_pushfstring(L, "dimension %d: darg %d is not a block size "
               "(>= 1) or mpi.DISTRIBUTE_DFLT_DARG", k + 1, darg[k]));
    else if (dist[k] == MPI_DISTRIBUTE_NONE && p[k] != 1)
      argerror(L, 6, fn, "%s", lua_pushfstring(L, "dimension %d: DISTRIBUTE_NONE over %d "
               "processes (it needs 1)", k + 1, p[k]));
    else if (dist[k] == MPI_DISTRIBUTE_BLOCK && darg[k] != MPI_DISTRIBUTE_DFLT_DARG &&
             (int64_t)darg[k] * p[k] < g[k])
      argerror(L, 5, fn, "%s", lua_pushfstring(L, "dimension %d: blocks of %d over %d "
               "processes cover %d of %d elements", k + 1, darg[k], p[k], darg[k] * p[k], g[k]));
    if (bad) argerror(L, 4, fn, "%s", lua_pushfstring(L, "dimension %d: distrib %d %s", k + 1,
                                                      dist[k], bad));
  }
  if (procs != size)
    argerror(L, 6, fn, "%s", lua_pushfstring(L, "the grid of psizes has %I processes, not size "
             "%d", (LUAI_UACINT)procs, size));
  int order = mpb_mtype_int(L, 7, 7, fn, "order", INT32_MIN);
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    argerror(L, 7, fn, "%s", "order is not mpi.ORDER_C or mpi.ORDER_FORTRAN");
  int dtype;
  MPI_Datatype old = mpb_mtype_old(L, 8, 8, fn, &dtype);
  mpb_mtype *t = mpb_mtype_new(L, dtype);
  return mpb_mtype_made(L, t, MPI_Type_create_darray(size, rank, n, g, dist, darg, p, order, old,
                                                     &t->t), fn);
}

void mpb_mpi_typecons_funcs(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"Type_create_hvector", Type_create_hvector}, {"Type_create_hindexed", Type_create_hindexed},
      {"Type_create_indexed_block", Type_create_indexed_block},
      {"Type_create_struct", Type_create_struct}, {"Type_create_darray", Type_create_darray},
      {NULL, NULL}};
  luaL_setfuncs(L, funcs, 0);
  static const struct { const char *name; int v; } k[] = {
      {"DISTRIBUTE_BLOCK", MPI_DISTRIBUTE_BLOCK}, {"DISTRIBUTE_CYCLIC", MPI_DISTRIBUTE_CYCLIC},
      {"DISTRIBUTE_NONE", MPI_DISTRIBUTE_NONE}, {"DISTRIBUTE_DFLT_DARG", MPI_DISTRIBUTE_DFLT_DARG}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    lua_pushinteger(L, k[i].v);
    lua_setfield(L, -2, k[i].name);
  }
}
