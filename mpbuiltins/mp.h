/* SPDX-License-Identifier: MIT */
/*
** The builtin modules, as a host opens them: start the runtime for a state
** (chan/chan.h: mpb_start), then open "mp" (mpb_open_mp, a lua_CFunction
** that pushes the module table) and "ad" (mpb_open_ad: adlib/lad.h's
** lad_open, its Lua functions marked as the runtime's own). The
** host's own luaopen_mp (interp/) decides how a state without a runtime
** starts one.
*/
#ifndef MPB_MP_H
#define MPB_MP_H

#include "lua.h"

int mpb_open_mp(lua_State *L);
int mpb_open_ad(lua_State *L);

#endif
