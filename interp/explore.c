/* SPDX-License-Identifier: MIT */
/*
** mplua --explore N [-n RANKS] SCRIPT [ARGS...]: the schedule explorer of
** mp.mpi (mpbuiltins/mpi/README.md), which runs SCRIPT under the seeds
** 1..N of the seeded scheduler with mpiexec and reports the seeds whose
** outcome differs. Its logic is scripts/explore.lua, compiled in: this is
** the same program with its options, run without MPI by this process.
*/
#include <stdlib.h>

#include "host.h"
#include "lauxlib.h"
#include "mplua.h"

#include "explore_lua.h" /* generated from scripts/explore.lua */

int mplua_explore(lua_State *L, const char *prog, int seeds, int nranks, char **argv, int argc) {
  int status = luaL_loadbufferx(L, explore_lua, explore_lua_len, "=explore", "t");
  if (status != LUA_OK) {
    mplua_report(L, status);
    return 1;
  }
  /* arg as the script expects it: the interpreter lowest, then its options */
  lua_createtable(L, argc + 4, 2);
  lua_pushstring(L, prog);
  lua_rawseti(L, -2, -1);
  lua_pushliteral(L, "explore");
  lua_rawseti(L, -2, 0);
  int n = 0;
  lua_pushliteral(L, "-n");
  lua_rawseti(L, -2, ++n);
  lua_pushinteger(L, nranks);
  lua_rawseti(L, -2, ++n);
  lua_pushliteral(L, "-s");
  lua_rawseti(L, -2, ++n);
  lua_pushinteger(L, seeds);
  lua_rawseti(L, -2, ++n);
  for (int i = 0; i < argc; i++) { /* the script and its arguments */
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, ++n);
  }
  lua_setglobal(L, "arg");
  status = mplua_docall(L, 0, 0);
  if (status != LUA_OK) {
    mplua_report(L, status);
    return 1;
  }
  return 0;
}
