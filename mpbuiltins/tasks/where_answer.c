/* SPDX-License-Identifier: MIT */
/* Whereabouts answers and their sparse message counts (where_answer.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/where_answer.h"

size_t mpb_answer_size(uint32_t npeers) { return sizeof(mpb_answer) + sizeof(mpb_count) * npeers; }

mpb_count *mpb_answer_counts(mpb_answer *a) { return (mpb_count *)(void *)(a + 1); }

mpb_answer *mpb_answer_describe(mpb_state *st) {
  uint32_t npeers = 0;
  for (int p = 0; p < st->size; p++) npeers += st->sent_to[p] != 0 || st->recvd_from[p] != 0;
  mpb_answer *h = malloc(mpb_answer_size(npeers));
  if (!h) return NULL;
  memset(h, 0, sizeof *h);
  h->npeers = npeers;
  h->task = st->task;
  h->state = MPB_AT_RUNNING;
  const mpb_waitdesc *d = st->waiting.d;
  int quiet = mpb_arrivals_idle(st) && !st->sends;
  if (d && quiet && !st->waiting.ready(st, st->waiting.ud)) {
    h->state = st->waiting.pause ? MPB_AT_PAUSED : MPB_AT_BLOCKED;
    h->pause = st->waiting.pause;
    h->turn = st->waiting.turn;
    h->peer = d->peer;
    h->comm = d->comm;
    h->seq = d->seq;
    if (!st->call_name || !st->call_name(st, st->waiting.L, h->op, sizeof h->op))
      snprintf(h->op, sizeof h->op, "%s", d->op);
    mpb_lua_line(st->waiting.L, h->line, sizeof h->line);
  } else if ((st->phase == MPB_PHASE_FINISHED || st->phase == MPB_PHASE_IDLE) && quiet) {
    h->state = MPB_AT_FINISHED; /* idle: done with this task (a task not begun has an older number) */
  } else {
    mpb_lua_line(mpb_running(st), h->line, sizeof h->line);
  }
  mpb_count *c = mpb_answer_counts(h);
  for (int p = 0; p < st->size; p++)
    if (st->sent_to[p] != 0 || st->recvd_from[p] != 0)
      *c++ = (mpb_count){.sent = st->sent_to[p], .recvd = st->recvd_from[p], .peer = p, .zero = 0};
  return h;
}

mpb_answer *mpb_answer_read(const char *buf, size_t len, int size) {
  mpb_answer head;
  if (len < sizeof head) return NULL;
  memcpy(&head, buf, sizeof head); /* buf need not be aligned */
  if (head.npeers > (uint32_t)size || len != mpb_answer_size(head.npeers)) return NULL;
  mpb_answer *a = malloc(len);
  if (!a) return NULL;
  memcpy(a, buf, len);
  const mpb_count *c = mpb_answer_counts(a);
  for (uint32_t i = 0; i < a->npeers; i++) /* sorted, in range, no zero entries */
    if (c[i].peer < 0 || c[i].peer >= size || (i > 0 && c[i].peer <= c[i - 1].peer) ||
        (c[i].sent == 0 && c[i].recvd == 0)) {
      free(a);
      return NULL;
    }
  return a;
}

static const mpb_count *find(mpb_answer *a, int peer) {
  const mpb_count *c = mpb_answer_counts(a);
  size_t lo = 0, hi = a->npeers;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c[mid].peer < peer) lo = mid + 1;
    else hi = mid;
  }
  return lo < a->npeers && c[lo].peer == peer ? &c[lo] : NULL;
}

int64_t mpb_answer_sent(mpb_answer *a, int peer) {
  const mpb_count *e = find(a, peer);
  return e ? e->sent : 0;
}

int64_t mpb_answer_recvd(mpb_answer *a, int peer) {
  const mpb_count *e = find(a, peer);
  return e ? e->recvd : 0;
}

int mpb_answer_same_counts(mpb_answer *a, mpb_answer *b) {
  if (a->npeers != b->npeers) return 0; /* no zero entries: the same counts list the same peers */
  const mpb_count *ca = mpb_answer_counts(a), *cb = mpb_answer_counts(b);
  for (uint32_t i = 0; i < a->npeers; i++)
    if (ca[i].peer != cb[i].peer || ca[i].sent != cb[i].sent || ca[i].recvd != cb[i].recvd) return 0;
  return 1;
}
