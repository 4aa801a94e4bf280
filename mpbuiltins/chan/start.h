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
/* The end of this process with status (os.exit, the program's end): the
** runtime stops, MPI finalized even where the host started it, or, across
** hosts where MPI_Finalize can hang, a last barrier and _exit (leave.c).
** close: lua_close first (finalizers run; the runtime's own stops it). */
_Noreturn void mpb_end_process(lua_State *L, int status, int close);

#endif
