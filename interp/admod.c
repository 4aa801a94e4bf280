/* SPDX-License-Identifier: MIT */
/*
** The `ad` module as any Lua loads it (lib/lua/5.4/ad.so): autodiff only,
** no MPI and no runtime started. In a state made by mplua_open, or once mp
** is loaded, `ad` is already in package.loaded and this is not called.
*/
#include "adlib/lad.h"
#include "mplua.h"

int luaopen_ad(lua_State *L) { return lad_open(L); }
