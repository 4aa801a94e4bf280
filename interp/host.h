/* SPDX-License-Identifier: MIT */
/*
** What the files of the mplua program share among themselves (main.c, the
** prompt in repl.c, rank 0's end of the front end in link.c, the front end
** in front*.c): the prompt, the terminal and line editing, which live in
** the program, never in the library (mplua.h is all it uses of that).
*/
#ifndef MPLUA_HOST_H
#define MPLUA_HOST_H

#include <stddef.h>
#include "lua.h"

/* repl.c: rank 0's interactive prompt, reading stdin until end of input or
** os.exit(). Returns the exit status. */
int mplua_repl(lua_State *L);

/* front.c: the front end. Start a job of nranks ranks running this
** executable with argv's options (MPLUA_LAUNCHER, default "mpiexec -n", is
** the command that starts it; the rank count, the program and the options
** follow), own the terminal while it runs (line editing, history, one
** ordered output, Ctrl-C as an interrupt), and return its exit status. No
** Lua state, no MPI here. */
int mplua_front(int nranks, int argc, char **argv);

/* explore.c: mplua --explore SEEDS [-n RANKS] SCRIPT [ARGS...] (argv[0..argc)
** the script and its arguments), scripts/explore.lua compiled in; prog is
** this program (it starts the jobs). Returns the exit status (the script
** ends the process itself with its own). */
int mplua_explore(lua_State *L, const char *prog, int seeds, int nranks, char **argv, int argc);

/* link.c: rank 0, started by the front end (`mplua -n N`, which passes its
** address in the environment variable MPLUA_FRONT): route stdin, stdout and
** stderr through it, and the progress line. Returns 1 when attached, 0 when
** there is no front end, -1 when it cannot be reached (message on stderr). */
int mplua_attach(lua_State *L);
/* Whether rank 0's input comes from a terminal: its own, or the front end's. */
int mplua_stdin_tty(void);
/* Give SIGHUP back the disposition the program started with (hangup.c). */
void host_restore_hangup(void);

/* Until mplua_attach has succeeded, link_on() is 0 and the others do nothing. */
int link_on(void);
/* The prompt of the next read of stdin (NULL: a plain read, e.g. io.read). */
void link_prompt(const char *prompt);
/* The front end has sent an interrupt for the last request, whose answer
** starts the command now beginning (Ctrl-C right after Enter). */
int link_interrupted(void);
/* A complete chunk typed at the prompt, for the front end's history. */
void link_history(const char *chunk);
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
