/* SPDX-License-Identifier: MIT */
/*
** What the files of chan/ share and nothing above them sees: the record of
** a send in flight, and the framing of messages sent in parts.
*/
#ifndef MPB_CHAN_INT_H
#define MPB_CHAN_INT_H

#include "chan/chan.h"
#include "chan/frame.h"

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

/* Record a send of len bytes at buf to dst and post it on comm with tag;
** own (or NULL) is freed once MPI is done with buf (the block buf lies in);
** returns the MPI code (on failure nothing is recorded and own is freed).
** list: &st->sends (user: counted for back-pressure and the abort drain) or
** &st->csends. */
int mpb_post_send(mpb_state *st, mpb_sendrec **list, const void *buf, size_t len, void *own,
                  int ref, int dst, int tag, MPI_Comm comm);

#endif
