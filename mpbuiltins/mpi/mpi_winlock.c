/* SPDX-License-Identifier: MIT */
/*
** Passive-target locks granted by mplua, never waited for in MPI (README
** "One-sided").
**
** MPI_Win_lock waits in MPICH until the lock is granted: a rank blocked
** there sees no abort, forwards no ABORT down the fan-out tree and honours
** no Ctrl-C, so a holder that waits for a faulted rank hangs the job. Here
** MPI only gives the access: MPI_Win_lock_all(MPI_MODE_NOCHECK), which
** sends nothing and waits for nothing (mpi_win.c takes it at the first
** Lock). Exclusion is mplua's: each rank keeps the locks of its part of a
** window (who holds one, who waits, first come first granted), and
**   - an origin sends its request (shared or exclusive) on MPB_CH_RMA and
**     waits for the grant in the one wait (abortable, interruptible, and
**     described to the deadlock detector as mpi.Win_lock(rank r, kind));
**   - the target handles requests and releases as they arrive, in the
**     arrival hook: in its waits and in the count hook while it runs Lua,
**     so a computing or blocked target grants too;
**   - Unlock completes the operations remotely (MPI_Win_flush) before it
**     sends the release: the next holder sees the data.
** Lock messages are user messages: counted per pair like every other, so
** the deadlock detector sees a grant or a release in flight, and the abort
** protocol drains them. The protocol clears every lock table first thing
** (mpb_winlock_clear_all); the hook ignores what still arrives for the
** aborted task. A lock on this rank itself goes through the same tables
** without a message.
**
** A request can only reach its target's tables after the target linked
** the window: MPI_Win_create returns nowhere before every member entered
** it, and nothing polls between its return and the linking.
*/
#include <stdlib.h>
#include <string.h>

#include "chan/send.h"
#include "chan/wait.h"
#include "mpi/mpi_win.h"

enum { OP_SHARED = MPB_SHARED, OP_EXCLUSIVE = MPB_EXCLUSIVE, OP_RELEASE, OP_GRANT };

int mpb_winlock_alloc(mpb_win *w) {
  size_t n = (size_t)w->size;
  w->lock = calloc(n, sizeof *w->lock);
  w->granted = calloc(n, sizeof *w->granted);
  w->mgr.held = calloc(n, sizeof *w->mgr.held);
  w->mgr.q = calloc(n, sizeof *w->mgr.q);
  w->mgr.qkind = calloc(n, sizeof *w->mgr.qkind);
  w->mgr.excl = -1;
  return w->lock && w->granted && w->mgr.held && w->mgr.q && w->mgr.qkind;
}

void mpb_winlock_free(mpb_win *w) {
  free(w->lock);
  free(w->granted);
  free(w->mgr.held);
  free(w->mgr.q);
  free(w->mgr.qkind);
}

static void handle(mpb_state *st, mpb_win *w, int from, int op);

/* Send op about w to member r (its own number for w), or handle it here. */
static void post(mpb_state *st, mpb_win *w, int r, int op) {
  if (r == w->rank) {
    handle(st, w, r, op);
    return;
  }
  mpb_uhdr h = {st->task, w->c->id, (uint32_t)op, 0, w->serial[r]};
  mpb_send_quiet(st, w->c->ranks[r], MPB_CH_RMA, &h, sizeof h);
}

/* Grant the oldest requests while they can be: an exclusive one when
** nobody holds the lock, a shared one when nobody holds it exclusively. */
static void grant(mpb_state *st, mpb_win *w) {
  mpb_lockmgr *g = &w->mgr;
  while (g->nq > 0) {
    int o = g->q[0], k = g->qkind[0];
    if (g->excl >= 0 || (k == MPB_EXCLUSIVE && g->nshared > 0)) return;
    g->nq--;
    memmove(g->q, g->q + 1, sizeof *g->q * (size_t)g->nq);
    memmove(g->qkind, g->qkind + 1, sizeof *g->qkind * (size_t)g->nq);
    g->held[o] = k;
    if (k == MPB_EXCLUSIVE) g->excl = o;
    else g->nshared++;
    post(st, w, o, OP_GRANT);
  }
}

/* What member from says about w. Origins wait for their grant before they
** ask again, so a well-formed stream has one request per origin at most. */
static void handle(mpb_state *st, mpb_win *w, int from, int op) {
  mpb_lockmgr *g = &w->mgr;
  switch (op) {
    case OP_SHARED:
    case OP_EXCLUSIVE:
      for (int i = 0; i < g->nq; i++)
        if (g->q[i] == from) return;
      if (g->held[from] || g->nq >= w->size) return;
      g->q[g->nq] = from, g->qkind[g->nq++] = op;
      grant(st, w);
      break;
    case OP_RELEASE:
      if (g->held[from] == MPB_EXCLUSIVE) g->excl = -1;
      else if (g->held[from] == MPB_SHARED) g->nshared--;
      g->held[from] = MPB_UNLOCKED;
      grant(st, w);
      break;
    case OP_GRANT:
      w->granted[from] = 1;
      break;
    default: break;
  }
}

/* The arrival hook: lock messages here, the others to the hook found. */
static int arrived(mpb_state *st, mpb_msg *m) {
  mpb_wins *ws = mpb_wins_of(st);
  if (m->chan != MPB_CH_RMA) return ws->next_hook ? ws->next_hook(st, m) : 0;
  mpb_uhdr h = mpb_msg_hdr(m);
  int src = m->src;
  mpb_msg_free(m);
  if (h.task != st->task || ws->halted == st->task) return 1; /* aborted: tables cleared */
  for (mpb_win *w = ws->head; w; w = w->next)
    if (w->serial[w->rank] == h.aux && w->c->id == h.comm) {
      int from = w->c->of_world[src];
      if (from >= 0) handle(st, w, from, (int)h.flags);
      break;
    }
  return 1;
}

void mpb_winlock_open(mpb_state *st, mpb_wins *ws) {
  ws->next_hook = st->on_arrival;
  st->on_arrival = arrived;
}

typedef struct { mpb_win *w; int r; } want;

static int granted(mpb_state *st, void *ud) {
  (void)st;
  want *x = ud;
  return x->w->granted[x->r];
}

void mpb_winlock_acquire(lua_State *L, mpb_state *st, mpb_win *w, int r, int kind,
                         const char *fname) {
  (void)fname;
  w->granted[r] = 0;
  post(st, w, r, kind);
  want x = {w, r};
  if (!w->granted[r]) {
    char desc[48];
    snprintf(desc, sizeof desc, "mpi.Win_lock(rank %d, %s)", r,
             kind == MPB_EXCLUSIVE ? "exclusive" : "shared");
    mpb_waitdesc d = {desc, -1, 0, 0};
    mpb_wait_described(L, st, granted, &x, &d);
  }
  w->granted[r] = 0;
  w->lock[r] = kind;
  w->nlocks++;
}

void mpb_winlock_release(mpb_state *st, mpb_win *w, int r) {
  w->lock[r] = MPB_UNLOCKED;
  w->nlocks--;
  post(st, w, r, OP_RELEASE);
}

void mpb_winlock_clear_all(mpb_state *st) {
  mpb_wins *ws = mpb_wins_of(st);
  ws->halted = st->task;
  for (mpb_win *w = ws->head; w; w = w->next) {
    size_t n = (size_t)w->size;
    memset(w->lock, 0, n * sizeof *w->lock);
    memset(w->granted, 0, n * sizeof *w->granted);
    memset(w->mgr.held, 0, n * sizeof *w->mgr.held);
    w->nlocks = 0;
    w->mgr.nshared = 0, w->mgr.excl = -1, w->mgr.nq = 0;
  }
}
