/* SPDX-License-Identifier: MIT */
/*
** The MPI names of mp.mpi's calls written in Lua (collectives over mp's,
** v-collectives, communicators, groups, topologies) in the reports of
** waits: a rank blocked in mp's gather inside mpi.Gatherv is said to wait
** in "mpi.Gatherv(root 0)" by deadlock reports, "would wait forever" errors
** and a fault report's whereabouts, as the user wrote it.
**
** Nothing is done on the calls' path: mpi_trace.lua registers each Lua
** function under its MPI name at opening, and when a wait is described
** (rarely: rank 0 asks where everyone is only once its wait naps) the
** describer walks the waiting thread's stack for the outermost registered
** function (the call the user made; an inner one is the implementation's)
** and reads its root argument there. A raise unwinds the frames, so no
** name outlives its call.
**
** What outlives the call, and what is found inside mp's collective, is
** named by the collective itself: the Lua calls reach mp's collectives
** through closures that carry their MPI name (call(method, name), coll.h's
** mpb_coll_call), so mp's errors say "mp.mpi.Bcast: ...", a member in
** another call is named by its MPI name, and a root check left for the
** task's end waits as "mpi.Bcast(root 0)".
*/
#include <stdio.h>
#include <string.h>

#include "coll/coll.h"
#include "mpi/mpi.h"

/* The calls made over mp's collectives; their ids (numbers in headers)
** are their places here, from 1. */
#define CALL_LIST(X)                                                                     \
  X(Bcast) X(Gather) X(Scatter) X(Reduce) X(Allreduce) X(Allgather) X(Alltoall) X(Scan)  \
  X(Barrier) X(Exscan) X(Reduce_scatter_block) X(Gatherv) X(Scatterv) X(Allgatherv)      \
  X(Alltoallv) X(Reduce_scatter) X(Comm_split) X(Comm_dup)
#define NAME_OF(c) "mpi." #c,
static const char *const CALL_NAMES[] = {NULL, CALL_LIST(NAME_OF)};
#define ID_OF(c) CALL_##c,
enum { CALL_NONE_, CALL_LIST(ID_OF) NCALLS };
#define CALL_OF(c) {CALL_##c, "mpi." #c, CALL_NAMES},
static const mpb_coll_call CALLS[] = {{0, NULL, CALL_NAMES}, CALL_LIST(CALL_OF)};

/* The collective, called from C: an error it raises (luaL_error names
** the position of its caller) then starts with the call's name, never
** with a line of mp.mpi's own Lua. */
static int l_called(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* call(method, name): mp's collective method (comm:method) as a function
** f(comm, ...) that makes its collective for mp.mpi's call name */
static int l_call(lua_State *L) {
  const char *method = luaL_checkstring(L, 1), *name = luaL_checkstring(L, 2);
  size_t i = 1;
  while (i < NCALLS && strcmp(CALL_NAMES[i], name) != 0) i++;
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_COMM_METHODS);
  lua_getfield(L, -1, method);
  lua_CFunction f = lua_tocfunction(L, -1);
  if (i == NCALLS || !f) return luaL_error(L, "mp.mpi: no call %s over comm:%s", name, method);
  lua_pushnil(L); /* upvalue 1: the method form (mpb_comm_self) */
  lua_pushlightuserdata(L, (void *)&CALLS[i]);
  lua_pushcclosure(L, f, 2);
  lua_pushcclosure(L, l_called, 1);
  return 1;
}

void mpb_mpi_calls_push(lua_State *L) { lua_pushcfunction(L, l_call); }

static const char NAMES = 0; /* its address: registry key of {function = {label, root arg}} */

/* st->call_name: the outermost registered call on L's stack */
static int call_name(mpb_state *st, lua_State *L, char *buf, size_t n) {
  (void)st;
  if (!L || !lua_checkstack(L, 4)) return 0;
  int top = lua_gettop(L), found = 0;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &NAMES);
  if (!lua_istable(L, -1)) {
    lua_settop(L, top);
    return 0;
  }
  int names = lua_gettop(L);
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "f", &ar)) continue;
    if (lua_rawget(L, names) != LUA_TTABLE) { /* not one of them */
      lua_pop(L, 1);
      continue;
    }
    lua_rawgeti(L, -1, 1);
    lua_rawgeti(L, -2, 2);
    const char *label = lua_tostring(L, -2);
    int rootarg = (int)lua_tointeger(L, -1);
    if (label && rootarg > 0) {
      const char *local = lua_getlocal(L, &ar, rootarg); /* the root as the call sees it */
      lua_Integer root = local && lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
      if (local) lua_pop(L, 1);
      snprintf(buf, n, "%s(root %lld)", label, (long long)root);
      found = 1;
    } else if (label) {
      snprintf(buf, n, "%s", label);
      found = 1;
    }
    lua_settop(L, names); /* go on outwards: the outermost one is the user's call */
  }
  lua_settop(L, top);
  return found;
}

/* name(f, label[, root arg]): f is the Lua function of mp.mpi's call label
** ("mpi.Gatherv"), whose parameter number root arg (1-based) is its root */
static int l_name(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  luaL_checkstring(L, 2);
  lua_Integer rootarg = luaL_optinteger(L, 3, 0);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &NAMES);
  lua_pushvalue(L, 1);
  lua_createtable(L, 2, 0);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, rootarg);
  lua_rawseti(L, -2, 2);
  lua_rawset(L, -3);
  return 0;
}

void mpb_mpi_names_push(lua_State *L) {
  lua_newtable(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &NAMES);
  mpb_get(L)->call_name = call_name;
  lua_pushcfunction(L, l_name);
}
