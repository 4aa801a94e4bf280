/* SPDX-License-Identifier: MIT */
/*
** Tab at a readline prompt (the singleton prompt, repl.c; the front end's
** terminal, front_tty.c). Where the completions come from differs: the
** prompt's own state, or rank 0 asked over the link.
*/
#ifndef MPLUA_COMPLETE_RL_H
#define MPLUA_COMPLETE_RL_H

#include <stddef.h>

/* ask("c" .. the line up to the cursor) returns the answer of a completion
** query (show.h: "<start>\n<match>\n..."), malloc'ed, or NULL. */
typedef char *(*complete_ask)(const char *q, size_t n, size_t *alen);

/* Make Tab complete names through `ask` (no-op without readline). */
void complete_rl_init(complete_ask ask);

#endif
