/* SPDX-License-Identifier: MIT */
/*
** tasks/: parallel tasks (rank 0 starts one on every rank through the
** fan-out tree; it ends when every subtree reports DONE), the worker idle
** loop, the fan-out builtins, the abort protocol, the pool, connect.
*/
#ifndef MPB_TASKS_H
#define MPB_TASKS_H

#include "chan/chan.h"

/* Task operations carried by a CMD. */
enum { MPB_TASK_CALL = 1, MPB_TASK_CHUNK, MPB_TASK_REQUIRE, MPB_TASK_CD, MPB_TASK_LINE,
       MPB_TASK_TRACE, /* registered by trace/ */
       MPB_NTASK };

/* The registry's function that reads mp.exec{f, args..., option = v, ...}:
** it returns the f and args to run (upper layers register it: mpi/ for
** the option schedule). */
#define MPB_EXEC_OPTIONS "mp.exec.options"

typedef struct mpb_fault {
  int rank;          /* -1: none; MPB_DEADLOCK: no rank faulted, they all wait;
                        MPB_INTERRUPTED: rank 0's user interrupted the task */
  char *msg;         /* malloc'ed: message and traceback */
  char *value;       /* malloc'ed: the error value, wire-encoded (NULL: not sent) */
  size_t vlen;
  int64_t job;       /* the map job that raised it (0: none) */
  int echo;          /* an echo of another rank's failure (chan/state.h: MPB_ERR_ECHO) */
} mpb_fault;
#define MPB_DEADLOCK (-2)
#define MPB_INTERRUPTED (-3)

/* What tasks/ keeps per state (in st->slot[MPB_SLOT_TASKS], made by
** mpb_open_task). */
#define MPB_SLOT_TASKS 1
typedef struct mpb_tasks {
  /* rank 0: faults of the current task */
  mpb_fault first;
  int nfault_msgs;   /* FAULT messages received for the current task */
  int nfault_expect; /* FAULT messages sent, known after the resync exchange */
  int nself;         /* ranks that faulted on their own in the last abort */
  int done_count;    /* DONE messages received for the current task */
  int64_t begun;     /* the last task this rank began (an ABORT can name a later one) */
  int64_t unrecv;    /* unreceived user messages reported by the subtree */
  struct mpb_snap *snap;  /* rank 0: the looking around (where.c) */
  char *wheres;      /* rank 0: every rank's `where` after an abort [size][MPB_WHERE_LEN] */
  int abort_fan;     /* workers: the fan-out of the tree the last ABORT came down */
  struct mpb_resync *rs; /* the resync's messages (resync.c) */
  int connect;       /* rank 0: the rank chunks are routed to (0: none) */
  lua_CFunction ops[MPB_NTASK]; /* task operations other files register */
  struct mpb_task_end *ends;    /* what upper layers end with a task (mpb_task_on_end) */
  /* Registered by an upper layer whose task objects hold what other ranks
  ** may wait for (mpi/'s window locks): runs first thing in the abort
  ** protocol, must not wait for another rank. */
  void (*on_abort)(mpb_state *st);
} mpb_tasks;
static inline mpb_tasks *mpb_tasks_of(mpb_state *st) { return st->slot[MPB_SLOT_TASKS]; }
/* Make this state's mpb_tasks (task.c; mpb_open_task calls it first). */
void mpb_tasks_open(lua_State *L, mpb_state *st);

/* lua.c's message handler: adds a traceback (luaL_traceback's, with bounded work),
** names our functions and the rank
** in Lua's own argument errors (msgh.c); passes the abort error as is. */
int mpb_msgh(lua_State *L);
/* The children of rank r in the fan-out tree: ranks first..last (none if
** first > last), and its parent. */
void mpb_children(const mpb_state *st, int r, int *first, int *last);
/* The same in a tree of fan-out fan over size ranks. */
void mpb_tree_children(int size, int fan, int r, int *first, int *last);
static inline int mpb_parent(const mpb_state *st, int r) { return (r - 1) / st->nfan; }
/* Rank 0: run a task on every rank: op with its wire-encoded arguments at
** the top n stack slots; leaves rank 0's results; raises the report on a
** fault. */
int mpb_task_run(lua_State *L, mpb_state *st, int op, int n, const char *fname);
/* The body of a task operation registered by another file (connect.c). */
void mpb_task_register(mpb_state *st, int op, lua_CFunction body);
/* What an upper layer ends with every task (mpi/: the files a task opened):
** end(L, st, 0) at the end of each rank's task body, inside the task (it
** may wait and raise: a fault of the task), and end(L, st, 1) in the abort
** protocol, once every rank is out of the task (it must not raise). Called
** in registration order. */
typedef void (*mpb_task_end_fn)(lua_State *L, mpb_state *st, int aborted);
void mpb_task_on_end(lua_State *L, mpb_state *st, mpb_task_end_fn end);
/* Run them (task.c, abort.c). */
void mpb_task_ends(lua_State *L, mpb_state *st, int aborted);
/* Workers: the idle loop; returns the exit status rank 0 sent. */
int mpb_worker_loop(lua_State *L, mpb_state *st);
/* Rank 0: tell every worker to exit (once; tasks fail after it). */
void mpb_task_exit(mpb_state *st, int status);
/* Rank 0: send every worker out of its loop with status, the job going on
** (a host's serve step, which calls the loop again). */
void mpb_task_release(mpb_state *st, int status);
/* Register the control handlers of tasks (task.c) and aborts (abort.c). */
void mpb_task_handlers(mpb_state *st);
void mpb_abort_handlers(mpb_state *st);

/* -------------------------------------------------------------- abort.c */
/* Is the value at idx the abort error (the one a stopped task raises)? */
int mpb_is_abort(lua_State *L, int idx);
/* -------------------------------------------------------------- resync.c */
/* Bring every rank back to a clean, synchronized state after a fault. */
void mpb_resync(lua_State *L, mpb_state *st);
void mpb_resync_handlers(mpb_state *st);
/* Free what the resync keeps (the tasks' __gc). */
void mpb_resync_close(mpb_tasks *tk);
/* Rank 0: record a fault (the first one wins, but a rank's own error wins
** over an echo of it); msg copied. */
void mpb_fault_record(mpb_state *st, int rank, const char *msg, size_t len);
/* The same with the error value (wire-encoded, vlen bytes, copied), the
** map job that raised it (0: none) and whether it is an echo. */
void mpb_fault_record_value(mpb_state *st, int rank, const char *msg, size_t len,
                            const char *value, size_t vlen, int64_t job, int echo);
/* Rank 0: start the abort of the current task. */
void mpb_abort_begin(mpb_state *st);
/* Rank 0: push the error of the last abort (an mp.TaskError: fields text,
** rank, message, traceback, where, job, value, deadlock; tostring: text). */
void mpb_fault_report(lua_State *L, mpb_state *st, const char *fname);

/* Wait (the one wait, hot) for a request of the control communicator / for
** n of them, n <= 2 (collectives under way together share their rounds). */
void mpb_wait_req(lua_State *L, mpb_state *st, MPI_Request *req);
void mpb_wait_reqs(lua_State *L, mpb_state *st, MPI_Request *req, int n);

/* -------------------------------------------------------------- where.c */
/* A task begins: nothing seen yet. */
void mpb_where_reset(mpb_state *st);
/* A pause begins on this rank (mpb_wait_paused): its number; rank 0 looks
** around at once to let it go when nothing else can change. */
uint32_t mpb_where_pause(mpb_state *st);
/* In the abort protocol: this rank's `where` said (rank 0: every rank's
** to come, mpb_where_put), MPB_WHERE_LEN bytes of it, rank r's at rank 0,
** and the end (texts terminated, this rank's cleared). */
#define MPB_WHERE_LEN 192
void mpb_where_begin(mpb_state *st);
void mpb_where_mine(mpb_state *st, char *out);
void mpb_where_put(mpb_state *st, int r, const char *text);
void mpb_where_end(mpb_state *st);
/* Rank 0: end the job, saying which, if a rank of this host has died (now
** and then; the abort protocol's waits, which wait for every rank, call it). */
void mpb_where_check_dead(mpb_state *st);
/* Rank 0: how many ranks its looks for dead ones have looked at (each a
** read of /proc), since the start (mp.stats().alive_looks). */
int64_t mpb_where_alive_looks(mpb_state *st);
/* Rank 0: the bytes of the last complete whereabouts round's answers (a
** head, and a count for each peer a rank talked to, per rank;
** mp.stats().where_answer_bytes). */
int64_t mpb_where_answer_bytes(mpb_state *st);
/* Rank 0: the next look in ALIVE_EVERY, not at once (a wait begins). */
void mpb_where_check_dead_later(mpb_state *st);
/* Rank 0: the gathered whereabouts as lines (ranks with the same text
** collapsed), rank skip left out. */
void mpb_where_text(mpb_state *st, int skip, char *out, size_t cap);

/* ---------------------------------------------------------------- openers */
void mpb_open_task(lua_State *L);    /* exec, include, require, cd, nfan, handout, handin */
void mpb_open_abort(lua_State *L);   /* abort, os.exit on workers */
void mpb_open_pool(lua_State *L);    /* pool, pmap */
void mpb_open_connect(lua_State *L); /* connect, disconnect */
void mpb_open_where(lua_State *L);   /* watchdog; deadlock detection */

#endif
