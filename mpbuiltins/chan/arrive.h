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
/* mpb_poll_ctl for a receive from one sender (mailbox.h; w NULL: none):
** the message w wants, if it arrives in this poll, is handed over in
** w->got, not queued (the caller accounts for the taking); the others are
** queued as ever. st->want is w for this poll only. */
int mpb_poll_for(mpb_state *st, int ctl, struct mpb_want *w);
/* Run a collection (L; NULL: none) and post the parts of large messages
** that waited for one (st->gc_wanted): see arrive.c. */
void mpb_arrivals_collect(lua_State *L, mpb_state *st);
/* Nothing is being received (no message in parts half way). */
int mpb_arrivals_idle(const mpb_state *st);
void mpb_arrivals_free(mpb_state *st);

#endif
