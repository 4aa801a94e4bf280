/*
** What the files of interp/ share among themselves: the host's policy that
** is not part of the embedding API (mplua.h), and rank 0's side of the front
** end (link.c). Nothing outside interp/ includes this.
*/
#ifndef MPLUA_HOST_H
#define MPLUA_HOST_H

#include <stddef.h>
#include "lua.h"

/* mplua.c: push the text of the error object at idx, as lua.c's message
** handler makes it (a string, its __tostring, or "(error object is a
** table value)"); never raises but for memory. Returns it. */
const char *host_errmsg(lua_State *L, int idx);
/* At the prompt, reports carry no program name (lua's doREPL). */
void host_set_prompt(int on);
/* A command starts: an interrupt still pending belonged to an earlier one. */
void host_interrupt_clear(void);

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

/* serve.c: mplua_serve has been called on this state. */
int host_served(lua_State *L);

/* link.c: rank 0's end of the front end (front.c). Until link_attach has
** succeeded, link_on() is 0 and the others do nothing. */
int link_on(void);
/* The front end's stdin is a terminal (the banner and -i behave as lua's). */
int link_tty(void);
/* The prompt of the next read of stdin (NULL: a plain read, e.g. io.read). */
void link_prompt(const char *prompt);
/* A complete chunk typed at the prompt, for the front end's history. */
void link_history(const char *chunk);
/* The progress line (NULL: clear it). */
void link_progress(const char *text);
/* A marker of any kind (front_proto.h) in rank 0's stream. */
void link_mark(char kind, const char *p, size_t n);
/* While rank 0 waits for an answer, the front end's queries ('Q' frames)
** go to fn, which answers each with one 'A' marker. */
typedef void (*link_queryfn)(void *ud, const char *q, size_t n);
void link_on_query(link_queryfn fn, void *ud);
/* Ask the front end for the next request with this prompt and take its
** whole answer: 'L' (*p, *n: the text, valid until the next read), 'E'
** (end of input) or 'C' (Ctrl-C). */
int link_ask(const char *prompt, const char **p, size_t *n);

#endif
