/* SPDX-License-Identifier: MIT */
/*
** mpi/, windows: what mpi_win.c (the window and its epochs) and
** mpi_winlock.c (the locks, granted by mplua) share.
*/
#ifndef MPB_MPI_WIN_H
#define MPB_MPI_WIN_H

#include "mpi/mpi.h"

enum { MPB_UNLOCKED, MPB_SHARED, MPB_EXCLUSIVE };

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
  int fenced;                   /* MPI_Win_fence called (a collective fact) */
  int epoch;                    /* MPI_Win_lock_all(MPI_MODE_NOCHECK) holds (locks' access) */
  int *lock;                    /* per target: MPB_UNLOCKED, SHARED, EXCLUSIVE (held) */
  int *granted;                 /* per target: its grant has come (set by the arrival hook) */
  int nlocks;
  mpb_lockmgr mgr;              /* this rank's locks, as their target */
  MPI_Request *req;             /* request-based operations under locks */
  int *reqrank, nreq, capreq;
} mpb_win;

/* mpi_win.c's state (st->slot[MPB_SLOT_WIN]). */
typedef struct mpb_wins {
  mpb_win *head, *tail;
  int32_t serials;              /* windows this rank made */
  int64_t halted;               /* the task whose lock tables the abort protocol cleared */
  mpb_arrival_fn next_hook;     /* the arrival hook found at opening (posted irecvs) */
} mpb_wins;

static inline mpb_wins *mpb_wins_of(mpb_state *st) { return st->slot[MPB_SLOT_WIN]; }

/* ------------------------------------------------------ mpi_winlock.c */
/* Allocate w's tables (size members); 0: no memory. */
int mpb_winlock_alloc(mpb_win *w);
void mpb_winlock_free(mpb_win *w);
/* Take the arrival hook: lock messages are handled as they arrive, also
** while this rank computes (the count hook polls) or waits for anything. */
void mpb_winlock_open(mpb_state *st, mpb_wins *ws);
/* Ask target r for a lock of kind and wait for the grant in the one wait
** (interruptible, described as mpi.Win_lock(rank r, kind)). */
void mpb_winlock_acquire(lua_State *L, mpb_state *st, mpb_win *w, int r, int kind,
                         const char *fname);
/* Give r's lock back (the operations under it complete remotely first). */
void mpb_winlock_release(mpb_state *st, mpb_win *w, int r);
/* Forget every lock of the task's windows, held or granted, on both sides
** (the abort protocol: every rank clears its own tables). */
void mpb_winlock_clear_all(mpb_state *st);

#endif
