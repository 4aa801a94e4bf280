/* SPDX-License-Identifier: MIT */
/*
** heat_kernel: the kernel of heat_host.c as a Lua module written in C, so
** that the same solver can be stepped from Lua (scripts/examples/heat_lua.lua).
** It links no mplua library: it reaches the runtime through mplua_capi_get
** (mplua.h), so it loads in mplua, in a host, and in a stock lua5.4 -l mp:
**
**   mpicc -shared -fPIC heat_kernel.c $(pkg-config --cflags mplua) -o heat_kernel.so
**
**   local heat = require "heat_kernel"     -- on every rank, inside a task
**   local k = heat.new(nx, ny)             -- this rank's rows of an nx x ny grid
**   k.T                                    -- its rows as an nx x nloc mp.Array view
**   k:step(alpha)                          -- halo exchange, then one explicit step
**   k:stats()                              -- this rank's max and sum of its rows
**
** The grid is split by rows over the ranks of mp's communicator as in
** heat_host.c (top edge held at 100, the others at 0), and a step does the
** same operations in the same order, so both print the same numbers. The
** field is the module's memory, lent to Lua as mplua_array views: it stays
** allocated until the Lua state closes (a view may outlive the kernel object).
*/
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include "lauxlib.h"
#include "mplua.h"

typedef struct kernel {
  double *T, *Tn; /* nx x (nloc + 2): rows 0 and nloc + 1 are ghosts */
  int nx, nloc, row0, up, down;
} kernel;

static const mplua_capi *api(lua_State *L) {
  const mplua_capi *a = mplua_capi_get(L);
  if (!a) luaL_error(L, "heat_kernel: the mp module is not loaded (require \"mp\" first)");
  return a;
}

/* Frees the field when the state closes (the registry holds every kernel). */
static int kernel_gc(lua_State *L) {
  kernel *k = luaL_checkudata(L, 1, "heat.Kernel");
  free(k->T), free(k->Tn);
  k->T = k->Tn = NULL;
  return 0;
}

static int new(lua_State *L) {
  lua_Integer nx = luaL_checkinteger(L, 1), ny = luaL_checkinteger(L, 2);
  const mplua_capi *a = api(L);
  int rank = a->rank(L), size = a->size(L);
  luaL_argcheck(L, nx >= 3 && nx <= 1 << 20, 1, "need 3 <= nx <= 2^20");
  luaL_argcheck(L, ny >= size && ny <= 1 << 20, 2, "need ranks <= ny <= 2^20");
  kernel *k = lua_newuserdatauv(L, sizeof *k, 1); /* inert until both buffers exist */
  memset(k, 0, sizeof *k);
  luaL_setmetatable(L, "heat.Kernel");
  int nloc = (int)(ny / size + (rank < ny % size));
  size_t n = (size_t)nx * (size_t)(nloc + 2);
  k->T = calloc(n, sizeof *k->T);
  k->Tn = calloc(n, sizeof *k->Tn);
  if (!k->T || !k->Tn) return luaL_error(L, "heat_kernel: out of memory");
  k->nx = (int)nx, k->nloc = nloc;
  k->row0 = (int)(rank * (ny / size) + (rank < ny % size ? rank : ny % size));
  k->up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  k->down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  if (rank == 0)
    for (int i = 0; i < k->nx; i++) k->T[i] = 100.0;
  /* the state owns it to the end: views lent below must stay valid */
  lua_getfield(L, LUA_REGISTRYINDEX, "heat.kernels");
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
  lua_pop(L, 1);
  int64_t dims[2] = {k->nx, k->nloc};
  if (a->array(L, NULL, k->T + k->nx, MPLUA_F64, 2, dims) != 0)
    return luaL_error(L, "heat_kernel: cannot lend the field");
  lua_setiuservalue(L, -2, 1); /* k.T */
  return 1;
}

static int step(lua_State *L) {
  kernel *k = luaL_checkudata(L, 1, "heat.Kernel");
  double alpha = luaL_checknumber(L, 2);
  int nx = k->nx, nloc = k->nloc;
  double *T = k->T, *Tn = k->Tn;
  MPI_Comm comm = api(L)->comm(L); /* the current task's (renewed after an abort) */
  int rc = MPI_Sendrecv(T + nx, nx, MPI_DOUBLE, k->up, 0, T + (size_t)nx * (nloc + 1), nx,
                        MPI_DOUBLE, k->down, 0, comm, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS)
    rc = MPI_Sendrecv(T + (size_t)nx * nloc, nx, MPI_DOUBLE, k->down, 1, T, nx, MPI_DOUBLE, k->up,
                      1, comm, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return luaL_error(L, "heat_kernel: the halo exchange failed");
  for (int j = 1; j <= nloc; j++)
    for (int i = 1; i < nx - 1; i++) {
      size_t c = (size_t)j * nx + i;
      Tn[c] = T[c] + alpha * (T[c - 1] + T[c + 1] + T[c - nx] + T[c + nx] - 4 * T[c]);
    }
  for (int j = 1; j <= nloc; j++)
    memcpy(T + (size_t)j * nx + 1, Tn + (size_t)j * nx + 1, (size_t)(nx - 2) * sizeof *T);
  return 0;
}

static int stats(lua_State *L) {
  kernel *k = luaL_checkudata(L, 1, "heat.Kernel");
  double mx = 0, sum = 0;
  for (size_t c = (size_t)k->nx; c < (size_t)k->nx * (size_t)(k->nloc + 1); c++) {
    if (k->T[c] > mx) mx = k->T[c];
    sum += k->T[c];
  }
  lua_pushnumber(L, mx);
  lua_pushnumber(L, sum);
  return 2;
}

static int index_(lua_State *L) {
  luaL_checkudata(L, 1, "heat.Kernel");
  const char *key = luaL_checkstring(L, 2);
  kernel *k = lua_touserdata(L, 1);
  if (strcmp(key, "T") == 0) lua_getiuservalue(L, 1, 1);
  else if (strcmp(key, "nloc") == 0) lua_pushinteger(L, k->nloc);
  else if (strcmp(key, "row0") == 0) lua_pushinteger(L, k->row0);
  else {
    lua_getmetatable(L, 1);
    lua_getfield(L, -1, key); /* a method, or nil */
  }
  return 1;
}

static const luaL_Reg methods[] = {{"step", step}, {"stats", stats}, {NULL, NULL}};
static const luaL_Reg funcs[] = {{"new", new}, {NULL, NULL}};

int luaopen_heat_kernel(lua_State *L) {
  if (luaL_newmetatable(L, "heat.Kernel")) {
    luaL_setfuncs(L, methods, 0);
    lua_pushcfunction(L, index_);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, kernel_gc);
    lua_setfield(L, -2, "__gc");
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "heat.kernels");
  }
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  return 1;
}
