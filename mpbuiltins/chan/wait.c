/* SPDX-License-Identifier: MIT */
/*
** The one wait (DESIGN.md section 4), and taking a user message from the
** mailbox, waiting for it. Every blocking operation on a user
** path waits here: it polls both communicators (receiving, progressing
** sends and parts), checks its condition, and backs off: it spins ~50 us
** (latency close to raw MPI), then yields the core until ~2 ms, then naps
** (wake.c), so idle and oversubscribed ranks stay cheap. On a host with more
** ranks than cores it naps at once: the rank computing beside it gets the
** core, and the sender's wake-up brings this one back.
**
** How long a nap may last depends on who can end it: control messages and
** messages from ranks of this host come with a wake-up, so waits for those
** nap long; a wait that a rank on another host could end with a user
** message, or that needs MPI's own progress (a send or a part in flight),
** naps at most NAP_SHORT.
*/
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "chan/arrive.h"
#include "chan/hook.h"
#include "chan/mailbox.h"
#include "chan/trace.h"
#include "chan/wait.h"
#include "chan/wake.h"

/* Probing a second communicator costs as much as the first (ch4:ucx), so a
** wait for user messages looks at the control channel every CTL_EVERY polls
** only: aborts are not latency-critical at the microsecond scale. */
#define CTL_EVERY 16
#define SPIN_SEC 50e-6
#define YIELD_SEC 2e-3
#define NAP_FIRST_NS 1000L
#define NAP_SHORT_NS 1000000L   /* 1 ms */
#define NAP_LONG_NS 200000000L  /* 0.2 s: only a lost wake-up waits this long */
/* The first nap of a wait that a wake-up ends (see back_off). */
#define NAP_WOKEN_FIRST_NS 1000000L /* 1 ms */

static long nap_cap(const mpb_state *st, int flags) {
  if (st->sends || st->csends || st->arrivals) return NAP_SHORT_NS;
  if (flags & MPB_WAIT_CTL) return NAP_LONG_NS;
  return mpb_all_local(st) ? NAP_LONG_NS : NAP_SHORT_NS;
}

/* The first polls after a quiet spell begins just poll again: no clock
** read, no call (the spin's latency is the round trip's). A message being
** received moves only while this rank drives MPI (UCX's single-copy reads
** run in the receiver's progress calls): it spins then, oversubscribed or
** not. */
static inline int spinning(const mpb_state *st, int over, unsigned *spins) {
  return (!over || st->arrivals) && ++*spins < 64;
}

/* What a nap checks once more after saying it naps: what has arrived, then
** the wait's condition. */
typedef struct { mpb_ready ready; void *ud; } look_arg;

/* A poll of a wait: the receive waited for (if the wait is one) is handed
** its message as it arrives (mailbox.h). Only for the poll itself, which
** raises nothing: st->want never outlives its receive. */
static int wait_poll(mpb_state *st, int ctl) {
  return mpb_poll_for(st, ctl, st->waiting.d ? st->waiting.d->want : NULL);
}

static int look_again(mpb_state *st, void *ud) {
  look_arg *a = ud;
  return wait_poll(st, 1) || a->ready(st, a->ud);
}

/* One step of the back-off after a poll that found nothing and the spin.
** t0: when the quiet spell began (0: not yet); nap: the next nap's length.
** Returns 1 when ready became true during a nap. */
static int back_off(mpb_state *st, mpb_ready ready, void *ud, int flags, int over,
                    double *t0, long *nap) {
  if (st->arrivals) flags |= MPB_WAIT_HOT, over = 0; /* no naps (see spinning) */
  if (!over) {
    double t = mpb_now();
    if (*t0 == 0) *t0 = t;
    if (t - *t0 < SPIN_SEC) return 0;
    if (t - *t0 < YIELD_SEC || (flags & MPB_WAIT_HOT)) {
      sched_yield();
      return 0;
    }
  }
  long cap = nap_cap(st, flags);
  if ((flags & MPB_WAIT_BRIEF) && cap > NAP_SHORT_NS) cap = NAP_SHORT_NS; /* no wake-up comes */
  /* A wait whose end comes with a wake-up (the idle loop, a task's fan-in,
  ** the abort's resync, a message from a rank of this host) does not creep
  ** up on it from a microsecond: on a host with more ranks than cores each
  ** such nap runs out, a context switch and a poll per rank, some twenty per
  ** rank in a task that lasts milliseconds. A wake-up lost all the same
  ** costs at most this first nap, then half the wait so far. */
  if (cap == NAP_LONG_NS && *nap < NAP_WOKEN_FIRST_NS) *nap = NAP_WOKEN_FIRST_NS;
  if (*nap > cap) *nap = cap;
  look_arg look = {ready, ud};
  if (mpb_nap(st, *nap, look_again, &look, flags & MPB_WAIT_CTL)) return 1;
  if (*nap < cap) *nap *= 2;
  return 0;
}

void mpb_wait(lua_State *L, mpb_state *st, mpb_ready ready, void *ud, int flags) {
  double t0 = 0, since = 0;
  long nap = NAP_FIRST_NS;
  unsigned spins = 0;
  unsigned ctl_every = (flags & MPB_WAIT_CTL) ? 1 : CTL_EVERY;
  /* A hot wait yields the core. When the ranks outnumber the cores, every
  ** round of a collective would then wait for a turn of every yielding rank
  ** on them: MPB_WAIT_BRIEF naps instead, at most NAP_SHORT, and leaves the
  ** cores to the ranks with work. */
  int over = mpb_oversubscribed(st) && (!(flags & MPB_WAIT_HOT) || (flags & MPB_WAIT_BRIEF));
  int abortable = !(flags & MPB_WAIT_NOABORT);
  for (unsigned it = 0;; it++) {
    int ev = wait_poll(st, it % ctl_every == ctl_every - 1);
    if (st->gc_wanted) mpb_arrivals_collect(L, st);
    /* A signal may land at any instant: the interrupt flag is read before
    ** ready, so that a wait whose ready ends on an interrupt (an
    ** agreement's, coll/agree.c) is never raised out of for one it did not see. */
    int sig = mpb_sigint;
    if (ready(st, ud)) return;
    if (abortable && (st->aborting || sig || st->mpi_err[0])) mpb_check_abort_seen(L, st, sig);
    if (ev) {
      t0 = 0, spins = 0, nap = NAP_FIRST_NS;
      continue;
    }
    if (!st->use_mpi) {
      st->waiting.d = NULL; /* raised out of, as in mpb_check_abort */
      luaL_error(L, "mp: " MPB_RANKFMT " wait would never end (no MPI)", st->rank, st->size);
    }
    if (spinning(st, over, &spins)) continue;
    if (back_off(st, ready, ud, flags, over, &t0, &nap)) {
      t0 = 0, spins = 0, nap = NAP_FIRST_NS;
    } else if (nap > NAP_FIRST_NS && st->on_idle && !(flags & MPB_WAIT_HOT)) {
      double t = mpb_now(); /* napping: a long wait, time to look around */
      if (since == 0) since = t;
      st->on_idle(st, t - since);
    }
  }
}

static int never_ready(mpb_state *st, void *ud) {
  (void)st, (void)ud;
  return 0;
}

void mpb_wait_abort(lua_State *L, mpb_state *st) { mpb_wait(L, st, never_ready, NULL, 0); }

void mpb_wait_paused(lua_State *L, mpb_state *st, mpb_ready ready, void *ud,
                     const mpb_waitdesc *d, uint32_t pause, uint32_t turn) {
  mpb_waiting prev = st->waiting;
  st->waiting.d = d;
  st->waiting.pause = pause;
  st->waiting.turn = turn;
  st->waiting.L = L;
  st->waiting.ready = ready;
  st->waiting.ud = ud;
  mpb_wait(L, st, ready, ud, 0);
  st->waiting = prev;
}

void mpb_wait_described(lua_State *L, mpb_state *st, mpb_ready ready, void *ud,
                        const mpb_waitdesc *d) {
  mpb_wait_paused(L, st, ready, ud, d, 0, 0);
}

/* Where this rank is, as the abort reaches it (reports say it for every rank). */
static void note_where(lua_State *L, mpb_state *st) {
  char line[96];
  const mpb_waitdesc *d = st->waiting.d;
  mpb_lua_line(L, line, sizeof line);
  if (d) {
    char op[48], peer[32] = "", seq[40] = "";
    if (!st->call_name || !st->call_name(st, L, op, sizeof op))
      snprintf(op, sizeof op, "%s", d->op);
    if (d->peer >= 0) snprintf(peer, sizeof peer, " from rank %d", d->peer);
    if (d->seq) snprintf(seq, sizeof seq, " (collective #%u)", (unsigned)d->seq);
    /* mp.mpi's words are MPI's: "in mpi.Recv(tag 3)", as deadlocks say; a long
    ** line is cut at the report's width (the return value says so, unused) */
    if (snprintf(st->where, sizeof st->where, "in %s%s%s%s%s%s",
                 strncmp(op, "mpi.", 4) == 0 ? "" : "mp.", op, peer, seq, line[0] ? " at " : "",
                 line) < 0)
      st->where[0] = '\0';
  } else if (line[0]) {
    snprintf(st->where, sizeof st->where, "at %s", line);
  }
  st->waiting.d = NULL; /* the wait is over, raised out of */
}

int mpb_wait_bounded(mpb_state *st, mpb_ready ready, void *ud, double timeout) {
  double t0 = 0, end = mpb_now() + timeout;
  long nap = NAP_FIRST_NS;
  unsigned spins = 0;
  for (;;) {
    int ev = mpb_poll(st);
    if (st->gc_wanted) mpb_arrivals_collect(NULL, st);
    if (ready(st, ud)) return 1;
    if (mpb_now() > end) return 0;
    if (ev) {
      t0 = 0, spins = 0, nap = NAP_FIRST_NS;
      continue;
    }
    int over = mpb_oversubscribed(st);
    if (!spinning(st, over, &spins)) back_off(st, ready, ud, MPB_WAIT_CTL, over, &t0, &nap);
  }
}

/* Raising out of a wait ends it: the record of what it waits for (its
** descriptor and ready data live in the frames the raise unwinds) must not
** be read by a later "where are you" (tasks/where.c). */
void mpb_check_abort_seen(lua_State *L, mpb_state *st, int sig) {
  if (st->aborting && st->in_task) {
    if (!st->where[0]) note_where(L, st);
    st->waiting.d = NULL;
    mpb_raise_abort_hooked(L);
  }
  if (sig && st->rank == 0 && !st->where[0]) note_where(L, st);
  mpb_take_interrupt(L, st, sig);
  if (st->mpi_err[0]) {
    char msg[MPB_ERRLEN];
    memcpy(msg, st->mpi_err, sizeof msg);
    st->mpi_err[0] = '\0';
    st->waiting.d = NULL;
    luaL_error(L, "mp: " MPB_RANKFMT " %s", st->rank, st->size, msg);
  }
}

void mpb_check_abort(lua_State *L, mpb_state *st) { mpb_check_abort_seen(L, st, mpb_sigint); }

/* ------------------------------------------------------------- taking */
typedef struct { int chan, src; } take_arg;

/* The oldest message on chan from src (-1: from anyone). */
static mpb_msg *oldest(mpb_state *st, int chan, int src) {
  if (src >= 0) return mpb_inbox(st, chan, src)->head;
  mpb_msg *m = mpb_inbox_oldest(st, chan);
  st->any_looks += m != NULL;
  return m;
}

static int have_msg(mpb_state *st, void *ud) {
  take_arg *a = ud;
  return oldest(st, a->chan, a->src) != NULL;
}

mpb_msg *mpb_user_take(lua_State *L, mpb_state *st, int chan, int src, const char *fname) {
  take_arg a = {chan, src};
  if (!oldest(st, chan, src)) {
    mpb_poll(st);
    if (!oldest(st, chan, src)) {
      if (src == st->rank || st->size == 1)
        luaL_error(L, "mp.%s: " MPB_RANKFMT " would wait forever: no message from %s is queued",
                   fname, st->rank, st->size, src < 0 ? "any rank" : "itself");
      mpb_waitdesc d = {fname, src, 0, 0, NULL};
      mpb_wait_described(L, st, have_msg, &a, &d);
    }
  }
  mpb_msg *m = oldest(st, chan, src);
  mpb_inbox_take(st, m);
  mpb_trace_taken(st, m);
  if (chan == MPB_CH_USER) st->user_taken++;
  return m;
}
