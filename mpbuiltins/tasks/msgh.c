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

/* ------------------------------------------------------------ traceback */
/* luaL_traceback's text with bounded work. Its levels are lua_getstack's,
** and lua_getstack(L, n) walks n frames: luaL_traceback finds the last
** level by a binary search over the whole stack, then walks it again for
** each of the last levels it shows, which after a stack overflow (half a
** million levels) took seconds on a loaded machine. Here no level deeper
** than WALK_MAX is asked for: a deeper stack shows its first LEVELS1
** levels and says the rest was skipped. */
#define LEVELS1 10   /* levels shown first (as lauxlib) */
#define LEVELS2 11   /* levels shown last */
#define WALK_MAX 1000

/* The number of levels of L1 from level on, or WALK_MAX + 1 when there
** are more: a binary search below WALK_MAX. */
static int levels(lua_State *L1, int level) {
  lua_Debug ar;
  if (lua_getstack(L1, level + WALK_MAX, &ar)) return WALK_MAX + 1;
  int lo = 0, hi = WALK_MAX; /* level + lo exists (or lo = 0), level + hi does not */
  if (!lua_getstack(L1, level, &ar)) return 0;
  while (hi - lo > 1) {
    int m = (lo + hi) / 2;
    if (lua_getstack(L1, level + m, &ar)) lo = m;
    else hi = m;
  }
  return hi;
}

/* lauxlib's findfield: the name of the function at objidx in the table
** on top, to depth level ("mod.f"), pushed; returns 1 if found. */
static int findfield(lua_State *L, int objidx, int level) {
  if (level == 0 || !lua_istable(L, -1)) return 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      if (lua_rawequal(L, objidx, -1)) {
        lua_pop(L, 1);
        return 1;
      } else if (findfield(L, objidx, level - 1)) {
        lua_pushliteral(L, ".");
        lua_replace(L, -3);
        lua_concat(L, 3);
        return 1;
      }
    }
    lua_pop(L, 1);
  }
  return 0;
}

/* lauxlib's pushfuncname: "function 'mp.exec'", "local 'f'", "main chunk"... */
static void pushfuncname(lua_State *L, lua_State *L1, lua_Debug *ar) {
  int top = lua_gettop(L);
  lua_getinfo(L1, "f", ar);
  if (L1 != L) lua_xmove(L1, L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  luaL_checkstack(L, 6, "not enough stack");
  if (findfield(L, top + 1, 2)) {
    const char *name = lua_tostring(L, -1);
    if (strncmp(name, LUA_GNAME ".", 3) == 0) name += 3;
    lua_pushfstring(L, "function '%s'", name);
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    return;
  }
  lua_settop(L, top);
  if (*ar->namewhat != '\0') lua_pushfstring(L, "%s '%s'", ar->namewhat, ar->name);
  else if (*ar->what == 'm') lua_pushliteral(L, "main chunk");
  else if (*ar->what != 'C') lua_pushfstring(L, "function <%s:%d>", ar->short_src, ar->linedefined);
  else lua_pushliteral(L, "?");
}

static void add_level(lua_State *L, lua_State *L1, luaL_Buffer *b, lua_Debug *ar) {
  lua_getinfo(L1, "Slnt", ar);
  if (ar->currentline <= 0) lua_pushfstring(L, "\n\t%s: in ", ar->short_src);
  else lua_pushfstring(L, "\n\t%s:%d: in ", ar->short_src, ar->currentline);
  luaL_addvalue(b);
  pushfuncname(L, L1, ar);
  luaL_addvalue(b);
  if (ar->istailcall) luaL_addstring(b, "\n\t(...tail calls...)");
}

static void traceback(lua_State *L, lua_State *L1, const char *msg, int level) {
  luaL_Buffer b;
  lua_Debug ar;
  int n = levels(L1, level);
  luaL_buffinit(L, &b);
  if (msg) {
    luaL_addstring(&b, msg);
    luaL_addchar(&b, '\n');
  }
  luaL_addstring(&b, "stack traceback:");
  int first = n > LEVELS1 + LEVELS2 ? LEVELS1 : n;
  for (int i = 0; i < first && lua_getstack(L1, level + i, &ar); i++) add_level(L, L1, &b, &ar);
  if (n > WALK_MAX) {
    lua_pushfstring(L, "\n\t...\t(skipping more than %d levels)", WALK_MAX - LEVELS1);
    luaL_addvalue(&b);
  } else if (first < n) {
    lua_pushfstring(L, "\n\t...\t(skipping %d levels)", n - LEVELS1 - LEVELS2);
    luaL_addvalue(&b);
    for (int i = n - LEVELS2; i < n && lua_getstack(L1, level + i, &ar); i++)
      add_level(L, L1, &b, &ar);
  }
  luaL_pushresult(&b);
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
  traceback(L, L, msg, 1);
  return 1;
}
