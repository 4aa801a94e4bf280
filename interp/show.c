/* SPDX-License-Identifier: MIT */
/*
** Loads the program's Lua helpers (show.h) into a state, once, in a table
** kept in the registry. Each chunk gets, as its argument, the library
** functions it uses, taken now from package.loaded and the globals, so a
** session that changes its globals (tostring = nil) does not change how
** values are shown. Every call into them is protected.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "lualib.h"
#include "host.h"
#include "show.h"

#include "complete_lua.h"   /* generated from interp/complete.lua */
#include "display_lua.h"    /* interp/display.lua */
#include "hostlib_lua.h"    /* interp/hostlib.lua */
#include "pretty_lua.h"     /* interp/pretty.lua */
#include "mplua_refs.h"     /* the reference tables of the mp, array, layout and ad READMEs */

static const char SHOW_KEY = 0; /* its address keys the helpers' table */

/* Run an embedded chunk with the lib table (at index lib) as its argument;
** leaves its first result. */
static void run_chunk(lua_State *L, const char *code, size_t len, const char *name, int lib) {
  if (luaL_loadbufferx(L, code, len, name, "t") != LUA_OK)
    lua_error(L);
  lua_pushvalue(L, lib);
  lua_call(L, 1, 1);
}

static int load_all(lua_State *L) {
  static const char *const mods[] = {"string", "table", "math", "debug", "utf8", "os", NULL};
  static const char *const base[] = {"type", "tostring", "tonumber", "next", "rawget",
                                     "rawlen", "pcall", "ipairs", "pairs", "select", "error",
                                     "setmetatable", "require", NULL};
  lua_CFunction sink = (lua_CFunction)lua_touserdata(L, 1);
  int lib;
  lua_newtable(L);
  lib = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  for (int i = 0; mods[i] != NULL; i++) {
    lua_getfield(L, -1, mods[i]);
    lua_setfield(L, lib, mods[i]);
  }
  lua_pop(L, 1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  for (int i = 0; base[i] != NULL; i++) {
    lua_getfield(L, -1, base[i]);
    lua_setfield(L, lib, base[i]);
  }
  lua_setfield(L, lib, "G");
  lua_pushlstring(L, mplua_refs, mplua_refs_len);
  lua_setfield(L, lib, "refs");
  run_chunk(L, pretty_lua, pretty_lua_len, "=pretty", lib);
  lua_setfield(L, lib, "pretty");
  run_chunk(L, display_lua, display_lua_len, "=display", lib);
  lua_setfield(L, lib, "forms");
  run_chunk(L, complete_lua, complete_lua_len, "=complete", lib);
  lua_getfield(L, -1, "complete");
  lua_setfield(L, lib, "complete");
  lua_getfield(L, -1, "inspect");
  lua_setfield(L, lib, "inspect");
  lua_pop(L, 1);
  if (luaL_loadbufferx(L, hostlib_lua, hostlib_lua_len, "=hostlib", "t") != LUA_OK)
    lua_error(L);
  lua_pushvalue(L, lib);
  lua_pushcfunction(L, sink);
  lua_call(L, 2, 0);
  lua_pushvalue(L, lib);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &SHOW_KEY);
  return 0;
}

/* The prompt's sink: the forms' text, printed. */
static int print_text(lua_State *L) {
  lua_getfield(L, 1, "text/plain");
  lua_getglobal(L, "print");
  lua_insert(L, -2);
  lua_call(L, 1, 0);
  return 0;
}

int show_open(lua_State *L, lua_CFunction sink) {
  int ok;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &SHOW_KEY);
  ok = lua_istable(L, -1);
  lua_pop(L, 1);
  if (ok)
    return 0;
  lua_pushcfunction(L, load_all);
  lua_pushlightuserdata(L, (void *)(sink != NULL ? sink : print_text));
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    fprintf(stderr, "mplua: cannot load the prompt's helpers: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return -1;
  }
  return 0;
}

/* Push helper `name`; 0 when there is none (nothing pushed). */
static int helper(lua_State *L, const char *name) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &SHOW_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    return 0;
  }
  lua_getfield(L, -1, name);
  lua_remove(L, -2);
  if (lua_isfunction(L, -1))
    return 1;
  lua_pop(L, 1);
  return 0;
}

void show_pretty_values(lua_State *L, int n) {
  int top = lua_gettop(L);
  for (int i = top - n + 1; i <= top; i++) {
    if (lua_type(L, i) != LUA_TTABLE || luaL_getmetafield(L, i, "__tostring") != LUA_TNIL) {
      if (lua_gettop(L) > top)
        lua_settop(L, top); /* the __tostring field */
      continue;
    }
    if (!helper(L, "pretty"))
      return;
    lua_pushvalue(L, i);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
      lua_replace(L, i);
    else
      lua_pop(L, 1);
  }
}

int show_forms(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (!helper(L, "forms"))
    return -1;
  lua_pushvalue(L, idx);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
    lua_pop(L, 1);
    return -1;
  }
  return 0;
}

/* The answer of complete or inspect, built in Lua (protected by the caller). */
static int answer(lua_State *L) {
  size_t n;
  const char *q = lua_tolstring(L, 1, &n);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  if (q[0] == 'c' && helper(L, "complete")) {
    lua_pushlstring(L, q + 1, n - 1);
    lua_call(L, 1, 2); /* start (1-based), matches */
    lua_pushfstring(L, "%d", (int)lua_tointeger(L, -2) - 1);
    luaL_addvalue(&b);
    for (lua_Integer i = 1; lua_geti(L, -1, i) == LUA_TSTRING; i++) {
      luaL_addchar(&b, '\n');
      luaL_addvalue(&b);
    }
    lua_pop(L, 1);
  }
  else if (q[0] == 'i' && helper(L, "inspect")) {
    char *semi;
    long cursor = strtol(q + 1, &semi, 10);
    if (*semi != ';')
      return 0;
    lua_pushlstring(L, semi + 1, n - (size_t)(semi + 1 - q));
    lua_pushinteger(L, cursor);
    lua_call(L, 2, 1);
    if (lua_isstring(L, -1))
      luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return 1;
}

char *show_answer(lua_State *L, const char *q, size_t n, size_t *alen) {
  char *out = NULL;
  int top = lua_gettop(L);
  *alen = 0;
  if (n == 0)
    return NULL;
  lua_pushcfunction(L, answer);
  lua_pushlstring(L, q, n);
  if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) {
    const char *s = lua_tolstring(L, -1, alen);
    if ((out = malloc(*alen + 1)) != NULL)
      memcpy(out, s, *alen + 1);
    else
      *alen = 0;
  }
  lua_settop(L, top);
  return out;
}

void show_serve_query(void *ud, const char *q, size_t n) {
  size_t alen;
  char *a = show_answer((lua_State *)ud, q, n, &alen);
  link_mark('A', a != NULL ? a : "", alen);
  free(a);
}
