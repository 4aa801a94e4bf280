/* SPDX-License-Identifier: MIT */
/*
** wire_names.c: C functions travel by name, and so do the Lua functions
** that the runtime's own compiled-in chunks defined (mp.mpi.Allreduce, marked
** by mpb_wire_own as the runtime made its modules). The sender looks a C function up
** in a reverse table (function -> name) built lazily by walking _G and
** package.loaded one level deep, cached in the registry (weak keys, so an
** unloaded module's functions can go). The receiver resolves the name in its
** own globals and modules: both sides run the same program, so the same name
** means the same function.
**
** Names: "print" (a global), "math.sin" (field of package.loaded.math or of
** the global table math), "socket.core.connect" (the module part is all
** before the last dot).
**
** C modules travel by name too: a table that is package.loaded[name] and
** holds C functions when the cache is built (the standard libraries, mp, ad,
** C modules required by then) arrives as the receiver's
** package.loaded[name]. So a task that captured `local mp = require "mp"`
** (stock Lua's idiom) or `local m = math` gets the receiving rank's module,
** not a copy. Modules written in Lua are copied, as any table: rank 0 may
** have required one the others never loaded (the Lua library does). Tasks call
** mpb_wire_names_check as they start, which drops the cache when modules
** were loaded since it was built; within a task, a module loaded after the
** cache was built is sent by value until then (or until a C function
** without a known name refreshes the cache).
*/
#include <string.h>

#include "lauxlib.h"
#include "wire/wire_int.h"

/* Whether the Lua function on top is the runtime's own: one the runtime
** marked as it made its modules (mpb_wire_own), before any user code ran.
** It travels by name as the module's C functions do (its upvalues are the
** module's state). Its chunk's name proves nothing: a user's chunk can be
** named "=mp.mpi" too, and a function a user put in a module is copied. */
static int module_own(lua_State *L, const char *prefix) {
  if (!prefix || lua_getfield(L, LUA_REGISTRYINDEX, MPBW_OWN) != LUA_TTABLE) {
    if (prefix) lua_pop(L, 1);
    return 0;
  }
  lua_pushvalue(L, -2);
  int own = lua_rawget(L, -2) != LUA_TNIL;
  lua_pop(L, 2);
  return own;
}

void mpb_wire_own(lua_State *L, int tidx) {
  tidx = lua_absindex(L, tidx);
  if (lua_getfield(L, LUA_REGISTRYINDEX, MPBW_OWN) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, MPBW_OWN);
  }
  lua_pushnil(L);
  while (lua_next(L, tidx)) {
    if (lua_type(L, -1) == LUA_TFUNCTION && !lua_iscfunction(L, -1)) {
      lua_pushboolean(L, 1);
      lua_rawset(L, -4);
    } else {
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
}

/* Add table[k] = prefix.k for every C function field of the table at tidx
** that has no name yet (first name wins: globals, then modules), and for
** every Lua function field that is the module's own (module_own). Returns
** how many C function fields it has. */
static int add_fields(lua_State *L, int cache, int tidx, const char *prefix) {
  int ncf = 0;
  lua_pushnil(L);
  while (lua_next(L, tidx)) {
    int cf = lua_iscfunction(L, -1);
    if (lua_type(L, -2) == LUA_TSTRING &&
        (cf || (lua_type(L, -1) == LUA_TFUNCTION && module_own(L, prefix)))) {
      ncf += cf;
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
  return ncf;
}

/* Add the C functions of every table field of the table at tidx, the field
** name being the prefix ("math" -> "math.sin"); with tables set (tidx is
** package.loaded), the C modules themselves too (tables holding C
** functions), but the globals (sent as such). */
static void add_modules(lua_State *L, int cache, int tidx, int tables) {
  lua_pushnil(L);
  while (lua_next(L, tidx)) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE) {
      /* the key may not be converted in place: lua_next needs it */
      const char *prefix = lua_tostring(L, -2);
      int ncf = add_fields(L, cache, lua_gettop(L), prefix);
      lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
      int isg = lua_rawequal(L, -1, -2);
      lua_pop(L, 1);
      if (tables && ncf > 0 && !isg) {
        lua_pushvalue(L, -1);
        if (lua_rawget(L, cache) == LUA_TNIL) {
          lua_pushvalue(L, -2);
          lua_pushvalue(L, -4);
          lua_rawset(L, cache);
        }
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
  }
}

#define NLOADED_KEY "#loaded" /* in the cache: package.loaded's size when built */

static lua_Integer nloaded(lua_State *L) {
  lua_Integer n = 0;
  if (lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE) == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      lua_pop(L, 1);
      n++;
    }
  }
  lua_pop(L, 1);
  return n;
}

void mpb_wire_names_check(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, MPBW_CNAMES) == LUA_TTABLE) {
    lua_getfield(L, -1, NLOADED_KEY);
    if (lua_tointeger(L, -1) != nloaded(L)) {
      lua_pushnil(L);
      lua_setfield(L, LUA_REGISTRYINDEX, MPBW_CNAMES);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
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
    add_modules(L, cache, lua_gettop(L), 1);
  lua_pop(L, 1);
  add_modules(L, cache, g, 0);
  lua_pop(L, 1);
  lua_pushinteger(L, nloaded(L));
  lua_setfield(L, cache, NLOADED_KEY);
  lua_setfield(L, LUA_REGISTRYINDEX, MPBW_CNAMES);
}

void mpbw_names(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, MPBW_CNAMES) != LUA_TTABLE) {
    lua_pop(L, 1);
    build_cache(L);
    lua_getfield(L, LUA_REGISTRYINDEX, MPBW_CNAMES);
  }
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
  if (lua_type(L, -1) != LUA_TFUNCTION) {
    lua_settop(L, top);
    return 0;
  }
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  return 1;
}

int mpbw_module_resolve(lua_State *L, const char *name, size_t len) {
  int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (rawfield(L, top + 1, name, len) != LUA_TTABLE) {
    lua_pushglobaltable(L);
    rawfield(L, lua_gettop(L), name, len);
  }
  if (lua_type(L, -1) != LUA_TTABLE) {
    lua_settop(L, top);
    return 0;
  }
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  return 1;
}
