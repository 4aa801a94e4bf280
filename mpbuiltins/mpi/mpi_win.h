/* SPDX-License-Identifier: MIT */
/*
** mpi/, windows: what mpi_win.c (the window and its epochs) and
** mpi_winlock.c (the locks, granted by mplua) share.
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
  int ref[3];                   /* registry: the comm, the array, pending buffers (a table) */
  int dtype, size, rank;        /* the comm's size and this rank in it */
  MPI_Datatype etype;
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
} mpb_win;

/* mpi_win.c's state (st->slot[MPB_SLOT_WIN]). */
typedef struct mpb_wins {
  mpb_win *head, *tail;
  int32_t serials;              /* windows this rank made */
  int64_t halted;               /* the task whose lock tables the abort protocol cleared */
  mpb_arrival_fn next_hook;     /* the arrival hook found at opening (posted irecvs) */
} mpb_wins;

static inline mpb_wins *mpb_wins_of(mpb_state *st) { return st->slot[MPB_SLOT_WIN]; }

#define MPB_WIN_MT "mp.mpi.Win"

/* ---------------------------------------------------------- mpi_win.c */
/* Raise "mp.fname: [rank r/n] what failed: <MPI's words>". */
void mpb_win_fail(lua_State *L, mpb_state *st, const char *fname, int rc, const char *what);
#define MPB_WIN_CHECK(call, what) do { int rc_ = (call); \
    if (rc_ != MPI_SUCCESS) mpb_win_fail(L, st, fname, rc_, what); } while (0)
/* Arguments, checked: the window at 1 (not freed), a target rank, the
** displacement of n elements at target r (bytes from its base), an array of
** the window's dtype, an op (no_op: MPI_NO_OP allowed). */
mpb_win *mpb_win_check(lua_State *L, mpb_state *st, const char *fname);
int mpb_win_target(lua_State *L, mpb_state *st, mpb_win *w, int idx, const char *fname);
int64_t mpb_win_disp(lua_State *L, mpb_state *st, mpb_win *w, int idx, int r, int64_t n,
                     const char *fname);
mpb_array *mpb_win_data(lua_State *L, mpb_state *st, mpb_win *w, int idx, const char *fname);
MPI_Op mpb_win_op(lua_State *L, mpb_state *st, const mpb_win *w, int idx, const char *fname,
                  int no_op);
/* Put, Get, Accumulate (of the arguments at 2..); ureq: the request-based
** form into *ureq. Returns the values pushed (Get: its array). */
enum { MPB_RMA_PUT, MPB_RMA_GET, MPB_RMA_ACC };
int mpb_win_rma(lua_State *L, int op, const char *fname, MPI_Request *ureq);
/* Raise unless target r is in an access epoch (a fence's or r's lock);
** counts the operation about to be issued. */
void mpb_win_epoch(lua_State *L, mpb_state *st, mpb_win *w, int r, const char *fname);
/* Keep the value at idx alive until the epoch ends / the epoch ended. */
void mpb_win_pend(lua_State *L, mpb_win *w, int idx);
void mpb_win_unpend(lua_State *L, mpb_win *w);
/* A new request slot for an operation to r (completed by wait_reqs). */
MPI_Request *mpb_win_new_req(lua_State *L, mpb_state *st, mpb_win *w, int r, const char *fname);
/* Wait in the one wait for the operations to r (-1: all). */
void mpb_win_wait_reqs(lua_State *L, mpb_state *st, mpb_win *w, int r, const char *fname);
/* Wake target r (-1: every member) if it naps: MPI_Win_flush needs its progress. */
void mpb_win_wake(mpb_state *st, mpb_win *w, int r);

/* ------------------------------------------------------ mpi_winlock.c */
/* Lock, Unlock, Flush, Lock_all, Unlock_all, Flush_all into the methods
** table on top. */
void mpb_winlock_methods(lua_State *L);
/* Give r's lock back: its operations complete here and at r, then the
** release. */
void mpb_win_unlock_one(lua_State *L, mpb_state *st, mpb_win *w, int r, const char *fname);
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

/* Win_create of the array at 1 on the communicator at 2 (nil: the world):
** pushes the window. */
int mpb_win_create(lua_State *L, mpb_mpi *M, const char *fname);

/* ---------------------------------------------------- mpi_winalloc.c */
/* mpi.Win_allocate into the mp.mpi table on top (mp.mpi.state's upvalue). */
void mpb_winalloc_funcs(lua_State *L);
/* The window w of Win_allocate is being freed: its array becomes empty,
** and every use of it an error saying so. */
void mpb_winalloc_release(lua_State *L, mpb_win *w);

/* ------------------------------------------------------ mpi_winreq.c */
/* Rput, Rget, Raccumulate into the methods table on top. */
void mpb_winreq_methods(lua_State *L);
/* Complete the users' requests still pending on w (it is being freed;
** bounded: their data has left or is coming); returns MPI's code. */
int mpb_winreq_close(mpb_win *w);

/* ---------------------------------------------------- mpi_winatomic.c */
/* Fetch_and_op, Compare_and_swap, Get_accumulate into the methods table. */
void mpb_winatomic_methods(lua_State *L);

#endif
