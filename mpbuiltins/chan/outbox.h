/* SPDX-License-Identifier: MIT */
/*
** chan/, second floor: the outbox, the sends in flight (outbox.c): user
** sends (counted for back-pressure and the abort drain) and control sends.
*/
#ifndef MPB_CHAN_OUTBOX_H
#define MPB_CHAN_OUTBOX_H

#include "chan/state.h"

struct mpb_sendrec {
  struct mpb_sendrec *next;
  MPI_Request req;
  size_t len;
  void *own;         /* freed when done (the block the data lies in), or NULL when ref (or
                        the caller) anchors the data */
  int ref;           /* registry ref keeping zero-copy data alive, or LUA_NOREF */
  int dst;
  uint64_t id;
};

/* Record s (allocated by the caller): the posted send req of len bytes to
** dst (own: freed when done), on list. */
void mpb_sends_record(mpb_state *st, mpb_sendrec **list, mpb_sendrec *s, MPI_Request req,
                      void *own, int ref, size_t len, int dst);
/* Record a send of len bytes at buf to dst and post it on comm with tag;
** own (or NULL) is freed once MPI is done with buf (the block buf lies in);
** returns the MPI code (on failure nothing is recorded and own is freed).
** list: &st->sends (user: counted for back-pressure and the abort drain) or
** &st->csends. */
int mpb_post_send(mpb_state *st, mpb_sendrec **list, const void *buf, size_t len, void *own,
                  int ref, int dst, int tag, MPI_Comm comm);
/* Ready function: no send with an id in ((uint64_t *)ud)[0..1] is in flight. */
int mpb_sends_gone(mpb_state *st, void *ud);
/* Progress sends in flight; returns how many completed. */
int mpb_sends_progress(mpb_state *st);
/* Free the records of every send (shutdown). */
void mpb_sends_free(mpb_state *st);
/* Ready function: no more than MPB_PENDING_MAX_BYTES of user sends in flight. */
int mpb_sends_below_max(mpb_state *st, void *ud);

#endif
