/* SPDX-License-Identifier: MIT */
/*
** The mplua host every benchmark program is: it opens mplua (with MPI or
** without), adds the program's `bench` module of raw-MPI or plain-C
** kernels, and runs SCRIPT.lua on rank 0 with `arg` set while the other
** ranks serve, so one job interleaves mp and baseline rounds.
*/
#ifndef MPLUA_BENCH_HOST_H
#define MPLUA_BENCH_HOST_H

#include <stdio.h>

#include "lauxlib.h"
#include "mplua.h"

static inline int bench_host_main(int argc, char **argv, int use_mpi, lua_CFunction open_bench) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s%s SCRIPT.lua [args]\n", use_mpi ? "mpiexec -n N " : "", argv[0]);
    return 1;
  }
  lua_State *L = mplua_open(&argc, &argv, use_mpi);
  if (!L) return 1;
  luaL_requiref(L, "bench", open_bench, 1);
  lua_pop(L, 1);
  if (mplua_rank(L) != 0) return mplua_close(L, mplua_worker(L));
  lua_createtable(L, argc, 0);
  for (int i = 2; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - 1);
  }
  lua_setglobal(L, "arg");
  int status = luaL_loadfile(L, argv[1]) != LUA_OK;
  if (status)
    mplua_report(L, 1);
  else if ((status = mplua_docall(L, 0, 0) != LUA_OK))
    mplua_report(L, 1);
  return mplua_close(L, status);
}

#endif
