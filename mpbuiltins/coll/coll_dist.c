/* SPDX-License-Identifier: MIT */
/*
** Tagged collective messages (coll.h, "tagged messages"): the transport of
** layout/ and topo/, two wings of one level that cannot include each other.
** A message is found by (communicator, task, collective number, sender,
** tag) wherever it sits in its sender's queue, so exchanges in flight do not
** block each other or the ordinary collectives. A message of another
** collective under the same number, on this channel or the collectives'
** one, is a mismatch, raised as the ordinary collectives raise theirs.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "wire/wire.h"

static mpb_uhdr tagged_header(const mpb_coll *x, int tag) {
  mpb_uhdr h;
  mpb_coll_header(x, &h);
  h.task = x->st->task;
  h.aux = tag;
  return h;
}

char *mpb_coll_tagged_new(lua_State *L, const mpb_coll *x, int tag, size_t len) {
  char *buf = len > SIZE_MAX - sizeof(mpb_uhdr) ? NULL : malloc(sizeof(mpb_uhdr) + len);
  if (!buf)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory (%I bytes)", x->fname, x->st->rank,
               x->st->size, (LUAI_UACINT)len);
  mpb_uhdr h = tagged_header(x, tag);
  memcpy(buf, &h, sizeof h);
  return buf;
}

void mpb_coll_tagged_send(lua_State *L, mpb_coll *x, int r, char *buf, size_t len) {
  mpb_send_bytes(L, x->st, x->c->ranks[r], MPB_CH_DIST, buf, sizeof(mpb_uhdr) + len, 1);
}

/* ------------------------------------------------------------- finding */
static int of_call(const mpb_coll *x, const mpb_uhdr *h) {
  return h->comm == x->c->id && h->task == x->st->task && h->seq == x->seq;
}

mpb_msg *mpb_coll_tagged_find(mpb_state *st, const mpb_coll *x, int r, int tag, int take) {
  st->looks++;
  for (mpb_msg *m = mpb_inbox(st, MPB_CH_DIST, x->c->ranks[r])->head; m; m = m->next) {
    mpb_uhdr h = mpb_msg_hdr(m);
    if (!of_call(x, &h) || h.aux != tag || (int)(h.flags & 0xff) != x->kind) continue;
    if (take) {
      mpb_inbox_take(st, m);
      mpb_trace_taken(st, m);
    }
    return m;
  }
  return NULL;
}

/* m is under x's number but of another kind. */
static int is_bad(const mpb_coll *x, const mpb_msg *m) {
  mpb_uhdr h = mpb_msg_hdr(m);
  return of_call(x, &h) && (int)(h.flags & 0xff) != x->kind;
}

/* A queued message from runtime rank src on chan under x's number but of
** another kind. */
static const mpb_msg *bad_from(const mpb_coll *x, int chan, int src) {
  x->st->looks++;
  for (const mpb_msg *m = mpb_inbox(x->st, chan, src)->head; m; m = m->next)
    if (is_bad(x, m)) return m;
  return NULL;
}

/* The same from any member, among the queued messages of both channels (in
** their arrival orders: not every member's queues). Of several, the lowest
** comm rank's, the oldest on MPB_CH_DIST first, as a walk over the members'
** queues finds. */
static const mpb_msg *find_bad(const mpb_coll *x) {
  static const int chans[2] = {MPB_CH_DIST, MPB_CH_COLL};
  const mpb_msg *bad = NULL;
  int bad_r = x->c->size;
  for (int i = 0; i < 2; i++) {
    x->st->looks++;
    for (const mpb_msg *m = mpb_inbox_oldest(x->st, chans[i]); m; m = m->anext) {
      int r = is_bad(x, m) ? mpb_comm_of(x->c, m->src) : -1;
      if (r >= 0 && r < bad_r) bad = m, bad_r = r;
    }
  }
  return bad;
}

typedef struct {
  const mpb_coll *x;
  mpb_ready ready;
  void *ud;
  uint64_t seen;     /* st->seq when the arrivals were last looked at */
  const mpb_msg *bad;
} tagged_wait;

/* Is a message that arrived since the last look a sign of a mismatch? Only
** its sender's queue is looked at (chan.h's record of arrivals), so a wait
** costs O(1) per arrival; all queues the first time, and when the record
** does not reach back far enough. */
static int ready_or_bad(mpb_state *st, void *ud) {
  tagged_wait *w = ud;
  if (w->ready(st, w->ud)) return 1;
  for (uint64_t s = w->seen + 1; s <= st->seq && !w->bad; s++) {
    int ch, src;
    if (w->seen == 0 || !mpb_arrival_at(st, s, &ch, &src)) {
      w->bad = find_bad(w->x);
      break;
    }
    if ((ch == MPB_CH_DIST || ch == MPB_CH_COLL) && mpb_comm_of(w->x->c, src) >= 0)
      w->bad = bad_from(w->x, ch, src);
  }
  w->seen = st->seq;
  return w->bad != NULL;
}

void mpb_coll_tagged_wait(lua_State *L, const mpb_coll *x, mpb_ready ready, void *ud,
                          uint64_t *seen) {
  tagged_wait w = {x, ready, ud, *seen, NULL};
  mpb_state *st = x->st;
  if (!ready_or_bad(st, &w)) mpb_wait(L, st, ready_or_bad, &w, 0);
  *seen = w.seen;
  if (w.bad && !ready(st, ud)) {
    mpb_uhdr h = mpb_msg_hdr(w.bad);
    char buf[200]; /* lua_pushfstring has no %u */
    snprintf(buf, sizeof buf, "mismatched collectives: rank %d called mp.%s (collective #%u on "
             "this communicator)", mpb_comm_of(x->c, w.bad->src),
             mpb_coll_kind_name((int)(h.flags & 0xff)), x->seq);
    luaL_error(L, "mp.%s: " MPB_RANKFMT " %s", x->fname, st->rank, st->size, buf);
  }
}
