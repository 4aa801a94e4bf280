/* SPDX-License-Identifier: MIT */
/*
** The message handler of the runtime: lua.c's (a traceback), plus one
** thing. Lua's own argument checks (luaL_check*, used across the builtins)
** name a function by the field it was called through ('probe', 'get',
** '?') and not the rank; an error raised by one of mp's or ad's C
** functions gets its full name and this rank, as the runtime's own checks
** word it: "bad argument #1 to 'mp.probe' ([rank 0/4] number expected, got
** string)". Only on the error path; other errors pass unchanged.
*/
#include <string.h>

#include "tasks/tasks.h"

/* If the table at ti holds the value at fi under a string key, pushes the
** key and returns 1. */
static int key_of(lua_State *L, int ti, int fi) {
  if (lua_type(L, ti) != LUA_TTABLE) return 0;
  lua_pushnil(L);
  while (lua_next(L, ti)) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, fi)) {
      lua_pop(L, 1);
      return 1;
    }
    lua_pop(L, 1);
  }
  return 0;
}

static int ours(const char *name) {
  return strcmp(name, "mp") == 0 || strcmp(name, "ad") == 0 || strncmp(name, "mp.", 3) == 0 ||
         strncmp(name, "ad.", 3) == 0;
}

/* If a table of ours in the table at ti (by its key: "mp", "mp.mpi"...;
** methods: the __index of a metatable of ours) holds the value at fi,
** pushes its full name ("mp.mpi.File_open", "mp.mpi.File:Seek") and returns 1. */
static int in_ours(lua_State *L, int ti, int fi, int methods) {
  int top = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, ti)) {
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    if (k && ours(k) && lua_istable(L, -1)) {
      if (methods) lua_getfield(L, -1, "__index");
      else lua_pushvalue(L, -1);
      if (key_of(L, lua_gettop(L), fi)) {
        lua_pushfstring(L, "%s%s%s", k, methods ? ":" : ".", lua_tostring(L, -1));
        lua_replace(L, top + 1);
        lua_settop(L, top + 1);
        return 1;
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_settop(L, top);
  return 0;
}

/* Pushes "mp.probe", "mp.mpi.File_open" or "mp.Array:get" for the function
** at fi and returns 1, or pushes nothing and returns 0: a module of ours
** (package.loaded's "mp", "ad", "mp.mpi"), then the methods of a metatable
** of ours (the registry's "mp.Comm", "mp.mpi.File"...). */
static int full_name(lua_State *L, int fi) {
  int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, top + 1, "mp"); /* mp.Array: the array methods */
  if (lua_istable(L, top + 2) && lua_getfield(L, top + 2, "Array") && key_of(L, top + 3, fi)) {
    lua_pushfstring(L, "mp.Array:%s", lua_tostring(L, -1));
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    return 1;
  }
  lua_settop(L, top + 1);
  if (in_ours(L, top + 1, fi, 0)) {
    lua_replace(L, top + 1);
    return 1;
  }
  lua_settop(L, top);
  lua_pushvalue(L, LUA_REGISTRYINDEX);
  if (in_ours(L, top + 1, fi, 1)) {
    lua_replace(L, top + 1);
    return 1;
  }
  lua_settop(L, top);
  return 0;
}

/* msg with "to 'x' (" made "to 'mp.x' ([rank r/n] " when the function
** that raised it (level 1) is one of ours; pushes the result. */
static const char *named(lua_State *L, const char *msg) {
  const char *at = strstr(msg, "bad argument #");
  const char *to = at ? strstr(at, " to '") : NULL;
  const char *end = to ? strstr(to + 5, "' (") : NULL;
  lua_Debug ar;
  if (!end || strstr(msg, "[rank ") || !lua_getstack(L, 1, &ar) || !lua_getinfo(L, "f", &ar))
    return msg;
  int fi = lua_gettop(L);
  if (!lua_iscfunction(L, fi) || !full_name(L, fi)) return msg;
  mpb_state *st = mpb_get(L);
  luaL_Buffer b;
  const char *name = lua_tostring(L, -1);
  luaL_buffinit(L, &b);
  luaL_addlstring(&b, msg, (size_t)(to + 5 - msg));
  luaL_addstring(&b, name);
  luaL_addstring(&b, "' (");
  lua_pushfstring(L, MPB_RANKFMT " ", st->rank, st->size);
  luaL_addvalue(&b);
  luaL_addstring(&b, end + 3);
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

int mpb_msgh(lua_State *L) {
  if (mpb_is_abort(L, 1)) return 1;
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  } else if (lua_type(L, 1) == LUA_TSTRING) {
    msg = named(L, msg);
  }
  /* lua.c's traceback, so its shape is stock Lua's: after a stack overflow
  ** the first levels, "...", then the last ones (its search for the last
  ** level asks for some twenty levels, each a walk of the stack) */
  luaL_traceback(L, L, msg, 1);
  return 1;
}
