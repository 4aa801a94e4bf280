/* SPDX-License-Identifier: MIT */
/*
** chan/, second floor: naps and wake-ups (wake.c), below the sending that
** wakes a receiver and the wait that naps.
*/
#ifndef MPB_CHAN_WAKE_H
#define MPB_CHAN_WAKE_H

#include "chan/state.h"

/* Learn the ranks of this host, publish nap flags and a wake-up address.
** Collective over st->base. Returns 0, or -1 (message in err). Then, after
** a collective that follows it on every rank, mpb_wake_ready (the host's
** shared words have been mapped by all: the host's first rank stops
** lending them). */
int mpb_wake_init(mpb_state *st, char *err, size_t errlen);
void mpb_wake_ready(mpb_state *st);
void mpb_wake_close(mpb_state *st);
/* Sleep up to ns nanoseconds unless woken (a message for us was sent, or a
** signal came); ready is checked once more after saying we nap (the wait
** passes one that polls first: a message sent meanwhile ends the nap).
** Returns 1 if ready was true. */
int mpb_nap(mpb_state *st, long ns, mpb_ready ready, void *ud, int ctl);
/* A control (ctl) or user message was just sent to dst: wake it if it naps. */
void mpb_wake(mpb_state *st, int dst, int ctl);
/* Wake-up datagrams taken from the job's ranks, and from elsewhere (refused). */
void mpb_wake_counts(const mpb_state *st, uint64_t *woken, uint64_t *refused);
/* Naps taken, and those that ran out their time (no wake-up ended them). */
void mpb_nap_counts(const mpb_state *st, uint64_t *naps, uint64_t *timed_out);
/* Every rank of the job is on this host / this host has more ranks than cores. */
int mpb_all_local(const mpb_state *st);
/* The process id of rank r when it runs on this host (same kernel and
** namespaces), else 0. */
int mpb_local_pid(const mpb_state *st, int r);
/* The process pid (of this host) has ended: gone, or a zombie not reaped. */
int mpb_pid_gone(int pid);
int mpb_oversubscribed(const mpb_state *st);
/* Where runtime rank r ran when the runtime started: *host the lowest rank
** on its host (the same boot id and host name), *cpu the
** CPU it ran on and *numa that CPU's NUMA node (-1: unknown; without the
** runtime's exchange, one process alone: host 0, and only this rank's CPU). */
void mpb_where(const mpb_state *st, int r, int *host, int *cpu, int *numa);

#endif
