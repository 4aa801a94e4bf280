/* SPDX-License-Identifier: MIT */
/*
** A host whose loop has collectives and a ring exchange on MPI_COMM_WORLD
** between its mplua_serve calls, steered from rank 0's stdin (fed by
** tests/sh/embed_steps.sh with pauses between commands, so that they arrive
** while the loop runs at full speed). The Lua global `step` is the host's
** step on every rank; `mark()` records it on every rank through a task, and
** `paused` makes the host wait for input (mplua_serve's timeout). Checks that
** every rank's host step is the same at each iteration (so no task made a
** rank skip ahead), that the marks are the same list on every rank (a typed
** task ran at the same step everywhere), and that the session ended at the
** same step. Prints "ready" once running, then "ok ..." lines on rank 0.
** With the argument "exits", os.exit is left to end the job (no
** MPLUA_OUT_EXIT): typed at rank 0, it ends every rank's process with its
** status, MPI finalized (the host's code after the loop is not reached).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include "lauxlib.h"
#include "mplua.h"
#include "host_check.h"

static const char prelude[] =
    "marks = {}\n"
    "paused = false\n"
    "function mark() mp.exec(function() marks[#marks + 1] = step end) end\n"
    "function set(k, v) mp.exec(function(k, v) _ENV[k] = v end, k, v) end\n"
    "function same() return mp.exec(function()\n"
    "  return mp.allreduce(step, 'min') == mp.allreduce(step, 'max') end) end\n";

/* the same long long on every rank */
static int agree(long long v) {
  long long lo, hi;
  MPI_Allreduce(&v, &lo, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &hi, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mplua_config c;
  mplua_config_init(&c);
  c.out = MPLUA_OUT_ALL & ~MPLUA_OUT_STDIO;
  if (argc > 1 && strcmp(argv[1], "exits") == 0) c.out &= ~MPLUA_OUT_EXIT;
  lua_State *L = mplua_open_config(&argc, &argv, &c);
  if (!L) fail("mplua_open_config");
  if (luaL_dostring(L, prelude) != LUA_OK) fail(lua_tostring(L, -1));
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long long step = 0, idle = 0;
  int r;
  for (;;) {
    step++;
    /* the host's own MPI between steps: a collective and a ring */
    long long hi, got;
    MPI_Allreduce(&step, &hi, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (hi != step) fail("a rank is at another host step");
    MPI_Sendrecv(&step, 1, MPI_LONG_LONG, right, 7, &got, 1, MPI_LONG_LONG, left, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (got != step) fail("the ring brought another step");
    lua_pushinteger(L, step);
    lua_setglobal(L, "step");
    lua_getglobal(L, "paused");
    int paused = lua_toboolean(L, -1);
    lua_pop(L, 1);
    idle += paused;
    if ((r = mplua_serve(L, paused ? 0.01 : 0)) != 0) break;
    if (step == 1 && rank == 0) printf("ready\n"); /* the script starts typing */
  }
  if (r != 1) fail("mplua_serve failed");
  if (!agree(step)) fail("the session ended at different steps");
  lua_getglobal(L, "marks");
  long long n = (long long)luaL_len(L, -1);
  if (!agree(n)) fail("not the same number of marks");
  for (long long i = 1; i <= n; i++) {
    lua_geti(L, -1, i);
    long long s = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (!agree(s)) fail("a mark at different steps");
    if (i > 1 && rank == 0) {
      lua_geti(L, -1, i - 1);
      if (lua_tointeger(L, -1) > s) fail("marks out of order");
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  if (rank == 0) {
    printf("ok %lld marks at the same steps on %d ranks\n", n, size);
    printf("ok ended together after %lld steps (%s paused)\n", step, idle ? "some" : "none");
  }
  mplua_close(L, 0);
  MPI_Finalize();
  return 0;
}
