/*
** What the files of chan/ share and nothing above them sees: the record of
** a send in flight, and the framing of messages sent in parts.
*/
#ifndef MPB_CHAN_INT_H
#define MPB_CHAN_INT_H

#include "chan/chan.h"

struct mpb_sendrec {
  struct mpb_sendrec *next;
  MPI_Request req;
  size_t len;
  char *buf;         /* malloc'ed, or NULL when ref (or the caller) anchors the data */
  int ref;           /* registry ref keeping zero-copy data alive, or LUA_NOREF */
  int dst;
  uint64_t id;
};

/* Record a send of len bytes at buf (owned when own) to dst and post it on
** comm with tag; returns the MPI code (on failure nothing is recorded and an
** owned buf is freed). list: &st->sends (user: counted for back-pressure and
** the abort drain) or &st->csends. */
int mpb_post_send(mpb_state *st, mpb_sendrec **list, const void *buf, size_t len, int own,
                  int ref, int dst, int tag, MPI_Comm comm);

/*
** Messages in parts. A message whose large arrays and strings travel in
** place is sent as a header message on `user` holding
**     uhdr (flags | MPB_UF_SPLIT)  inline bytes  table  trailer
** where the inline bytes are the message without its parts, the table has
** one (at, len) pair of u64 per part (at: the inline offset the part goes
** after, non-decreasing; len: its size, PART_STR set for the bytes of a
** string), and the trailer is (u64 tag, u64 nparts). Each part follows as a
** contiguous message of its own on `bulk` with that tag, in order: the
** receiver posts its receives as soon as it has read the header, straight
** into place, and the tag (a per-destination counter) keeps the parts of two
** messages apart whatever order their headers are read in.
*/
#define MPB_PART_STR ((uint64_t)1 << 63)
#define MPB_PART_MAX ((uint64_t)1 << 24) /* parts in one message, at most */
typedef struct { uint64_t tag, nparts; } mpb_trailer;

#endif
