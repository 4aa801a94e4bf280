/* SPDX-License-Identifier: MIT */
/*
** The mailbox: received user messages, queued per channel and per sender in
** arrival order (MPY's rule: recv(from) takes the oldest message from
** `from`, whatever else has arrived meanwhile), and per channel in arrival
** order across senders (recv() takes the oldest from anyone). A message of
** an earlier task is dropped and counted, never delivered: tasks are
** isolated. A layer above may take an arriving message first
** (st->on_arrival: posted irecvs), and a receive that polls for it takes
** it as it arrives (st->want).
*/
#include <string.h>

#include "chan/mailbox.h"
#include "chan/trace.h"

static void queue(mpb_state *st, mpb_msg *m) {
  mpb_queue *q = mpb_inbox(st, m->chan, m->src);
  mpb_chanq *a = &st->queued[m->chan];
  m->next = m->anext = NULL;
  m->prev = q->tail;
  if (q->tail) q->tail->next = m;
  else q->head = m;
  q->tail = m;
  m->aprev = a->tail;
  if (a->tail) a->tail->anext = m;
  else a->head = m;
  a->tail = m;
  a->n++;
}

void mpb_user_arrived(mpb_state *st, mpb_msg *m) {
  int bad = m->len < sizeof(mpb_uhdr) || m->chan < 0 || m->chan >= MPB_NCHAN;
  mpb_uhdr h = mpb_msg_hdr(m);
  if (bad || h.task < st->task) {
    /* rank 0 counted one of a finished task job-wide (dropped_job) as it ended */
    if ((m->chan == MPB_CH_USER || m->chan == MPB_CH_CUSER) && (bad || st->rank != 0))
      st->dropped++;
    mpb_msg_free(m);
    return;
  }
  mpb_trace_arrived(st, m);
  m->seq = ++st->seq;
  st->arrival_log[m->seq % MPB_ARRIVAL_LOG].chan = m->chan;
  st->arrival_log[m->seq % MPB_ARRIVAL_LOG].src = m->src;
  if ((st->arrival_chans >> m->chan & 1) && st->on_arrival && st->on_arrival(st, m)) return;
  if (m->chan == MPB_CH_USER) st->user_arrivals++;
  mpb_want *w = st->want;
  if (w && !w->got && m->chan == w->chan && m->src == w->src && h.comm == w->comm &&
      h.task == st->task && !mpb_inbox(st, m->chan, m->src)->head) {
    w->got = m;
    return;
  }
  queue(st, m);
}

mpb_msg *mpb_inbox_first(mpb_state *st, int chan, int most, mpb_accept_fn ok, const void *ud,
                         int *gave_up) {
  *gave_up = 0;
  for (mpb_msg *m = mpb_inbox_oldest(st, chan); m; m = m->anext) {
    st->any_looks++;
    if (ok(st, m, ud)) return m;
    if (--most <= 0) {
      *gave_up = m->anext != NULL;
      return NULL;
    }
  }
  return NULL;
}

void mpb_inbox_clear(mpb_state *st, int all) {
  for (int chan = 0; chan < MPB_NCHAN; chan++) {
    mpb_msg *next;
    for (mpb_msg *m = mpb_inbox_oldest(st, chan); m; m = next) {
      next = m->anext;
      if (!all && mpb_msg_hdr(m).task >= st->task) continue;
      /* rank 0 counted those of a finished task job-wide (dropped_job) */
      if ((chan == MPB_CH_USER || chan == MPB_CH_CUSER) && (all || st->rank != 0)) st->dropped++;
      mpb_inbox_take(st, m);
      mpb_msg_free(m);
    }
  }
}

void mpb_inbox_free(mpb_state *st) {
  for (int chan = 0; chan < MPB_NCHAN; chan++) {
    mpb_msg *m;
    while ((m = mpb_inbox_oldest(st, chan))) {
      mpb_inbox_take(st, m);
      mpb_msg_free(m);
    }
  }
}
