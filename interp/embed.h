/* SPDX-License-Identifier: MIT */
/*
** What the library's files of interp/ (mplua.c, module.c, serve.c,
** libdir.c, harray.c: the embedding API) share among themselves. Not
** installed, not exported; the mplua program's own files use host.h.
*/
#ifndef MPLUA_EMBED_H
#define MPLUA_EMBED_H

#include "lua.h"

/* libdir.c: the directory of the Lua library (mplua/optim.lua, ...) next to the
** installed (or built) files, or NULL; MPLUA_LIBDIR first when use_env. */
const char *host_libdir(int use_env);
/* Append DIR/?.lua to package.path (once). */
void host_add_libdir(lua_State *L, int use_env);

/* lines.c: every line of stdout leaves in one write (after MPI_Init, which
** leaves stdout unbuffered); with MPLUA_LABELS=1, the lines of stdout and
** stderr start with "[rank] ". Once per process; Lua's io.stdout and
** io.stderr follow. */
void host_lines(lua_State *L, int rank);

/* module.c: open the `mp` table for a state whose runtime runs (also what
** luaopen_mp does once it has started one): mpb_open_mp plus mp.serve. */
int host_open_mp(lua_State *L);

/* mplua.c: the host steps this state with mplua_serve (serve.c says so at
** its first step): at mplua_close rank 0's workers are back in the host's
** code, not idling in mplua_worker. */
void host_note_served(lua_State *L);

/* mplua.c: os.exit on rank 0: a running task stops, every rank ends with the
** status (workers through the exit notice); `true` closes the state first. */
int host_leader_exit(lua_State *L);

#endif
