/* SPDX-License-Identifier: MIT */
/*
** A host's memory as mp.Array views (mplua.h: mplua_array). The view's
** owner, kept alive as its user value, is a light userdata: nothing in Lua
** frees the buffer, which stays the host's. The shape is checked before any
** Lua call that could raise, so a bad call pushes nothing.
*/
#include "lauxlib.h"
#include "array/array.h"
#include "mplua.h"

static int push_view(lua_State *L) {
  void *data = lua_touserdata(L, 1);
  const int64_t *dims = lua_touserdata(L, 2);
  int dtype = (int)lua_tointeger(L, 3), ndim = (int)lua_tointeger(L, 4);
  lua_pushlightuserdata(L, data);
  mpb_array_view(L, -1, data, dtype, ndim, dims);
  return 1;
}

int mplua_array(lua_State *L, const char *name, void *data, int dtype, int ndim,
                const int64_t *dims) {
  if (!data || !dims || mpb_dtype_size(dtype) == 0 || ndim < 1 || ndim > MPB_ARRAY_MAXDIM)
    return -1;
  for (int i = 0; i < ndim; i++)
    if (dims[i] < 0) return -1;
  lua_pushcfunction(L, push_view);
  lua_pushlightuserdata(L, data);
  lua_pushlightuserdata(L, (void *)dims);
  lua_pushinteger(L, dtype);
  lua_pushinteger(L, ndim);
  if (lua_pcall(L, 4, 1, 0) != LUA_OK) {
    lua_pop(L, 1);
    return -1;
  }
  if (name) lua_setglobal(L, name);
  return 0;
}
