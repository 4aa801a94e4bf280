/*
** The builtin modules, as a host opens them: start the runtime for a state
** (chan/chan.h: mpb_start), then require "mp" (luaopen_mp) and "ad"
** (adlib/lad.h: luaopen_ad).
*/
#ifndef MPB_MP_H
#define MPB_MP_H

#include "lua.h"

int luaopen_mp(lua_State *L);

#endif
