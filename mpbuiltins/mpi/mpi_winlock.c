/* SPDX-License-Identifier: MIT */
/*
** Passive-target locks granted by mplua, never waited for in MPI (README
** "One-sided").
**
** MPI_Win_lock waits in MPICH until the lock is granted: a rank blocked
** there sees no abort, forwards no ABORT down the fan-out tree and honours
** no Ctrl-C, so a holder that waits for a faulted rank hangs the job. Here
** MPI only gives the access: MPI_Win_lock_all(MPI_MODE_NOCHECK), which
** sends nothing and waits for nothing (mpi_win.c opens it with the
** window). Exclusion is mplua's: each rank keeps the locks of its part of a
** window (who holds one, who waits, first come first granted), and
**   - an origin sends its request (shared or exclusive) on MPB_CH_RMA and
**     waits for the grant in the one wait (abortable, interruptible, and
**     described to the deadlock detector as mpi.Win_lock(rank r, kind));
**   - the target handles requests and releases as they arrive, in the
**     arrival hook: in its waits and in the count hook while it runs Lua,
**     so a computing or blocked target grants too;
**   - Unlock completes the operations remotely (MPI_Win_flush) before it
**     sends the release: the next holder sees the data;
**   - a lock taken with MPI_MODE_NOCHECK (the user's promise that no other
**     rank holds or asks for a conflicting one) sends and waits for nothing,
**     nor does its Unlock after the flush.
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

#include <stdio.h>
#include "chan/send.h"
#include "chan/wait.h"
#include "mpi/mpi_win.h"

enum { OP_SHARED = MPB_WOP_SHARED, OP_EXCLUSIVE = MPB_WOP_EXCLUSIVE, OP_RELEASE = MPB_WOP_RELEASE,
       OP_GRANT = MPB_WOP_GRANT };

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

static void handle(mpb_state *st, mpb_win *w, int from, int op, const char *body, size_t len);

/* Send op about w to member r (its own number for w), or handle it here. */
void mpb_win_post(mpb_state *st, mpb_win *w, int r, int op, const void *body, size_t len) {
  if (r == w->rank) {
    handle(st, w, r, op, body, len);
    return;
  }
  char buf[sizeof(mpb_uhdr) + 64];
  mpb_uhdr h = {st->task, w->c->id, (uint32_t)op, 0, w->serial[r]};
  if (len > sizeof buf - sizeof h) len = sizeof buf - sizeof h;
  memcpy(buf, &h, sizeof h);
  if (len) memcpy(buf + sizeof h, body, len);
  mpb_send_quiet(st, w->c->ranks[r], MPB_CH_RMA, buf, sizeof h + len);
}

static void post(mpb_state *st, mpb_win *w, int r, int op) { mpb_win_post(st, w, r, op, NULL, 0); }

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
static void handle(mpb_state *st, mpb_win *w, int from, int op, const char *body, size_t len) {
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
    case MPB_WOP_POST:
      w->posts[from]++;
      break;
    case MPB_WOP_COMPLETE:
      w->completes[from]++;
      break;
    case MPB_WOP_LOOKUP:
    case MPB_WOP_REGION:
      mpb_windyn_handle(st, w, from, op, body, len);
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
  if (h.task == st->task && ws->halted != st->task) /* else aborted: tables cleared */
    for (mpb_win *w = ws->head; w; w = w->next)
      if (w->serial[w->rank] == h.aux && w->c->id == h.comm) {
        int from = mpb_comm_of(w->c, src);
        size_t len = m->len > sizeof h ? m->len - sizeof h : 0;
        if (from >= 0) handle(st, w, from, (int)h.flags, m->buf + sizeof h, len);
        break;
      }
  mpb_msg_free(m);
  return 1;
}

void mpb_winlock_open(mpb_state *st, mpb_wins *ws) {
  ws->next_hook = st->on_arrival;
  st->on_arrival = arrived;
  st->arrival_chans |= 1u << MPB_CH_RMA;
}

/* ------------------------------------------------------ the origin */
typedef struct { mpb_win *w; int r; } want; /* r: a target, or -1: every one */

static int granted(mpb_state *st, void *ud) {
  (void)st;
  want *x = ud;
  if (x->r >= 0) return x->w->granted[x->r];
  for (int r = 0; r < x->w->size; r++)
    if (!x->w->granted[r]) return 0;
  return 1;
}

/* Ask target r (-1: every member) for a lock of kind, then wait for the
** grants in the one wait (interruptible; described as the MPI call). */
static void acquire(lua_State *L, mpb_state *st, mpb_win *w, int r, int kind, int nocheck,
                    const char *fname) {
  int lo = r >= 0 ? r : 0, hi = r >= 0 ? r : w->size - 1;
  w->fenced = 0, w->nops = 0; /* a lock ends a fence epoch that saw no operation */
  if (nocheck) {
    for (int t = lo; t <= hi; t++) w->lock[t] = kind | MPB_LOCK_NOCHECK, w->nlocks++;
    return;
  }
  for (int t = lo; t <= hi; t++) w->granted[t] = 0;
  for (int t = lo; t <= hi; t++) post(st, w, t, kind);
  want x = {w, r};
  if (!granted(st, &x)) {
    char desc[48];
    if (r >= 0)
      snprintf(desc, sizeof desc, "mpi.Win_lock(rank %d, %s)", r,
               kind == MPB_EXCLUSIVE ? "exclusive" : "shared");
    else
      snprintf(desc, sizeof desc, "mpi.Win_lock_all");
    mpb_waitdesc d = {desc, -1, 0, 0, NULL};
    mpb_wait_described(L, st, granted, &x, &d);
  }
  for (int t = lo; t <= hi; t++) w->granted[t] = 0, w->lock[t] = kind, w->nlocks++;
}

void mpb_win_unlock_one(lua_State *L, mpb_state *st, mpb_win *w, int r, const char *fname) {
  mpb_win_complete(L, st, w, r, fname);
  int nocheck = w->lock[r] & MPB_LOCK_NOCHECK;
  w->lock[r] = MPB_UNLOCKED;
  w->nlocks--;
  if (!w->nlocks) w->all = 0;
  if (!nocheck) post(st, w, r, OP_RELEASE);
}

void mpb_winlock_clear_all(mpb_state *st) {
  mpb_wins *ws = mpb_wins_of(st);
  ws->halted = st->task;
  for (mpb_win *w = ws->head; w; w = w->next) {
    size_t n = (size_t)w->size;
    memset(w->lock, 0, n * sizeof *w->lock);
    memset(w->granted, 0, n * sizeof *w->granted);
    memset(w->mgr.held, 0, n * sizeof *w->mgr.held);
    w->nlocks = 0, w->all = 0;
    w->mgr.nshared = 0, w->mgr.excl = -1, w->mgr.nq = 0;
  }
}

/* ------------------------------------------------------------- calls */
/* A lock may begin when no fence epoch is open: none was, the last Fence
** said MODE_NOSUCCEED, or no operation followed it (MPI: a fence starts
** an epoch only if operations follow it). */
static void lockable(lua_State *L, mpb_state *st, mpb_win *w, const char *fname) {
  if (w->fenced && w->nops)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " the window is in a fence epoch (%d operation%s "
               "since the last Fence): end it with Fence(mpi.MODE_NOSUCCEED) first", fname,
               st->rank, st->size, w->nops, w->nops == 1 ? "" : "s");
  if (w->all)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " this rank holds the locks of Lock_all: Unlock_all "
               "first", fname, st->rank, st->size);
  if (w->nstarted)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " an access epoch is open (Start): Complete first",
               fname, st->rank, st->size);
}

/* The lock kind at 3: "exclusive" (default), "shared", mpi.LOCK_EXCLUSIVE,
** mpi.LOCK_SHARED. */
static int lock_kind(lua_State *L, mpb_state *st, const char *fname) {
  if (lua_isnoneornil(L, 3)) return MPB_EXCLUSIVE;
  if (lua_type(L, 3) == LUA_TNUMBER && lua_isinteger(L, 3)) {
    lua_Integer k = lua_tointeger(L, 3);
    if (k == MPI_LOCK_EXCLUSIVE) return MPB_EXCLUSIVE;
    if (k == MPI_LOCK_SHARED) return MPB_SHARED;
  } else if (lua_type(L, 3) == LUA_TSTRING) {
    const char *s = lua_tostring(L, 3);
    if (strcmp(s, "exclusive") == 0) return MPB_EXCLUSIVE;
    if (strcmp(s, "shared") == 0) return MPB_SHARED;
  }
  int t = lua_type(L, 3);
  const char *got = t == LUA_TSTRING || t == LUA_TNUMBER ? luaL_tolstring(L, 3, NULL)
                                                         : luaL_typename(L, 3);
  return luaL_error(L, "bad argument #3 to 'mp.%s' (" MPB_RANKFMT " \"exclusive\", \"shared\", "
                    "mpi.LOCK_EXCLUSIVE or mpi.LOCK_SHARED expected, got %s)", fname, st->rank,
                    st->size, got);
}

/* win:Lock(rank [, kind [, assert]]) */
static int Lock(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_lock");
  int r = mpb_win_target(L, st, w, 2, fname);
  int k = lock_kind(L, st, fname);
  int a = mpb_win_assert(L, st, 4, MPI_MODE_NOCHECK, "MODE_NOCHECK", fname);
  lockable(L, st, w, fname);
  if (w->lock[r])
    luaL_error(L, "mp.%s: " MPB_RANKFMT " this rank already holds a lock on rank %d", fname,
               st->rank, st->size, r);
  acquire(L, st, w, r, k, a != 0, fname);
  return 0;
}

/* win:Lock_all([assert]): a shared lock on every member */
static int Lock_all(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_lock_all");
  int a = mpb_win_assert(L, st, 2, MPI_MODE_NOCHECK, "MODE_NOCHECK", fname);
  lockable(L, st, w, fname);
  if (w->nlocks)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " this rank holds a lock on the window: Unlock first",
               fname, st->rank, st->size);
  acquire(L, st, w, -1, MPB_SHARED, a != 0, fname);
  w->all = 1;
  return 0;
}

/* The target at 2, which this rank holds a lock on (not Lock_all's). */
static int held(lua_State *L, mpb_state *st, mpb_win *w, const char *fname) {
  int r = mpb_win_target(L, st, w, 2, fname);
  if (!w->lock[r])
    luaL_error(L, "mp.%s: " MPB_RANKFMT " this rank holds no lock on rank %d", fname, st->rank,
               st->size, r);
  return r;
}

/* win:Unlock(rank): the requests in the one wait, MPI_Win_flush, the release. */
static int Unlock(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_unlock");
  int r = held(L, st, w, fname);
  if (w->all)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " the locks are Lock_all's: Unlock_all releases them",
               fname, st->rank, st->size);
  mpb_win_unlock_one(L, st, w, r, fname);
  if (!w->nlocks) mpb_win_unpend(L, w);
  return 0;
}

/* win:Unlock_all() */
static int Unlock_all(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_unlock_all");
  if (!w->all)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " this rank holds no Lock_all on the window", fname,
               st->rank, st->size);
  mpb_win_complete(L, st, w, -1, fname);
  for (int r = 0; r < w->size; r++) {
    if (!(w->lock[r] & MPB_LOCK_NOCHECK)) post(st, w, r, OP_RELEASE);
    w->lock[r] = MPB_UNLOCKED;
  }
  w->nlocks = 0, w->all = 0;
  mpb_win_unpend(L, w);
  return 0;
}

/* win:Flush(rank) */
static int Flush(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_flush");
  mpb_win_complete(L, st, w, held(L, st, w, fname), fname);
  return 0;
}

/* win:Flush_all() */
static int Flush_all(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_flush_all");
  if (!w->nlocks)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " this rank holds no lock on the window", fname,
               st->rank, st->size);
  mpb_win_complete(L, st, w, -1, fname);
  return 0;
}

void mpb_winlock_methods(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"Lock", Lock}, {"Unlock", Unlock}, {"Flush", Flush}, {"Lock_all", Lock_all},
      {"Unlock_all", Unlock_all}, {"Flush_all", Flush_all}, {NULL, NULL}};
  luaL_setfuncs(L, methods, 0);
}
