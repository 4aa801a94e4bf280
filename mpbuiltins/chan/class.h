/* SPDX-License-Identifier: MIT */
/*
** chan/, ground floor: making a Lua class (class.c), the one way every
** wing makes its userdata types ("mp.Comm", "mp.Request", "mp.Halo", ...).
*/
#ifndef MPB_CHAN_CLASS_H
#define MPB_CHAN_CLASS_H

#include "lua.h"
#include "lauxlib.h"

/* Begin the class `name`: push its metatable (made, kept in the registry
** under name) and above it its methods table, holding methods (NULL: none).
** The caller may add more methods to the table on top. */
void mpb_class_begin(lua_State *L, const char *name, const luaL_Reg *methods);
/* End the class begun: its __index is the methods table (index NULL), or
** the function index with the methods table as upvalue 1 (fields first,
** then methods); the metamethods meta (NULL: none) go to the metatable.
** Pops both tables. */
void mpb_class_end(lua_State *L, lua_CFunction index, const luaL_Reg *meta);
/* Both at once, for a class with nothing else in its methods table. */
void mpb_class(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction index,
               const luaL_Reg *meta);

#endif
