/* SPDX-License-Identifier: MIT */
/*
** mpi/, windows: what the window files share: mpi_win.c (the window, its
** making and freeing), mpi_winargs.c (the checks), mpi_winlock.c (the locks
** and the messages on MPB_CH_RMA), mpi_winfence.c, mpi_winpscw.c (the
** epochs built by mplua), mpi_winreq.c, mpi_winatomic.c (the operations),
** mpi_winalloc.c, mpi_winshared.c, mpi_windyn.c (the other memories).
*/
#ifndef MPB_MPI_WIN_H
#define MPB_MPI_WIN_H

#include "array/array.h"
#include "mpi/mpi.h"

enum { MPB_UNLOCKED, MPB_SHARED, MPB_EXCLUSIVE };
#define MPB_LOCK_NOCHECK 4      /* with a lock kind: taken under MPI_MODE_NOCHECK (no grant) */

/* A window's locks as their target keeps them: who holds one, who waits
** (first come, first granted: an exclusive request is never starved by
** shared ones that come after it). */
typedef struct mpb_lockmgr {
  int *held;                    /* per origin (comm rank): MPB_UNLOCKED, SHARED, EXCLUSIVE */
  int nshared, excl;            /* shared holders; the exclusive holder or -1 */
  int *q, *qkind, nq;           /* requests waiting, oldest first (one per origin at most) */
} mpb_lockmgr;

typedef struct mpb_win {
  struct mpb_win *next;         /* the task's windows, in creation order */
  MPI_Win w;
  MPI_Comm comm;                /* the members' (mpb_comm_mpi) */
  int own_comm;
  mpb_comm *c;                  /* anchored by ref[0] */
  int ref[3];                   /* registry: the comm, the array (or nil), pending buffers */
  int dtype, size, rank;        /* the comm's size and this rank in it */
  int64_t *len;                 /* every member's element count */
  int64_t *off;                 /* every member's bytes from the window's base to its data */
  int32_t *serial;              /* every member's number for this window (lock messages) */
  int esize;
  int fenced;                   /* in a fence epoch: a Fence without MODE_NOSUCCEED came last */
  int nops;                     /* operations issued since the last Fence or Lock */
  int noput;                    /* the last Fence said MODE_NOPUT: no update comes in */
  int epoch;                    /* MPI_Win_lock_all(MPI_MODE_NOCHECK) holds (every access) */
  int *lock;                    /* per target: MPB_UNLOCKED, SHARED, EXCLUSIVE (held) */
  int *granted;                 /* per target: its grant has come (set by the arrival hook) */
  int nlocks;
  int all;                      /* the locks are Lock_all's */
  mpb_lockmgr mgr;              /* this rank's locks, as their target */
  MPI_Request *req;             /* request-based operations under locks */
  int *reqrank, nreq, capreq;
  int allocated;                /* Win_allocate's: its array (ref[1]) dies with it */
  struct mpb_winreq *ureqs;     /* the users' requests (Rput, ...) still pending (mpi_winreq.c) */
  /* generalized active target (mpi_winpscw.c) */
  int *started;                 /* per target: in this rank's access epoch (Start's group) */
  int *exposed;                 /* per origin: in this rank's exposure epoch (Post's group) */
  int *posts, *completes;       /* per member: its Post / Complete messages not yet consumed */
  int nstarted, nexposed;
  int postassert;               /* the open exposure epoch's Post assert */
  /* kinds: Win_allocate_shared's segments (mpi_winshared.c), a dynamic window (mpi_windyn.c) */
  int kind;
  int xref;                     /* registry: shared: the views handed out; dynamic: attached arrays */
  struct mpb_windyn *dyn;       /* dynamic: the regions attached here, those of others looked up */
  char *segbase;                /* shared: this rank's mapping of the members' segments */
  int64_t *segat;               /* shared: each member's segment, bytes from segbase */
} mpb_win;
enum { MPB_WIN_PLAIN, MPB_WIN_SHARED, MPB_WIN_DYNAMIC };

/* mpi_win.c's state (st->slot[MPB_SLOT_WIN]). */
typedef struct mpb_wins {
  mpb_win *head, *tail;
  int32_t serials;              /* windows this rank made */
  int64_t halted;               /* the task whose lock tables the abort protocol cleared */
  mpb_arrival_fn next_hook;     /* the arrival hook found at opening (posted irecvs) */
} mpb_wins;

static inline mpb_wins *mpb_wins_of(mpb_state *st) { return st->slot[MPB_SLOT_WIN]; }

#define MPB_WIN_MT "mp.mpi.Win"

/* The prologue of a window method: its name, the state, a trace region named
** by it around the rest of the scope, the window at 1 (checked). */
#define MPB_WIN_ENTER(name)                                                             \
  const char *fname = (name);                                                           \
  mpb_state *st = mpb_get(L);                                                           \
  MPB_MPI_REGION(L, st, fname);                                                         \
  mpb_win *w = mpb_win_check(L, st, fname)

/* ------------------------------------------------- mpi_win.c, mpi_winargs.c */
/* Raise "mp.fname: [rank r/n] what failed: <MPI's words>". */
void mpb_win_fail(lua_State *L, mpb_state *st, const char *fname, int rc, const char *what);
#define MPB_WIN_CHECK(call, what) do { int rc_ = (call); \
    if (rc_ != MPI_SUCCESS) mpb_win_fail(L, st, fname, rc_, what); } while (0)
/* Arguments, checked: the window at 1 (not freed), a target rank, the
** displacement at idx of n elements of dtype at target r (the target
** displacement MPI takes: bytes from r's base, or an address in a dynamic
** window), a contiguous array, an op valid on dtype (no_op: MPI_NO_OP
** allowed). */
mpb_win *mpb_win_check(lua_State *L, mpb_state *st, const char *fname);
int mpb_win_target(lua_State *L, mpb_state *st, mpb_win *w, int idx, const char *fname);
MPI_Aint mpb_win_disp(lua_State *L, mpb_state *st, mpb_win *w, int idx, int r, int dtype,
                      int64_t n, const char *fname);
mpb_array *mpb_win_data(lua_State *L, mpb_state *st, mpb_win *w, int idx, const char *fname);
mpb_array *mpb_win_array(lua_State *L, mpb_state *st, int idx, const char *fname); /* any size */
MPI_Op mpb_win_op(lua_State *L, mpb_state *st, int dtype, int idx, const char *fname, int no_op);
/* The dtype of a result made for a count at target r, displacement at idx:
** the window's, or the attached array's in a dynamic window. */
int mpb_win_dtype(lua_State *L, mpb_state *st, mpb_win *w, int idx, int r, const char *fname);
/* Put, Get, Accumulate (of the arguments at 2..); ureq: the request-based
** form into *ureq. Returns the values pushed (Get: its array). */
enum { MPB_RMA_PUT, MPB_RMA_GET, MPB_RMA_ACC, MPB_RMA_GACC };
int mpb_win_rma(lua_State *L, int op, const char *fname, MPI_Request *ureq);
/* Raise unless target r is in an access epoch (a fence's, r's lock, or a
** Start's); counts the operation about to be issued. */
void mpb_win_epoch(lua_State *L, mpb_state *st, mpb_win *w, int r, const char *fname);
/* Raise unless this rank holds a lock on r (request-based operations). */
void mpb_win_locked(lua_State *L, mpb_state *st, mpb_win *w, int r, const char *fname);
/* Keep the value at idx alive until the epoch ends / the epoch ended. */
void mpb_win_pend(lua_State *L, mpb_win *w, int idx);
void mpb_win_unpend(lua_State *L, mpb_win *w);
/* A new request slot for an operation to r (completed by wait_reqs). */
MPI_Request *mpb_win_new_req(lua_State *L, mpb_state *st, mpb_win *w, int r, const char *fname);
/* Wait in the one wait for the operations to r (-1: all). */
void mpb_win_wait_reqs(lua_State *L, mpb_state *st, mpb_win *w, int r, const char *fname);
/* Complete the operations to r (-1: all) here and at their targets: their
** requests in the one wait, the targets woken, MPI_Win_flush(_all). */
void mpb_win_complete(lua_State *L, mpb_state *st, mpb_win *w, int r, const char *fname);
/* Wake target r (-1: every member) if it naps: MPI_Win_flush needs its progress. */
void mpb_win_wake(mpb_state *st, mpb_win *w, int r);

/* ------------------------------------------------------ mpi_winlock.c */
/* Lock, Unlock, Flush, Lock_all, Unlock_all, Flush_all into the methods
** table on top. */
void mpb_winlock_methods(lua_State *L);
/* Give r's lock back: its operations complete here and at r, then the
** release. */
void mpb_win_unlock_one(lua_State *L, mpb_state *st, mpb_win *w, int r, const char *fname);
/* Send op (with len bytes of body) about w to member r, or handle it here. */
enum { MPB_WOP_SHARED = MPB_SHARED, MPB_WOP_EXCLUSIVE = MPB_EXCLUSIVE, MPB_WOP_RELEASE,
       MPB_WOP_GRANT, MPB_WOP_POST, MPB_WOP_COMPLETE, MPB_WOP_LOOKUP, MPB_WOP_REGION };
void mpb_win_post(mpb_state *st, mpb_win *w, int r, int op, const void *body, size_t len);
/* Allocate w's tables (size members); 0: no memory. */
int mpb_winlock_alloc(mpb_win *w);
void mpb_winlock_free(mpb_win *w);
/* Take the arrival hook: lock messages are handled as they arrive, also
** while this rank computes (the count hook polls) or waits for anything. */
void mpb_winlock_open(mpb_state *st, mpb_wins *ws);
/* Forget every lock of the task's windows, held or granted, on both sides
** (the abort protocol: every rank clears its own tables). */
void mpb_winlock_clear_all(mpb_state *st);

/* ----------------------------------------------------- mpi_winfence.c */
/* Fence, Sync into the methods table on top. */
void mpb_winfence_methods(lua_State *L);
/* The assert at idx (nil: 0), checked: only the bits of allowed (names: their
** names, for the error). */
int mpb_win_assert(lua_State *L, mpb_state *st, int idx, int allowed, const char *names,
                   const char *fname);

/* What a new window is made of. */
typedef struct mpb_winspec {
  int kind, dtype;
  int64_t n;                    /* elements here */
  void *data;                   /* MPB_WIN_PLAIN: the memory */
  int aidx;                     /* its array on the stack (0: none) */
  void *shared;                 /* MPB_WIN_SHARED: where MPI's base pointer goes */
} mpb_winspec;
/* Make a window on the communicator at cidx (nil: the world; replaced by
** it): an agreement of the members, then MPI's collective; pushes it. */
int mpb_win_make(lua_State *L, mpb_mpi *M, const char *fname, int cidx, const mpb_winspec *s);

/* ---------------------------------------------------- mpi_winalloc.c */
/* mpi.Win_allocate into the mp.mpi table on top (mp.mpi.state's upvalue). */
void mpb_winalloc_funcs(lua_State *L);
/* The window w of Win_allocate (or Win_allocate_shared) is being freed: its
** arrays become empty, and every use of them an error saying so. */
void mpb_winalloc_release(lua_State *L, mpb_win *w);
/* Push a 1-D array of n elements of dtype over zeroed MPI_Alloc_mem memory
** (given back when nothing refers to it). */
mpb_array *mpb_winalloc_mem(lua_State *L, mpb_state *st, int64_t n, int dtype, const char *fname);
/* Into the mp.mpi table on top: name, the closure f (upvalue: mp.mpi's
** state), and the metatable mt with its __gc (f's memory). */
void mpb_winalloc_open(lua_State *L, const char *mt, lua_CFunction gc, lua_CFunction f,
                       const char *name);
/* The count at 1 and the dtype at 2 of Win_allocate(_shared), checked. */
int mpb_winalloc_args(lua_State *L, mpb_state *st, int64_t *n, const char *fname);

/* ------------------------------------------------------ mpi_winreq.c */
/* Rput, Rget, Raccumulate into the methods table on top. */
void mpb_winreq_methods(lua_State *L);
/* Complete the users' requests still pending on w (it is being freed;
** bounded: their data has left or is coming); returns MPI's code. */
int mpb_winreq_close(mpb_win *w);

/* ------------------------------------------------------ mpi_winpscw.c */
/* Post, Start, Complete, Wait, Test into the methods table on top. */
void mpb_winpscw_methods(lua_State *L);
/* Allocate / free w's tables (0: no memory). */
int mpb_winpscw_alloc(mpb_win *w);
void mpb_winpscw_free(mpb_win *w);

/* ---------------------------------------------------- mpi_winshared.c */
/* mpi.Win_allocate_shared into the mp.mpi table on top; Shared_query into
** the methods table (below it). */
void mpb_winshared_funcs(lua_State *L);
void mpb_winshared_methods(lua_State *L);

/* ------------------------------------------------------- mpi_windyn.c */
/* mpi.Win_create_dynamic, mpi.Get_address into the mp.mpi table on top. */
void mpb_windyn_funcs(lua_State *L);
/* Attach, Detach into the methods table on top. */
void mpb_windyn_methods(lua_State *L);
/* The address at idx of n elements of dtype attached at target r (looked
** up there the first time: a wait for its answer), checked. */
MPI_Aint mpb_windyn_disp(lua_State *L, mpb_state *st, mpb_win *w, int idx, int r, int dtype,
                         int64_t n, const char *fname);
/* The dtype of the array attached at target r at the address at idx. */
int mpb_windyn_dtype(lua_State *L, mpb_state *st, mpb_win *w, int idx, int r, const char *fname);
/* What a lookup message (op) from member from says (the arrival hook). */
void mpb_windyn_handle(mpb_state *st, mpb_win *w, int from, int op, const char *body,
                       size_t len);
void mpb_windyn_free(mpb_win *w);

/* ---------------------------------------------------- mpi_winatomic.c */
/* Fetch_and_op, Compare_and_swap, Get_accumulate into the methods table. */
void mpb_winatomic_methods(lua_State *L);
/* Get_accumulate of the arguments at 2.. (ureq: its request-based form,
** MPI_Rget_accumulate into *ureq, under a lock); pushes the result array. */
int mpb_win_getacc(lua_State *L, const char *fname, MPI_Request *ureq);

#endif
