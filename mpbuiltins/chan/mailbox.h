/* SPDX-License-Identifier: MIT */
/*
** chan/, second floor: the mailbox of received user messages (mailbox.c).
** Each queued message is in two lists: its sender's queue on its channel
** (mpb_inbox: walk it with m->next) and its channel's arrival order across
** senders (mpb_inbox_oldest: walk it with m->anext, or back from
** mpb_inbox_newest with m->aprev). A receive from one sender looks at that
** sender's queue; one from any sender at the channel's oldest messages, so
** its cost does not grow with the number of ranks. Either takes its message
** out of both lists in O(1) (mpb_inbox_take), from wherever it is.
*/
#ifndef MPB_CHAN_MAILBOX_H
#define MPB_CHAN_MAILBOX_H

#include "chan/state.h"

static inline mpb_queue *mpb_inbox(mpb_state *st, int chan, int src) {
  return &st->inbox[chan * st->size + src];
}
/* The oldest / newest message queued on chan from any sender (NULL: none). */
static inline mpb_msg *mpb_inbox_oldest(const mpb_state *st, int chan) {
  return st->queued[chan].head;
}
static inline mpb_msg *mpb_inbox_newest(const mpb_state *st, int chan) {
  return st->queued[chan].tail;
}
/* How many messages are queued on chan. */
static inline size_t mpb_inbox_count(const mpb_state *st, int chan) {
  return st->queued[chan].n;
}
/* Take m, a queued message, out of the mailbox (the caller owns it). */
static inline void mpb_inbox_take(mpb_state *st, mpb_msg *m) {
  mpb_queue *q = mpb_inbox(st, m->chan, m->src);
  mpb_chanq *a = &st->queued[m->chan];
  if (m->prev) m->prev->next = m->next;
  else q->head = m->next;
  if (m->next) m->next->prev = m->prev;
  else q->tail = m->prev;
  if (m->aprev) m->aprev->anext = m->anext;
  else a->head = m->anext;
  if (m->anext) m->anext->aprev = m->aprev;
  else a->tail = m->aprev;
  a->n--;
  m->next = m->prev = m->anext = m->aprev = NULL;
}
/* The oldest message queued on chan that ok(st, m, ud) accepts, found in
** the channel's arrival order, looking at `most` messages at most (counted
** in st->any_looks): NULL, with *gave_up set when it stopped short of the
** end. A caller gives up after as many looks as a walk over the senders'
** queues would take, and takes that walk instead: never more than twice. */
typedef int (*mpb_accept_fn)(const mpb_state *st, const mpb_msg *m, const void *ud);
mpb_msg *mpb_inbox_first(mpb_state *st, int chan, int most, mpb_accept_fn ok, const void *ud,
                         int *gave_up);
/* Queue an arrived user message, or drop it if it is stale. */
void mpb_user_arrived(mpb_state *st, mpb_msg *m);
/* A receive that polls for the next message on chan from src (world rank)
** of communicator comm in the current task, when none is queued
** (st->want, for the length of one poll: mpb_poll_for, and its wait's
** polls through its mpb_waitdesc): such a message that arrives while
** nothing from src is queued on chan is handed to it in got, arrived
** (counted, traced, past the arrival hook) but not queued, so not searched
** for and taken out again. It is the one the receive would have found
** first; once got is set, the others are queued. */
typedef struct mpb_want {
  int chan, src;
  uint32_t comm;
  mpb_msg *got;
} mpb_want;
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
/* Forget queued messages of earlier tasks (task start) / all (resync),
** counting the dropped ones; free every queued message, uncounted (the
** state's end). Each looks at the queued messages only. */
void mpb_inbox_clear(mpb_state *st, int all);
void mpb_inbox_free(mpb_state *st);

#endif
