/* SPDX-License-Identifier: MIT */
/*
** A host with an extension that uses mplua_comm: what it leaves pending on
** that communicator never matches after an abort. Rank 0 posts a receive
** from rank 1 in one task, a task aborts, then rank 1 sends on the
** communicator it now gets: the message must reach a receive on the new
** communicator, never the old pending one. Prints "ok ..." on rank 0.
*/
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include "lauxlib.h"
#include "mplua.h"

#define TAG 7
static MPI_Request old = MPI_REQUEST_NULL;
static int old_buf = -1;

/* ext.post(): rank 0 posts a receive from rank 1 and keeps it. */
static int post(lua_State *L) {
  if (mplua_rank(L) == 0 && MPI_Irecv(&old_buf, 1, MPI_INT, 1, TAG, mplua_comm(L), &old) != MPI_SUCCESS)
    return luaL_error(L, "MPI_Irecv failed");
  return 0;
}

/* ext.send(): rank 1 sends 42 on the communicator it gets now; rank 0
** returns where it landed: "new" (a receive on the communicator it gets
** now), "old" (the pending receive), or "none" after 60 s. */
static int send(lua_State *L) {
  MPI_Comm c = mplua_comm(L);
  int r = mplua_rank(L), v = 42;
  if (r == 1 && MPI_Send(&v, 1, MPI_INT, 0, TAG, c) != MPI_SUCCESS)
    return luaL_error(L, "MPI_Send failed");
  if (r != 0) return 0;
  double end = MPI_Wtime() + 60;
  while (MPI_Wtime() < end) {
    int got = 0;
    if (MPI_Test(&old, &got, MPI_STATUS_IGNORE) != MPI_SUCCESS) return luaL_error(L, "MPI_Test");
    if (got) {
      lua_pushstring(L, "old");
      return 1;
    }
    if (MPI_Iprobe(1, TAG, c, &got, MPI_STATUS_IGNORE) != MPI_SUCCESS) return luaL_error(L, "MPI_Iprobe");
    if (got) {
      if (MPI_Recv(&v, 1, MPI_INT, 1, TAG, c, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return luaL_error(L, "MPI_Recv failed");
      if (MPI_Cancel(&old) != MPI_SUCCESS || MPI_Wait(&old, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return luaL_error(L, "cancelling the old receive failed");
      lua_pushstring(L, v == 42 ? "new" : "garbled");
      return 1;
    }
  }
  lua_pushstring(L, "none");
  return 1;
}

static int open_ext(lua_State *L) {
  static const luaL_Reg f[] = {{"post", post}, {"send", send}, {NULL, NULL}};
  luaL_newlib(L, f);
  return 1;
}

static const char script[] =
    "mp.exec(ext.post)\n"
    "assert(not pcall(mp.exec, function() if mp.rank == 1 then error('on purpose') end mp.barrier() end))\n"
    "local where = mp.exec(ext.send)\n"
    "assert(where == 'new', 'the message went to ' .. tostring(where))\n"
    "print('ok a receive left pending before an abort never matches after it')\n";

int main(int argc, char **argv) {
  lua_State *L = mplua_open(&argc, &argv, 1);
  if (!L) return 1;
  luaL_requiref(L, "ext", open_ext, 1);
  lua_pop(L, 1);
  if (mplua_rank(L) != 0) return mplua_close(L, mplua_worker(L));
  int status = luaL_loadstring(L, script) != LUA_OK || mplua_docall(L, 0, 0) != LUA_OK;
  if (status) mplua_report(L, 1);
  return mplua_close(L, status);
}
