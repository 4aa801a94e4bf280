/* SPDX-License-Identifier: MIT */
/*
** The `mp` module as any Lua loads it. In a state made by mplua_open the
** runtime already runs and luaopen_mp only opens the table. In a stock
** `lua5.4` (`require "mp"`, or `lua5.4 -l mp`, under mpiexec) there is no
** runtime yet: luaopen_mp starts one with the mplua executable's defaults
** (MPI initialized here unless the program did, MPI_COMM_WORLD, signals
** and timer, line-buffered stdout), and a sentinel whose finalizer, run by
** lua_close when the program ends, releases the workers. Rank 0 leads; the
** others call mp.serve(), which runs the tasks rank 0 starts and returns
** when rank 0's program ends:
**
**   local mp = require "mp"
**   if mp.rank > 0 then return mp.serve() end
**
** `lua5.4 -l mp.auto` does that at load time: require "mp.auto" finds
** luaopen_mp_auto in mp.so (Lua's all-in-one loader), whose workers serve
** and then end the process, so `mpiexec -n 4 lua5.4 -l mp.auto -i` gives
** lua's own prompt on rank 0 with idle workers.
**
** lib/lua/5.4/mp.so and ad.so are links to libmplua.so: the library does
** not link liblua (the lua5.4 program provides the Lua API; hosts link it).
*/
#include <stdio.h>
#include <stdlib.h>

#include "lauxlib.h"
#include "embed.h"
#include "mp.h"
#include "tasks/tasks.h"
#include "mplua.h"

/* mp.serve(): a worker runs rank 0's tasks until rank 0 ends; returns rank
** 0's exit status. */
static int serve(lua_State *L) {
  mpb_state *st = mpb_get(L);
  if (st->rank == 0) return luaL_error(L, "mp.serve: rank 0 leads (only workers serve)");
  lua_pushinteger(L, mpb_worker_loop(L, st));
  return 1;
}

static const mplua_capi capi = {MPLUA_VERSION_NUM, mplua_array, mplua_comm, mplua_rank,
                                mplua_size};

int host_open_mp(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&capi); /* for C modules (mplua.h) */
  lua_setfield(L, LUA_REGISTRYINDEX, MPLUA_CAPI_KEY);
  mpb_open_mp(L);
  lua_pushcfunction(L, serve);
  lua_setfield(L, -2, "serve");
  return 1;
}

/* Rank 0's program ends (lua_close): the workers return from mp.serve. The
** sentinel is made after the runtime, so it is finalized first. A worker
** whose program ended without mp.serve() waits here for rank 0's exit
** notice (and passes it on), failing any task meanwhile: the notice would
** otherwise be left unreceived (UCX warns at exit) and a task would hang. */
static int sentinel_gc(lua_State *L) {
  mpb_state *st = mpb_find(L);
  if (st && st->rank == 0) {
    fflush(stdout);
    mpb_task_exit(st, 0);
  } else if (st && st->use_mpi && !st->exit_seen) {
    fflush(stdout);
    st->closing = 1;
    mpb_worker_loop(L, st);
  }
  return 0;
}

static void start(lua_State *L) {
  mpb_opts o = {1, MPI_COMM_NULL, 0};
  const char *off = getenv("MPLUA_DISABLED");
  if (off && *off && *off != '0') o.use_mpi = 0;
  char err[MPB_ERRLEN];
  if (!mpb_start(L, &o, NULL, NULL, err, sizeof err))
    luaL_error(L, "mp: cannot start the runtime: %s", err);
  host_lines(L, mpb_get(L)->rank); /* ranks share mpiexec's pipe: keep lines whole */
  lua_newuserdatauv(L, 0, 0);
  lua_newtable(L);
  lua_pushcfunction(L, sentinel_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, "mplua.module");
  host_add_libdir(L, 1);
  if (mpb_get(L)->rank == 0) { /* lua's os.exit would end rank 0 alone */
    lua_getglobal(L, "os");
    if (lua_istable(L, -1)) {
      lua_pushcfunction(L, host_leader_exit);
      lua_setfield(L, -2, "exit");
    }
    lua_pop(L, 1);
  }
  /* `ad` comes with mp, as in the mplua program */
  luaL_requiref(L, "ad", mpb_open_ad, 1);
  lua_pop(L, 1);
}

int luaopen_mp(lua_State *L) {
  if (mpb_find(L)) return host_open_mp(L);
  start(L);
  host_open_mp(L);
  /* a global, as in the mplua program: functions sent to other ranks name
  ** `mp` as a global (an upvalue would be a table to copy) */
  lua_pushvalue(L, -1);
  lua_setglobal(L, "mp");
  return 1;
}

int luaopen_mp_auto(lua_State *L) {
  luaL_requiref(L, "mp", luaopen_mp, 1);
  mpb_state *st = mpb_get(L);
  if (st->rank != 0) {
    int status = mpb_worker_loop(L, st);
    fflush(NULL);
    mpb_stop(L); /* finalizes MPI when it started it */
    exit(status);
  }
  return 1;
}
