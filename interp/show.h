/* SPDX-License-Identifier: MIT */
/*
** How rank 0 shows values and names, the same at the prompt and in a
** notebook (show.c over pretty.lua, complete.lua, display.lua and
** hostlib.lua, compiled in): tables rendered readably, completions and the
** reference of a name, a value's rich forms, and mp.display and
** mp.trace.report. None of these raises: a failure gives nothing.
*/
#ifndef MPLUA_SHOW_H
#define MPLUA_SHOW_H

#include <stddef.h>
#include "lua.h"

/* Load the helpers into L (once), and add mp.display, whose forms go to
** sink(L) with the forms table on top of the stack (NULL: print their
** text/plain). Returns 0, or -1 when they cannot be loaded. */
int show_open(lua_State *L, lua_CFunction sink);

/* Replace each plain table among the top n values by its rendering. */
void show_pretty_values(lua_State *L, int n);

/* The answers to the front end's queries (front_proto.h 'Q'), malloc'ed:
**   "c<text before the cursor>"  ->  "<start>\n<match>\n<match>..."
**     start: the byte offset in the text where the completed word begins
**   "i<cursor>;<text>"           ->  what the reference says of the name
**     at byte offset cursor ("" when nothing) */
char *show_answer(lua_State *L, const char *q, size_t n, size_t *alen);

/* link.c's query handler: show_answer, sent back as an 'A' marker. */
void show_serve_query(void *L, const char *q, size_t n);

/* Push v's rich forms (display.lua: a table mime -> text, with
** "text/plain"); v at idx. Returns 0, or -1 (nothing pushed). */
int show_forms(lua_State *L, int idx);

#endif
