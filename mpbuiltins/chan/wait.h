/* SPDX-License-Identifier: MIT */
/*
** chan/, top floor: the one wait (wait.c), and taking a message from the
** mailbox, waiting for it.
*/
#ifndef MPB_CHAN_WAIT_H
#define MPB_CHAN_WAIT_H

#include "chan/state.h"

/* The one wait: returns when ready(st, ud) is true. Progresses all traffic,
** watches the control channel, backs off to sleeping. Unless flags has
** MPB_WAIT_NOABORT, raises the abort error when the task is being stopped,
** and "interrupted!" on rank 0 after SIGINT. */
#define MPB_WAIT_NOABORT 1
#define MPB_WAIT_CTL 2     /* waiting for control messages only */
#define MPB_WAIT_HOT 4     /* a short protocol step: yield, never sleep */
#define MPB_WAIT_BRIEF 8   /* with HOT, on a host with more ranks than cores: naps of at
                              most 1 ms instead (MPI's collectives in progress wake no one) */
void mpb_wait(lua_State *L, mpb_state *st, mpb_ready ready, void *ud, int flags);
/* The same, described by d while it lasts: what tasks/ reads to report
** where this rank waits and to tell a deadlock. */
void mpb_wait_described(lua_State *L, mpb_state *st, mpb_ready ready, void *ud,
                        const mpb_waitdesc *d);
/* The same, as pause number `pause` (st->pauses): a wait that no message
** need end. tasks/ lets it go (st->go = pause) once every rank is blocked,
** paused or finished with nothing in flight, and no other pause has a lower
** (turn, rank) (the schedule explorer's exact moment to choose among what
** has come). */
void mpb_wait_paused(lua_State *L, mpb_state *st, mpb_ready ready, void *ud,
                     const mpb_waitdesc *d, uint32_t pause, uint32_t turn);
/* The same without Lua (shutdown): gives up after timeout seconds; returns
** whether ready became true. */
int mpb_wait_bounded(mpb_state *st, mpb_ready ready, void *ud, double timeout);
/* Wait for the abort that another rank's fault brings (it is known to be on
** its way), and raise it: that rank's report is the job's, not this one's. */
void mpb_wait_abort(lua_State *L, mpb_state *st);
/* Check for abort, interrupt or a noted MPI failure, and raise. The
** interrupt flag is read once, at the call: mpb_check_abort_seen takes the
** value its caller read (the one wait reads it once a round, before its
** condition), so that a SIGINT landing after that read is taken on the next
** round, after the condition has seen it, and never raised out of a round
** that decided without it. */
void mpb_check_abort(lua_State *L, mpb_state *st);
void mpb_check_abort_seen(lua_State *L, mpb_state *st, int sig);
/* Wait for the oldest message on chan from src (-1: any) and take it. */
mpb_msg *mpb_user_take(lua_State *L, mpb_state *st, int chan, int src, const char *fname);

#endif
