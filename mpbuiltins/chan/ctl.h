/* SPDX-License-Identifier: MIT */
/*
** chan/, third floor: the control channel (ctl.c).
*/
#ifndef MPB_CHAN_CTL_H
#define MPB_CHAN_CTL_H

#include "chan/state.h"

/* Send a control message (body copied); wakes the receiver if it naps. */
void mpb_ctl_send(mpb_state *st, int dst, int kind, int64_t task, int32_t arg,
                  int64_t value, const void *body, size_t len);
/* Handle control messages of this kind with fn (NULL: keep them in cmdq). */
void mpb_ctl_on(mpb_state *st, int kind, mpb_ctl_fn fn);
/* Dispatch a received control message (arrive.c). */
void mpb_ctl_dispatch(mpb_state *st, mpb_msg *m);

#endif
