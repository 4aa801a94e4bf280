/*
** The `mp` module: the runtime's life cycle and luaopen_mp, which walks the
** registration functions of the mpbuiltins/ files (as linit.c does).
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array/array.h"
#include "chan/chan.h"

static const char STATE_KEY[] = "mp.state";

/* The state lives in the registry (its __gc finalizes MPI); a pointer to it
** sits in the lua_State's extra space, copied into every coroutine, so the
** hot path finds it without a lookup. */
mpb_state *mpb_get(lua_State *L) {
  mpb_state *st = *(mpb_state **)lua_getextraspace(L);
  if (!st) luaL_error(L, "mp: the runtime is not started (mplua_open)");
  return st;
}

static int state_gc(lua_State *L) {
  mpb_state *st = lua_touserdata(L, 1);
  if (st->inbox) mpb_chan_close(st);
  return 0;
}

mpb_state *mpb_start(lua_State *L, int use_mpi, int *argc, char ***argv) {
  mpb_state *st = lua_newuserdatauv(L, sizeof *st, 0);
  memset(st, 0, sizeof *st); /* inert: __gc does nothing until inbox exists */
  lua_newtable(L);
  lua_pushcfunction(L, state_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, STATE_KEY);
  *(mpb_state **)lua_getextraspace(L) = st;
  if (mpb_chan_init(L, st, use_mpi, argc, argv) != 0) return NULL;
  mpb_adopt_init(L, st);
  mpb_hook_arm(st, 0);
  return st;
}

void mpb_stop(lua_State *L) {
  mpb_state *st = mpb_get(L);
  if (st->inbox) mpb_chan_close(st);
}

static int wtime(lua_State *L) {
  mpb_state *st = mpb_get(L);
  if (st->use_mpi) {
    lua_pushnumber(L, MPI_Wtime());
  } else {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    lua_pushnumber(L, (double)t.tv_sec + 1e-9 * (double)t.tv_nsec);
  }
  return 1;
}

/* mp.stats(): counters for tests and the curious. */
static int stats(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, st->task);
  lua_setfield(L, -2, "task");
  lua_pushinteger(L, st->dropped);
  lua_setfield(L, -2, "dropped");
  lua_pushinteger(L, st->naborts);
  lua_setfield(L, -2, "aborts");
  lua_pushinteger(L, (lua_Integer)st->send_bytes);
  lua_setfield(L, -2, "pending_bytes");
  lua_pushinteger(L, (lua_Integer)st->bytes_sent);
  lua_setfield(L, -2, "bytes_sent");
  lua_pushinteger(L, (lua_Integer)st->bytes_recv);
  lua_setfield(L, -2, "bytes_received");
  return 1;
}

int luaopen_mp(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_newtable(L);
  lua_pushinteger(L, st->rank);
  lua_setfield(L, -2, "rank");
  lua_pushinteger(L, st->size);
  lua_setfield(L, -2, "size");
  lua_pushcfunction(L, wtime);
  lua_setfield(L, -2, "wtime");
  lua_pushcfunction(L, stats);
  lua_setfield(L, -2, "stats");
  mpb_open_p2p(L);
  mpb_open_task(L);
  mpb_open_abort(L);
  mpb_open_connect(L);
  mpb_open_array(L);
  mpb_open_comm(L);
  mpb_open_request(L);
  mpb_open_pool(L);
  mpb_open_map(L);
  return 1;
}
