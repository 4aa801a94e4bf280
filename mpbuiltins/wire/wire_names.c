/*
** wire_names.c: C functions travel by name. The sender looks a C function up
** in a reverse table (function -> name) built lazily by walking _G and
** package.loaded one level deep, cached in the registry (weak keys, so an
** unloaded module's functions can go). The receiver resolves the name in its
** own globals and modules: both sides run the same program, so the same name
** means the same function.
**
** Names: "print" (a global), "math.sin" (field of package.loaded.math or of
** the global table math), "socket.core.connect" (the module part is all
** before the last dot).
*/
#include "lauxlib.h"
#include "wire/wire_int.h"

/* Add table[k] = prefix.k for every C function field of the table at tidx
** that has no name yet (first name wins: globals, then modules). */
static void add_fields(lua_State *L, int cache, int tidx, const char *prefix) {
  lua_pushnil(L);
  while (lua_next(L, tidx)) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_iscfunction(L, -1)) {
      lua_pushvalue(L, -1);
      if (lua_rawget(L, cache) == LUA_TNIL) {
        lua_pushvalue(L, -2);
        if (prefix)
          lua_pushfstring(L, "%s.%s", prefix, lua_tostring(L, -4));
        else
          lua_pushvalue(L, -4);
        lua_rawset(L, cache);
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
}

/* Add the C functions of every table field of the table at tidx, the field
** name being the prefix ("math" -> "math.sin"). */
static void add_modules(lua_State *L, int cache, int tidx) {
  lua_pushnil(L);
  while (lua_next(L, tidx)) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE) {
      /* the key may not be converted in place: lua_next needs it */
      const char *prefix = lua_tostring(L, -2);
      add_fields(L, cache, lua_gettop(L), prefix);
    }
    lua_pop(L, 1);
  }
}

static void build_cache(lua_State *L) {
  luaL_checkstack(L, 10, NULL);
  lua_newtable(L);
  int cache = lua_gettop(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, cache);
  lua_pushglobaltable(L);
  int g = lua_gettop(L);
  add_fields(L, cache, g, NULL);
  if (lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE) == LUA_TTABLE)
    add_modules(L, cache, lua_gettop(L));
  lua_pop(L, 1);
  add_modules(L, cache, g);
  lua_pop(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, MPBW_CNAMES);
}

int mpbw_cfunc_name(lua_State *L, int idx, int rebuild) {
  idx = lua_absindex(L, idx);
  if (rebuild || lua_getfield(L, LUA_REGISTRYINDEX, MPBW_CNAMES) != LUA_TTABLE) {
    if (!rebuild) lua_pop(L, 1);
    build_cache(L);
    lua_getfield(L, LUA_REGISTRYINDEX, MPBW_CNAMES);
  }
  lua_pushvalue(L, idx);
  if (lua_rawget(L, -2) != LUA_TSTRING) {
    lua_pop(L, 2);
    return 0;
  }
  lua_remove(L, -2);
  return 1;
}

/* Push t[key[0..len)] (raw) if t (at tidx) is a table; returns its type. */
static int rawfield(lua_State *L, int tidx, const char *key, size_t len) {
  if (lua_type(L, tidx) != LUA_TTABLE) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  lua_pushlstring(L, key, len);
  return lua_rawget(L, tidx);
}

int mpbw_cfunc_resolve(lua_State *L, const char *name, size_t len) {
  size_t dot = len;
  while (dot > 0 && name[dot - 1] != '.') dot--;
  int top = lua_gettop(L);
  lua_pushglobaltable(L);
  if (dot == 0) {
    rawfield(L, top + 1, name, len);
  } else {
    /* the module: package.loaded[mod], else the global mod */
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    if (rawfield(L, top + 2, name, dot - 1) != LUA_TTABLE) {
      lua_pop(L, 1);
      rawfield(L, top + 1, name, dot - 1);
    }
    rawfield(L, lua_gettop(L), name + dot, len - dot);
  }
  if (!lua_iscfunction(L, -1)) {
    lua_settop(L, top);
    return 0;
  }
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  return 1;
}
