/* SPDX-License-Identifier: MIT */
/*
** Lua classes: a metatable, a table of methods and the __index that reaches
** them (lauxlib's luaL_newmetatable and luaL_setfuncs, in the one order
** every class of mp uses).
*/
#include "chan/class.h"

void mpb_class_begin(lua_State *L, const char *name, const luaL_Reg *methods) {
  luaL_newmetatable(L, name);
  lua_newtable(L);
  if (methods) luaL_setfuncs(L, methods, 0);
}

void mpb_class_end(lua_State *L, lua_CFunction index, const luaL_Reg *meta) {
  if (index) lua_pushcclosure(L, index, 1);
  lua_setfield(L, -2, "__index");
  if (meta) luaL_setfuncs(L, meta, 0);
  lua_pop(L, 1);
}

void mpb_class(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction index,
               const luaL_Reg *meta) {
  mpb_class_begin(L, name, methods);
  mpb_class_end(L, index, meta);
}
