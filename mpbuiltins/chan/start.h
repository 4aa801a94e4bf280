/* SPDX-License-Identifier: MIT */
/*
** chan/, top floor: the runtime's life cycle (start.c), which names every
** floor below.
*/
#ifndef MPB_CHAN_START_H
#define MPB_CHAN_START_H

#include "chan/state.h"

/* Start/stop the runtime for L (the embedding API calls these before
** luaopen_mp). mpb_start pushes nothing; returns NULL with a message in
** err on failure (every rank fails together). */
mpb_state *mpb_start(lua_State *L, const mpb_opts *o, int *argc, char ***argv, char *err,
                     size_t errlen);
void mpb_stop(lua_State *L);

#endif
