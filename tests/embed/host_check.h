/* SPDX-License-Identifier: MIT */
/*
** What the MPI hosts in tests/embed share: `rank` (the world rank, set by
** the host after MPI_Init), fail() that names it and aborts the whole job so
** that mpiexec returns, and run() that runs a chunk which must return true.
*/
#ifndef HOST_CHECK_H
#define HOST_CHECK_H

#include <stdio.h>

#include <mpi.h>
#include "lauxlib.h"
#include "mplua.h"

static int rank;

static inline void fail(const char *what) {
  fprintf(stderr, "FAIL [rank %d]: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static inline void run(lua_State *L, const char *code) {
  if (luaL_loadstring(L, code) != LUA_OK || mplua_docall(L, 0, 1) != LUA_OK) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    fail(code);
  }
  if (!lua_toboolean(L, -1)) fail(code);
  lua_pop(L, 1);
}

#endif
