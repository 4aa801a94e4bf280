/*
** mplua embedding API: the only header a C host needs.
**
** A host (the `mplua` executable, or a simulation code steered from rank 0's
** prompt) calls, on every rank:
**
**   lua_State *L = mplua_open(&argc, &argv, use_mpi);
**   if (mplua_rank(L) == 0) { ... mplua_run_all / mplua_dofile / mplua_repl ... }
**   else status = mplua_worker(L);          // idles until rank 0 closes
**   return mplua_close(L, status);          // rank 0's status ends every rank
**
** Everything runs in protected mode: functions return a status (0 = success)
** and have already reported errors on stderr (rank 0) when they return non-zero.
*/
#ifndef MPLUA_H
#define MPLUA_H

#include "lua.h"

#define MPLUA_VERSION "mplua 0.1"

/* Start MPI (unless use_mpi is 0, or MPI is already initialized by the host),
** create a Lua state with the standard libraries, `mp` and `ad` loaded as
** globals and in package.loaded. Returns NULL on failure (message on stderr). */
lua_State *mplua_open(int *argc, char ***argv, int use_mpi);

int mplua_rank(lua_State *L);
int mplua_size(lua_State *L);

/* Rank 0: read FILE here, ship its text and run it on every rank as one
** parallel task (the -j option, mp.include). Returns 0 or 1. */
int mplua_run_all(lua_State *L, const char *file);

/* Run a chunk on this rank only through the message handler that adds a
** traceback; report errors. `docall` semantics of lua.c: the function and its
** nargs arguments are on the stack; results are left (nres, LUA_MULTRET ok). */
int mplua_docall(lua_State *L, int nargs, int nres);
/* Report the error message on top of the stack (rank 0: stderr), pop it. */
void mplua_report(lua_State *L, int status);

/* Rank 0: the rank mp.connect routes prompt chunks to, or 0. */
int mplua_target(lua_State *L);
/* Rank 0: run the function on top of the stack on the connected rank (its
** print output is written here); leaves its results as strings, or an error
** message. Returns a status like mplua_docall. */
int mplua_remote(lua_State *L);

/* Rank 0: the interactive prompt, reading stdin until end of input or
** os.exit(). Returns the exit status. */
int mplua_repl(lua_State *L);

/* Workers: idle on the control channel, run the tasks rank 0 starts, return
** when rank 0 closes (with rank 0's exit status). */
int mplua_worker(lua_State *L);

/* Batch mode: any fault in a task ends the job after the report. */
void mplua_set_batch(lua_State *L, int on);

/* Rank 0, started by the front end (`mplua -n N`, which passes its address
** in the environment variable MPLUA_FRONT): route stdin, stdout and stderr
** through it. Returns 1 when attached, 0 when there is no front end, -1 when
** it cannot be reached (message on stderr). */
int mplua_attach(lua_State *L);
/* Whether rank 0's input comes from a terminal: its own, or the front end's. */
int mplua_stdin_tty(void);

/* The front end: start a job of nranks ranks running this executable with
** argv's options (MPLUA_LAUNCHER, default "mpiexec -n", is the command that
** starts it; the rank count, the program and the options follow), own the
** terminal while it runs (line editing, history, one ordered output, Ctrl-C
** as an interrupt), and return its exit status. No Lua state, no MPI here. */
int mplua_front(int nranks, int argc, char **argv);

/* Interrupt rank 0's running command on every rank, as Ctrl-C does.
** Async-signal-safe: a host's signal handler may call it. */
void mplua_interrupt(void);

/* Close the state. On rank 0, ends every worker with `status`. Finalizes MPI
** if mplua_open started it. Returns status. */
int mplua_close(lua_State *L, int status);

#ifdef MPI_VERSION
/* The communicator a compiled extension may use for its own traffic in the
** current task (a duplicate of MPI_COMM_WORLD renewed after every abort). */
MPI_Comm mplua_comm(lua_State *L);
#endif

#endif
