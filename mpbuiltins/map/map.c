/* SPDX-License-Identifier: MIT */
/*
** mp.mapper and mp.map_rect (seed 000, DESIGN.md section 7): a collective map
** whose results carry derivatives back to rank 0.
**
** A mapper is a handle on rank 0 and an entry {f, xr, xi, lo, nout} in the
** registry of every rank. Making one is a task that ships f and each rank's
** block of the static data (contiguous jobs, balanced) to that rank, once;
** rank 0 keeps a decoded copy too, so every rank evaluates a job from the
** same bytes. A call is a task carrying only parameters: phi (shared) with
** the command, each rank's theta block in one message; each rank evaluates
** its block (map_eval.c) and sends its records back; rank 0 turns them into
** plain vectors, or, when a parameter is an ad var, into one precomputed
** node per output on its tape (map_call.c has the call and its task, and the
** second-order and forward modes). Handles collected on rank 0 are freed on
** the other ranks with the next map task. This file: handles, their setup,
** the bookkeeping of freed ids, mp.map_rect and mp.map.
*/
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "map/map_int.h"
#include "wire/wire.h"

#include "mp_map_lua.h" /* generated from map/map.lua */

static const char DEAD_KEY[] = "mp.maps.dead";  /* rank 0: ids to free */
#define MAPS_KEY MPB_MAP_MAPS_KEY
#define CALL_KEY MPB_MAP_CALL_KEY
typedef mpb_mapper mapper;

void mpb_map_registry(lua_State *L, const char *key) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, key);
  }
}

/* Rank 0: a copy of the list of freed ids to ship with the next map task
** (or nil). They leave the list only once a task that carried them has
** succeeded (forget_dead): a task that failed may not have reached every
** rank, and freeing an id twice is harmless. */
void mpb_map_push_dead(lua_State *L) {
  mpb_map_registry(L, DEAD_KEY);
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
  if (n == 0) {
    lua_pop(L, 1);
    lua_pushnil(L);
    return;
  }
  lua_createtable(L, (int)n, 0);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, -2, i);
    lua_rawseti(L, -2, i);
  }
  lua_remove(L, -2);
}

static void unbury(lua_State *L, lua_Integer id);
void mpb_map_forget_dead(lua_State *L, int idx) {
  if (!lua_istable(L, idx)) return;
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    unbury(L, lua_tointeger(L, -1));
    lua_pop(L, 1);
  }
}

/* The call or setup in progress on rank 0 lives under CALL_KEY; this
** to-be-closed guard clears it however the C function leaves. */
static int guard_close(lua_State *L) {
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, CALL_KEY);
  return 0;
}

void mpb_map_guard(lua_State *L) {
  lua_newuserdatauv(L, 1, 0);
  if (luaL_newmetatable(L, "mp.MapGuard")) {
    lua_pushcfunction(L, guard_close);
    lua_setfield(L, -2, "__close");
  }
  lua_setmetatable(L, -2);
  lua_toclose(L, lua_gettop(L));
}

static void bury(lua_State *L, lua_Integer id) {
  mpb_map_registry(L, DEAD_KEY);
  lua_pushinteger(L, id);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
}

static void unbury(lua_State *L, lua_Integer id) {
  mpb_map_registry(L, DEAD_KEY);
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    int hit = lua_tointeger(L, -1) == id;
    lua_pop(L, 1);
    if (hit) {
      lua_rawgeti(L, -1, n);
      lua_rawseti(L, -2, i);
      lua_pushnil(L);
      lua_rawseti(L, -2, n);
      break;
    }
  }
  lua_pop(L, 1);
}

/* Every rank: forget the entries listed in the table at idx. */
void mpb_map_free_dead(lua_State *L, int idx) {
  if (!lua_istable(L, idx)) return;
  mpb_map_registry(L, MAPS_KEY);
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    lua_pushnil(L);
    lua_rawset(L, -3);
  }
  lua_pop(L, 1);
}

void mpb_map_send(lua_State *L, mpb_state *st, int dst, int first, int n) {
  mpb_wbuf *b = mpb_encode_msg(L, first, n, "mapper", 0, sizeof(mpb_uhdr));
  mpb_user_send(L, st, dst, MPB_CH_MAP, b, 1);
  lua_pop(L, 1);
}

/* -------------------------------------------------------------- setup */
/* Push {t[lo..hi]} (or nil when t is not a table). */
static void push_slice(lua_State *L, int t, int64_t lo, int64_t hi) {
  if (!lua_istable(L, t)) {
    lua_pushnil(L);
    return;
  }
  lua_createtable(L, hi >= lo ? (int)(hi - lo + 1) : 0, 0);
  for (int64_t j = lo; j <= hi; j++) {
    lua_rawgeti(L, t, j);
    lua_rawseti(L, -2, j - lo + 1);
  }
}

/* mp._map_setup(id, njobs, dead): the task that makes a mapper. Rank 0 sends
** every rank, itself last, f and its block of the data. */
static int map_setup(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_Integer id = luaL_checkinteger(L, 1);
  int64_t n = luaL_checkinteger(L, 2);
  mpb_map_free_dead(L, 3);
  if (st->rank == 0) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, CALL_KEY) != LUA_TTABLE) /* {f, xr, xi} */
      return luaL_error(L, "mp._map_setup is mp.mapper's own task");
    int src = lua_gettop(L);
    for (int k = 1; k <= st->size; k++) {
      int r = k % st->size, top = lua_gettop(L);
      int64_t lo, hi;
      mpb_map_block(n, st->size, r, &lo, &hi);
      lua_rawgeti(L, src, 1);
      if (n >= 0) {
        lua_rawgeti(L, src, 2);
        push_slice(L, top + 2, lo, hi);
        lua_replace(L, top + 2);
        lua_rawgeti(L, src, 3);
        push_slice(L, top + 3, lo, hi);
        lua_replace(L, top + 3);
      }
      mpb_map_send(L, st, r, top + 1, lua_gettop(L) - top);
      lua_settop(L, top);
    }
  }
  int64_t lo = 1, hi = 0;
  if (n >= 0) mpb_map_block(n, st->size, st->rank, &lo, &hi);
  int base = lua_gettop(L);
  mpb_push_msg(L, st, mpb_user_take(L, st, MPB_CH_MAP, 0, "mapper"), "mapper");
  lua_settop(L, base + 3);
  lua_createtable(L, 0, 5);
  lua_pushvalue(L, base + 1);
  lua_setfield(L, -2, "f");
  lua_pushvalue(L, base + 2);
  lua_setfield(L, -2, "xr");
  lua_pushvalue(L, base + 3);
  lua_setfield(L, -2, "xi");
  lua_pushinteger(L, lo);
  lua_setfield(L, -2, "lo");
  lua_newtable(L);
  lua_setfield(L, -2, "nout");
  mpb_map_registry(L, MAPS_KEY);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, id);
  return 0;
}

static int next_id(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.maps.next");
  lua_Integer id = lua_tointeger(L, -1) + 1;
  lua_pop(L, 1);
  lua_pushinteger(L, id);
  lua_setfield(L, LUA_REGISTRYINDEX, "mp.maps.next");
  return (int)id;
}

/* mp.mapper(f, x_r, x_i [, opts]) */
static int mapper_new(lua_State *L) {
  mpb_state *st = mpb_get(L);
  static const char *const want[] = {"f must be a function", "x_r must be a table of job data or nil",
                                     "x_i must be a table of job data or nil", "opts must be a table or nil"};
  for (int a = 1; a <= 4; a++) {
    int t = lua_type(L, a);
    if (a == 1 ? t != LUA_TFUNCTION : (t != LUA_TNIL && t != LUA_TNONE && t != LUA_TTABLE))
      return luaL_error(L, "bad argument #%d to 'mp.mapper' ([rank %d/%d] %s, got %s)", a,
                        st->rank, st->size, want[a - 1], luaL_typename(L, a));
  }
  lua_settop(L, 4);
  int64_t n = -1;
  if (lua_istable(L, 2)) n = (int64_t)lua_rawlen(L, 2);
  if (lua_istable(L, 3)) {
    int64_t ni = (int64_t)lua_rawlen(L, 3);
    if (n >= 0 && ni != n)
      return luaL_error(L, "bad argument #3 to 'mp.mapper' ([rank %d/%d] x_i has %I jobs, x_r has %I)",
                        st->rank, st->size, (LUAI_UACINT)ni, (LUAI_UACINT)n);
    n = ni;
  }
  int check = 0;
  if (lua_istable(L, 4)) {
    lua_getfield(L, 4, "check_data");
    check = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  mapper *m = lua_newuserdatauv(L, sizeof *m, 5); /* 5 */
  memset(m, 0, sizeof *m);
  m->njobs = n;
  m->check = check;
  /* what cannot be shipped is reported here, naming the argument and job */
  mpb_map_check_data(L, 1, 1, 0);
  for (int a = 2; a <= 3; a++) {
    mpb_map_check_data(L, a, a, check);
    if (!check) continue;
    lua_setiuservalue(L, 5, a + 2);
    lua_pushvalue(L, a);
    lua_setiuservalue(L, 5, a - 1);
  }
  lua_newtable(L);
  lua_setiuservalue(L, 5, 3);
  mpb_map_guard(L);
  lua_createtable(L, 3, 0);
  for (int i = 1; i <= 3; i++) {
    lua_pushvalue(L, i);
    lua_rawseti(L, -2, i);
  }
  lua_setfield(L, LUA_REGISTRYINDEX, CALL_KEY);
  m->id = next_id(L);
  mpb_map_push_dead(L); /* kept below the task's arguments */
  int dead = lua_gettop(L);
  lua_pushcfunction(L, map_setup); /* shipped by name (mp._map_setup) */
  lua_pushinteger(L, m->id);
  lua_pushinteger(L, n);
  lua_pushvalue(L, dead);
  bury(L, m->id); /* until the task succeeds: a failed setup leaves debris */
  mpb_task_run(L, st, MPB_TASK_CALL, 4, "mapper");
  lua_settop(L, dead);
  mpb_map_forget_dead(L, dead);
  unbury(L, m->id); /* made it: not debris after all */
  lua_pushvalue(L, 5);
  luaL_setmetatable(L, MPB_MAPPER_MT);
  return 1;
}

/* --------------------------------------------------------------- calls */
void *mpb_map_buf(lua_State *L, size_t bytes) {
  return lua_newuserdatauv(L, bytes ? bytes : 1, 0);
}

/* Push a new 1-d array of n elements (copied from x unless NULL). */
mpb_array *mpb_map_vec(lua_State *L, int dtype, const void *x, int64_t n) {
  mpb_array *a = mpb_array_new(L, dtype, 1, &n);
  if (n && x) memcpy(a->data, x, (size_t)n * mpb_dtype_size(dtype));
  return a;
}

/* An array from rank r, checked. */
mpb_array *mpb_map_array(lua_State *L, int idx, int dtype, int r) {
  mpb_array *a = mpb_array_test(L, idx);
  if (!a || a->dtype != dtype || a->ndim != 1)
    luaL_error(L, "mp.mapper: [rank %d/%d] malformed message from rank %d", mpb_get(L)->rank,
               mpb_get(L)->size, r);
  return a;
}

mpb_mapper *mpb_map_check(lua_State *L, int idx) {
  mapper *m = luaL_checkudata(L, idx, MPB_MAPPER_MT);
  if (m->freed) luaL_error(L, "mp.mapper: this mapper was freed");
  return m;
}

/* ------------------------------------------------------------ handles */
static int mapper_free(lua_State *L) {
  mapper *m = luaL_checkudata(L, 1, MPB_MAPPER_MT);
  if (!m->freed) bury(L, m->id);
  m->freed = 1;
  return 0;
}

static int mapper_len(lua_State *L) {
  mapper *m = mpb_map_check(L, 1);
  if (m->njobs < 0) lua_pushnil(L);
  else lua_pushinteger(L, m->njobs);
  return 1;
}

static int mapper_tostring(lua_State *L) {
  mapper *m = luaL_checkudata(L, 1, MPB_MAPPER_MT);
  if (m->freed) lua_pushliteral(L, "mp.mapper (freed)");
  else if (m->njobs < 0) lua_pushliteral(L, "mp.mapper (jobs set by the first call)");
  else lua_pushfstring(L, "mp.mapper (%I jobs)", (LUAI_UACINT)m->njobs);
  return 1;
}

void mpb_open_map(lua_State *L) {
  static const luaL_Reg meta[] = {{"__call", mpb_mapper_call}, {"__gc", mapper_free},
                                  {"__close", mapper_free}, {"__len", mapper_len},
                                  {"__tostring", mapper_tostring}, {NULL, NULL}};
  luaL_newmetatable(L, MPB_MAPPER_MT);
  luaL_setfuncs(L, meta, 0);
  lua_newtable(L);
  lua_pushcfunction(L, mapper_free);
  lua_setfield(L, -2, "free");
  lua_pushcfunction(L, mpb_mapper_jvp);
  lua_setfield(L, -2, "jvp");
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  static const luaL_Reg funcs[] = {{"mapper", mapper_new}, {"_map_setup", map_setup},
                                   {"_map_run", mpb_map_run}, {NULL, NULL}};
  luaL_setfuncs(L, funcs, 0);
  /* mp.map_rect and the ragged mp.map, over mp.mapper (map/map.lua) */
  if (luaL_loadbufferx(L, mp_map_lua, mp_map_lua_len, "=mp.map", "t") != LUA_OK) lua_error(L);
  lua_pushcfunction(L, mapper_new);
  mpb_state *st = mpb_get(L);
  lua_pushfstring(L, MPB_RANKFMT, st->rank, st->size);
  lua_call(L, 2, 2);
  lua_setfield(L, -3, "map");
  lua_setfield(L, -2, "map_rect");
}
