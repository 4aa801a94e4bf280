/*
** mplua embedding API: the only header a C host needs.
**
** A host (the `mplua` executable, or a simulation code steered from rank 0's
** prompt) calls, on every rank:
**
**   lua_State *L = mplua_open(&argc, &argv, use_mpi);   // or mplua_open_config
**   if (mplua_rank(L) == 0) { ... mplua_run_all / mplua_dofile / mplua_repl ... }
**   else status = mplua_worker(L);          // idles until rank 0 closes
**   return mplua_close(L, status);          // rank 0's status ends every rank
**
** A simulation code steps the prompt from its own loop instead (see
** mplua_serve), and lends its arrays (mplua_array).
**
** Everything runs in protected mode: functions return a status (0 = success)
** and have already reported errors on stderr (rank 0) when they return non-zero.
**
** Ownership: the lua_State belongs to the host from mplua_open* until
** mplua_close; strings passed in are copied before the call returns; memory
** lent with mplua_array stays the host's (mplua never frees it).
*/
#ifndef MPLUA_H
#define MPLUA_H

#include <stdint.h>
#include <mpi.h>
#include "lua.h"

#define MPLUA_VERSION "mplua 0.1"
#define MPLUA_VERSION_NUM 100 /* major * 10000 + minor * 100 + patch */

/* What mplua may change in the process (mplua_config.out): every bit set is
** a change it does not make. MPLUA_OUT_ALL: opening and closing a state then
** changes nothing outside the state (signal dispositions, timers, malloc's
** settings, stdout's buffering, the state's allocator, the environment read). */
#define MPLUA_OUT_SIGNALS 0x01u /* no handler for SIGINT/SIGUSR1 (rank 0 is interrupted
                                   through mplua_interrupt) or SIGALRM; workers do not
                                   ignore SIGINT */
#define MPLUA_OUT_TIMER 0x02u   /* no ITIMER_REAL: long Lua loops in a task are polled by
                                   a count hook instead */
#define MPLUA_OUT_ALLOC 0x04u   /* the state keeps luaL_newstate's allocator (received
                                   long strings are then copied once) */
#define MPLUA_OUT_MALLOPT 0x08u /* malloc's mmap/trim thresholds are left alone */
#define MPLUA_OUT_ENV 0x10u     /* LUA_PATH, LUA_CPATH (and _5_4) and MPLUA_LIBDIR are
                                   not read (lua -E) */
#define MPLUA_OUT_STDIO 0x20u   /* stdout's buffering is left alone (mplua makes it
                                   line-buffered: ranks share mpiexec's pipe) */
#define MPLUA_OUT_EXIT 0x40u    /* os.exit raises an error instead of ending the job
                                   (and the process) */
#define MPLUA_OUT_ALL 0x7fu

typedef struct mplua_config {
  int use_mpi;          /* 0: no MPI at all (mp.size == 1). Default 1 */
  MPI_Comm comm;        /* the ranks mplua runs on: any intra-communicator of the host;
                           MPI_COMM_NULL (the default) is MPI_COMM_WORLD. Every rank
                           of it calls mplua_open_config; rank 0 of it leads. The
                           runtime duplicates it; the host keeps it (and frees it
                           after mplua_close). */
  unsigned out;         /* MPLUA_OUT_* bits. Default 0 (the mplua executable's) */
  const char *progname; /* the name in messages (copied). NULL: argv[0]'s base name */
} mplua_config;

/* The defaults. */
void mplua_config_init(mplua_config *c);

/* Start MPI unless c->use_mpi is 0 or the host has initialized it (then
** mplua never finalizes it), create a Lua state with the standard libraries,
** `mp` and `ad` loaded as globals and in package.loaded, and the Lua library
** (mplua.optim, mplua.hmc, ...) on package.path. Collective over c->comm. argc/argv may be
** NULL. Returns NULL on failure (message on stderr; every rank fails). */
lua_State *mplua_open_config(int *argc, char ***argv, const mplua_config *c);
/* mplua_open_config with the defaults and use_mpi. */
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
** if mplua_open started it (never an MPI the host initialized). Returns status. */
int mplua_close(lua_State *L, int status);

/* The communicator a compiled extension may use for its own traffic in the
** current task (a duplicate of the base communicator renewed after every
** abort). Owned by mplua: do not free it. */
MPI_Comm mplua_comm(lua_State *L);

/* The `mp` module for any Lua state (lib/lua/5.4/mp.so for stock lua5.4):
** in a state without a runtime, starts one with the defaults first (MPI,
** MPI_COMM_WORLD). luaopen_mp_auto (require "mp.auto", lua5.4 -l mp.auto):
** the same, then on workers serve rank 0's tasks and end the process when
** rank 0's program ends. */
int luaopen_mp(lua_State *L);
int luaopen_mp_auto(lua_State *L);

/* ------------------------------------------------------ a host's memory */
/* Element types of mplua_array (those of mp.Array). */
enum { MPLUA_F64 = 0, MPLUA_F32, MPLUA_I64, MPLUA_I32, MPLUA_U8, MPLUA_C64, MPLUA_C128 };

/* Push an mp.Array view on the host's buffer `data` (dtype, ndim 1..8 dims,
** column-major: dims[0] varies fastest) without copying it, and, if name is
** not NULL, set it as the global `name` too (then pop it: nothing is left on
** the stack). The memory stays the host's: mplua never frees or reallocates
** it, and the host keeps it valid and in place until mplua_close (Lua code
** may keep the view, or views of parts of it, in any variable). Writes from
** Lua land in the host's buffer; what is sent to other ranks is copied
** there. Returns 0, or -1 (bad dtype, shape or NULL data: nothing pushed). */
int mplua_array(lua_State *L, const char *name, void *data, int dtype, int ndim,
                const int64_t *dims);

/* ------------------------------------------------------ a host's loop */
/* One step of the prompt and the tasks, called by the host on every rank of
** the communicator at the same point of its loop (once per iteration).
** Rank 0 reads what is typed (stdin, never blocking on it: timeout seconds
** at most, 0: just look) and runs every complete chunk as the prompt would,
** one per step; tasks it starts run on the workers inside their mplua_serve
** call of the same step. Returns 0 while the session goes on, 1 once rank 0's
** input has ended (on every rank, at the same step), -1 on a failure of MPI.
** A fault or Ctrl-C in a typed command ends that command only.
** Collective over the base communicator, but not at every call: the ranks
** meet (complete a non-blocking broadcast rank 0 started at the previous
** meeting) only at decision steps they all know in advance. Between them a
** call only counts down. While the host is idle (timeout 0, nothing typed)
** the decision steps space out to about a millisecond of the host's steps
** (1024 steps at most);
** after a command, and while the host passes a timeout > 0, every step is one
** (and only decision steps read stdin or wait for it). A command typed at an
** idle prompt starts within about two such windows (or, for a host slower
** than that, one or two of its steps). */
int mplua_serve(lua_State *L, double timeout);

/* ------------------------------------------------------ C modules */
/* A Lua module written in C (loaded with require in mplua, in a host, or in
** a stock lua5.4 next to mp.so, which holds its own copy of the runtime)
** reaches the runtime through this table instead of linking libmplua: it
** includes this header, and needs no library but Lua's and MPI's. The table
** is set when `mp` is opened in the state and lives as long as the process;
** its functions are the ones declared above. */
typedef struct mplua_capi {
  int version; /* MPLUA_VERSION_NUM of the runtime */
  int (*array)(lua_State *L, const char *name, void *data, int dtype, int ndim,
               const int64_t *dims);
  MPI_Comm (*comm)(lua_State *L);
  int (*rank)(lua_State *L);
  int (*size)(lua_State *L);
} mplua_capi;

#define MPLUA_CAPI_KEY "mplua.capi" /* a light userdata in the registry */

/* The runtime's table, or NULL when `mp` is not loaded in this state. */
static inline const mplua_capi *mplua_capi_get(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, MPLUA_CAPI_KEY);
  const mplua_capi *api = (const mplua_capi *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  return api;
}

#endif
