/* SPDX-License-Identifier: MIT */
/*
** MPI's matching over the mailbox of MPB_CH_MPI (see mpi.h): posted
** receives first, in posting order, then the receive at hand; wildcard
** choices go to the seeded scheduler when it runs; synchronous sends are
** acknowledged once matched. Nothing here calls Lua except
** mpb_mpi_flush and mpb_mpi_wait, so the ready functions of the one wait
** can match.
*/
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi.h"

mpb_mpi *mpb_mpi_get(lua_State *L) {
  mpb_mpi *M = lua_touserdata(L, lua_upvalueindex(1));
  mpb_state *st = M->st;
  if (M->task != st->task || M->naborts != st->naborts) { /* a new task: forget the old */
    for (mpb_mpireq *r = M->posted; r;) {
      mpb_mpireq *next = r->next;
      r->prev = r->next = NULL;
      r->posted = 0;
      r = next;
    }
    M->posted = M->posted_tail = NULL;
    M->nacks = 0;
    M->task = st->task;
    M->naborts = st->naborts;
    mpb_mpi_sched_reseed(M);
  }
  return M;
}

static int accepts(const mpb_mpi *M, const mpb_msg *m, uint32_t comm, int tag) {
  mpb_uhdr h = mpb_msg_hdr(m);
  return h.comm == comm && h.task == M->st->task && !(h.flags & MPB_MPI_F_ACK) &&
         (tag == MPB_MPI_ANY_TAG || h.aux == tag);
}

/* The oldest message from world rank w that the receive accepts. */
static mpb_msg *first_from(mpb_mpi *M, int w, uint32_t comm, int tag) {
  for (mpb_msg *m = mpb_inbox(M->st, MPB_CH_MPI, w)->head; m; m = m->next)
    if (accepts(M, m, comm, tag)) return m;
  return NULL;
}

int mpb_mpi_candidates(mpb_mpi *M, const mpb_comm *c, int tag, int *self) {
  int n = 0;
  *self = 0;
  for (int r = 0; r < c->size; r++)
    if (first_from(M, c->ranks[r], c->id, tag)) {
      n++;
      if (r == c->rank) *self = 1;
    }
  return n;
}

/* MPI's order for ANY_SOURCE: the oldest to arrive among the first of each
** member that the receive accepts. */
static mpb_msg *by_member(mpb_mpi *M, const mpb_comm *c, int tag) {
  mpb_msg *best = NULL;
  for (int r = 0; r < c->size; r++) {
    M->st->any_looks++;
    mpb_msg *m = first_from(M, c->ranks[r], c->id, tag);
    if (m && (!best || m->seq < best->seq)) best = m;
  }
  return best;
}

typedef struct { const mpb_mpi *M; const mpb_comm *c; int tag; } wildcard;

static int wildcard_accepts(const mpb_state *st, const mpb_msg *m, const void *ud) {
  (void)st;
  const wildcard *w = ud;
  return accepts(w->M, m, w->c->id, w->tag) && mpb_comm_of(w->c, m->src) >= 0;
}

/* The same, found in the channel's arrival order: the first message there
** that the receive accepts is that oldest, whatever the number of ranks
** (past c->size of other tags' or communicators', by_member instead). */
static mpb_msg *any_source(mpb_mpi *M, const mpb_comm *c, int tag) {
  wildcard w = {M, c, tag};
  int gave_up;
  mpb_msg *m = mpb_inbox_first(M->st, MPB_CH_MPI, c->size, wildcard_accepts, &w, &gave_up);
  return gave_up ? by_member(M, c, tag) : m;
}

mpb_msg *mpb_mpi_match(mpb_mpi *M, const mpb_comm *c, int src, int tag, int take) {
  mpb_state *st = M->st;
  mpb_msg *best = NULL;
  if (take == 1 && M->nacks == MPB_MPI_ACKS) return NULL; /* acknowledge first (the wait flushes) */
  if (src >= 0) {
    best = first_from(M, c->ranks[src], c->id, tag);
  } else if (M->sched && take) { /* one candidate per sender; the seed chooses (take 2: a
                                    ** probe's choice, left queued) */
    int n = 0, srcs[64], *s = c->size <= 64 ? srcs : malloc(sizeof(int) * (size_t)c->size);
    if (!s) return NULL;
    for (int r = 0; r < c->size; r++)
      if (first_from(M, c->ranks[r], c->id, tag)) s[n++] = r;
    if (n) best = first_from(M, c->ranks[s[n == 1 ? 0 : mpb_mpi_sched_pick(M, n, s)]], c->id, tag);
    if (s != srcs) free(s);
  } else {
    best = any_source(M, c, tag);
  }
  if (best && take == 1) {
    mpb_inbox_take(st, best);
    mpb_trace_taken(st, best);
    mpb_uhdr h = mpb_msg_hdr(best);
    if (h.flags & MPB_MPI_F_SSEND) {
      M->acks[M->nacks].dst = best->src;
      M->acks[M->nacks].comm = h.comm;
      M->acks[M->nacks].token = mpb_mpi_token(h.flags);
      M->nacks++;
    }
  }
  return best;
}

void mpb_mpi_post(mpb_mpi *M, mpb_mpireq *r) {
  r->next = NULL;
  r->prev = M->posted_tail;
  if (M->posted_tail) M->posted_tail->next = r;
  else M->posted = r;
  M->posted_tail = r;
  r->posted = 1;
}

void mpb_mpi_unpost(mpb_mpi *M, mpb_mpireq *r) {
  if (!r->posted) return;
  if (r->prev) r->prev->next = r->next;
  else M->posted = r->next;
  if (r->next) r->next->prev = r->prev;
  else M->posted_tail = r->prev;
  r->prev = r->next = NULL;
  r->posted = 0;
}

int mpb_mpi_settle(mpb_mpi *M) {
  int n = 0;
  for (mpb_mpireq *r = M->posted; r;) {
    mpb_mpireq *next = r->next;
    mpb_msg *m = mpb_mpi_match(M, r->c, r->peer, r->tag, 1);
    if (m) {
      r->m = m;
      r->state = MPB_RQ_READY;
      mpb_mpi_unpost(M, r);
      n++;
    }
    r = next;
  }
  return n;
}

int mpb_mpi_take_ack(mpb_mpi *M, int w, uint32_t comm, uint32_t token) {
  for (mpb_msg *m = mpb_inbox(M->st, MPB_CH_MPI, w)->head; m; m = m->next) {
    mpb_uhdr h = mpb_msg_hdr(m);
    if ((h.flags & MPB_MPI_F_ACK) && h.comm == comm && mpb_mpi_token(h.flags) == token &&
        h.task == M->st->task) {
      mpb_inbox_take(M->st, m);
      mpb_msg_free(m);
      return 1;
    }
  }
  return 0;
}

void mpb_mpi_flush(lua_State *L, mpb_mpi *M) {
  mpb_state *st = M->st;
  while (M->nacks > 0) {
    M->nacks--;
    mpb_uhdr h = {st->task, M->acks[M->nacks].comm,
                  MPB_MPI_F_ACK | M->acks[M->nacks].token << MPB_MPI_TOKEN_SHIFT, 0, 0};
    mpb_send_bytes(L, st, M->acks[M->nacks].dst, MPB_CH_MPI, (char *)&h, sizeof h, 0);
  }
}

typedef struct {
  mpb_mpi *M;
  mpb_ready ready;
  void *ud;
} wrapped;

static int wrapped_ready(mpb_state *st, void *ud) {
  wrapped *w = ud;
  return w->ready(st, w->ud) || w->M->nacks > 0;
}

void mpb_mpi_wait(lua_State *L, mpb_mpi *M, mpb_ready ready, void *ud, const mpb_waitdesc *d) {
  wrapped w = {M, ready, ud};
  for (;;) {
    int done = ready(M->st, ud);
    if (M->nacks) mpb_mpi_flush(L, M);
    if (done) return;
    if (d) mpb_wait_described(L, M->st, wrapped_ready, &w, d);
    else mpb_wait(L, M->st, wrapped_ready, &w, 0);
  }
}
