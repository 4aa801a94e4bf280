/* SPDX-License-Identifier: MIT */
/*
** The `mp` module: mpb_open_mp walks the openers of the wings, bottom up, as
** linit.c walks the standard libraries. Each opener adds its functions to
** the module table on top of the stack (and may register handlers with the
** layers below it).
*/
#include "adlib/lad.h"
#include "array/array.h"
#include "coll/coll.h"
#include "layout/laylib.h"
#include "topo/topo.h"
#include "map/map_int.h"
#include "mp.h"
#include "mpi/mpi.h"
#include "p2p/p2p.h"
#include "tasks/tasks.h"
#include "trace/tracer.h"
#include "wire/wire.h"
#include "wire/wire_lstr.h"

/* mp.wtime(): seconds of the runtime's one monotonic clock. */
static int wtime(lua_State *L) {
  lua_pushnumber(L, mpb_now());
  return 1;
}

/* mp.stats(): counters for tests and the curious. */
static int stats(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_createtable(L, 0, 16);
  lua_pushinteger(L, st->task);
  lua_setfield(L, -2, "task");
  lua_pushinteger(L, st->rank == 0 ? st->dropped_job + st->dropped : st->dropped);
  lua_setfield(L, -2, "dropped");
  lua_pushinteger(L, st->naborts);
  lua_setfield(L, -2, "aborts");
  lua_pushinteger(L, (lua_Integer)st->send_bytes);
  lua_setfield(L, -2, "pending_bytes");
  lua_pushinteger(L, (lua_Integer)st->send_bytes_peak); /* since the last call */
  lua_setfield(L, -2, "pending_bytes_peak");
  st->send_bytes_peak = st->send_bytes;
  lua_pushinteger(L, (lua_Integer)st->bytes_sent);
  lua_setfield(L, -2, "bytes_sent");
  lua_pushinteger(L, (lua_Integer)st->bytes_recv);
  lua_setfield(L, -2, "bytes_received");
  uint64_t woken, refused;
  mpb_wake_counts(st, &woken, &refused);
  lua_pushinteger(L, (lua_Integer)woken);
  lua_setfield(L, -2, "wakeups");
  lua_pushinteger(L, (lua_Integer)refused);
  lua_setfield(L, -2, "wakeups_refused");
  mpb_nap_counts(st, &woken, &refused);
  lua_pushinteger(L, (lua_Integer)woken);
  lua_setfield(L, -2, "naps");
  lua_pushinteger(L, (lua_Integer)refused);
  lua_setfield(L, -2, "naps_timed_out");
  lua_pushinteger(L, (lua_Integer)st->looks);
  lua_setfield(L, -2, "inbox_looks");
  lua_pushinteger(L, (lua_Integer)st->any_looks);
  lua_setfield(L, -2, "any_source_looks");
  lua_pushinteger(L, (lua_Integer)mpb_lstr_adopted(st->lstr));
  lua_setfield(L, -2, "strings_adopted");
  lua_pushinteger(L, (lua_Integer)mpb_where_alive_looks(st));
  lua_setfield(L, -2, "alive_looks");
  lua_pushinteger(L, (lua_Integer)mpb_where_answer_bytes(st));
  lua_setfield(L, -2, "where_answer_bytes");
  return 1;
}

/* The words before the array layer's errors (array.h): this rank. */
static int array_prefix(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_pushfstring(L, MPB_RANKFMT, st->rank, st->size);
  return 1;
}

static void open_basics(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_pushinteger(L, st->rank);
  lua_setfield(L, -2, "rank");
  lua_pushinteger(L, st->size);
  lua_setfield(L, -2, "size");
  lua_pushcfunction(L, wtime);
  lua_setfield(L, -2, "wtime");
  lua_pushcfunction(L, stats);
  lua_setfield(L, -2, "stats");
  lua_pushcfunction(L, array_prefix);
  lua_setfield(L, LUA_REGISTRYINDEX, MPB_ARRAY_PREFIX_KEY);
}

static void (*const openers[])(lua_State *L) = {
    open_basics,      mpb_open_array,   /* array/ */
    mpb_open_comm,    mpb_open_p2p,     mpb_open_request, /* p2p/ */
    mpb_open_coll,                      /* coll/ */
    mpb_open_layout,                    /* layout/ */
    mpb_open_cart,    mpb_open_graph,   mpb_open_dist_graph, mpb_open_reorder,
    mpb_open_neighbor,                  /* topo/ */
    mpb_open_task,    mpb_open_abort,   mpb_open_connect, mpb_open_pool, mpb_open_where,
                                                                     /* tasks/ */
    mpb_open_map,                       /* map/ */
    mpb_open_mpi,                       /* mpi/ */
    mpb_open_trace,                     /* trace/ */
};

/* mp's tables of C functions (mp.mpi, mp.Array, ...) are also the modules
** "mp.mpi", ... in package.loaded: functions travel by name one level
** below a module (wire_names.c), so a task that captured `local mpi =
** mp.mpi`, or one of its C functions, gets the receiving rank's. */
static void name_submodules(lua_State *L, int mpt) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushnil(L);
  while (lua_next(L, mpt)) {
    int has_c = 0;
    if (lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1)) {
      lua_pushnil(L);
      while (!has_c && lua_next(L, -2)) {
        has_c = lua_iscfunction(L, -1);
        lua_pop(L, 1);
      }
      if (has_c) lua_pop(L, 1); /* the key lua_next left */
    }
    if (has_c) {
      /* package.loaded, the key, the table, then: */
      const char *name = lua_pushfstring(L, "mp.%s", lua_tostring(L, -2));
      if (lua_getfield(L, -4, name) == LUA_TNIL) {
        lua_pushvalue(L, -3);
        lua_setfield(L, -6, name);
      }
      lua_pop(L, 2);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* The Lua functions of module t and of its tables one level down (mp.mpi's
** glue) are the runtime's own: they travel by name (wire_names.c). */
static void own_functions(lua_State *L, int t) {
  mpb_wire_own(L, t);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    if (lua_istable(L, -1)) mpb_wire_own(L, -1);
    lua_pop(L, 1);
  }
}

int mpb_open_mp(lua_State *L) {
  mpb_get(L); /* the runtime must be started */
  lua_newtable(L);
  for (size_t i = 0; i < sizeof openers / sizeof openers[0]; i++) openers[i](L);
  name_submodules(L, lua_gettop(L));
  own_functions(L, lua_gettop(L));
  return 1;
}

int mpb_open_ad(lua_State *L) {
  lad_open(L);
  own_functions(L, lua_gettop(L));
  return 1;
}
