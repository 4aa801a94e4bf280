/* SPDX-License-Identifier: MIT */
/*
** The mailbox: received user messages, queued per channel and per sender in
** arrival order (MPY's rule: recv(from) takes the oldest message from
** `from`, whatever else has arrived meanwhile). A message of an earlier task
** is dropped and counted, never delivered: tasks are isolated. A layer above
** may take an arriving message first (st->on_arrival: posted irecvs).
*/
#include <string.h>

#include "chan/mailbox.h"
#include "chan/trace.h"

void mpb_user_arrived(mpb_state *st, mpb_msg *m) {
  int bad = m->len < sizeof(mpb_uhdr) || m->chan < 0 || m->chan >= MPB_NCHAN;
  if (bad || mpb_msg_hdr(m).task < st->task) {
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
  if (st->on_arrival && st->on_arrival(st, m)) return;
  if (m->chan == MPB_CH_USER) st->user_arrivals++;
  mpb_queue_push(mpb_inbox(st, m->chan, m->src), m);
}

void mpb_inbox_clear(mpb_state *st, int all) {
  for (int i = 0; i < st->size * MPB_NCHAN; i++) {
    mpb_queue *q = &st->inbox[i], keep = {NULL, NULL};
    int chan = i / st->size;
    mpb_msg *m;
    while ((m = mpb_queue_pop(q))) {
      if (!all && mpb_msg_hdr(m).task >= st->task) {
        mpb_queue_push(&keep, m);
      } else { /* rank 0 counted those of a finished task job-wide (dropped_job) */
        if ((chan == MPB_CH_USER || chan == MPB_CH_CUSER) && (all || st->rank != 0)) st->dropped++;
        mpb_msg_free(m);
      }
    }
    *q = keep;
  }
}
