/* SPDX-License-Identifier: MIT */
/*
** chan/, third floor: receiving (arrive.c).
*/
#ifndef MPB_CHAN_ARRIVE_H
#define MPB_CHAN_ARRIVE_H

#include "chan/state.h"

/* Receive what has arrived: control messages are dispatched, user messages
** go to the mailbox, parts to their messages; sends are progressed.
** Returns the number of events. */
int mpb_poll(mpb_state *st);
/* The same, looking at the control channel only when ctl is non-zero. */
int mpb_poll_ctl(mpb_state *st, int ctl);
/* mpb_poll_ctl(st, 0) for a receive from one sender (mailbox.h): returns
** w->got, the message w wants if it arrived in this poll, taken out of the
** mailbox (the caller accounts for the taking), or NULL (the others are
** queued as ever). */
struct mpb_msg *mpb_poll_for(mpb_state *st, struct mpb_want *w);
/* Run a collection (L; NULL: none) and post the parts of large messages
** that waited for one (st->gc_wanted): see arrive.c. */
void mpb_arrivals_collect(lua_State *L, mpb_state *st);
/* Nothing is being received (no message in parts half way). */
int mpb_arrivals_idle(const mpb_state *st);
void mpb_arrivals_free(mpb_state *st);

#endif
