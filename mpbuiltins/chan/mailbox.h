/* SPDX-License-Identifier: MIT */
/*
** chan/, second floor: the mailbox of received user messages (mailbox.c).
*/
#ifndef MPB_CHAN_MAILBOX_H
#define MPB_CHAN_MAILBOX_H

#include "chan/state.h"

static inline mpb_queue *mpb_inbox(mpb_state *st, int chan, int src) {
  return &st->inbox[chan * st->size + src];
}
/* Queue an arrived user message, or drop it if it is stale. */
void mpb_user_arrived(mpb_state *st, mpb_msg *m);
/* The channel and sender of the user message that arrived as number s
** (st->seq counts them): 1, or 0 when s is not among the last
** MPB_ARRIVAL_LOG (a waiter that fell that far behind scans its queues).
** A wait that looks only at what arrived since it last looked does O(1)
** work per arrival, whatever the number of ranks it waits for. */
static inline int mpb_arrival_at(const mpb_state *st, uint64_t s, int *chan, int *src) {
  if (s == 0 || s > st->seq || st->seq - s >= MPB_ARRIVAL_LOG) return 0;
  *chan = st->arrival_log[s % MPB_ARRIVAL_LOG].chan;
  *src = st->arrival_log[s % MPB_ARRIVAL_LOG].src;
  return 1;
}
/* Forget queued messages of earlier tasks (task start) / all (resync). */
void mpb_inbox_clear(mpb_state *st, int all);

#endif
