/* SPDX-License-Identifier: MIT */
/*
** The framing of a message sent in parts, on both sides (plain C, no MPI
** calls, no Lua: the fuzz target links it alone). A header message is
**     uhdr (flags | MPB_UF_SPLIT)  inline bytes  table  trailer
** where the inline bytes are the message without its parts, the table has
** one (at, len) pair of u64 per part (at: the inline offset the part goes
** after, non-decreasing; len: its size, MPB_PART_STR set for the bytes of a
** string), and the trailer is (u64 tag, u64 nparts). Each part follows as a
** contiguous message of its own on `bulk` with that tag, in order.
*/
#ifndef MPB_FRAME_H
#define MPB_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "chan/msg.h"

#define MPB_PART_STR ((uint64_t)1 << 63)
#define MPB_PART_MAX ((uint64_t)1 << 24) /* parts in one message, at most */

typedef struct mpb_frame {
  size_t inlen;        /* inline bytes, the user header included */
  uint64_t tag, nparts;
  const char *table;   /* nparts (at, len) pairs */
  size_t total;        /* the parts' bytes */
} mpb_frame;

/* Check a header message of len bytes as the wire decoder checks a body:
** every count, offset and size, without overflow. Returns 0 and fills f,
** or -1 with the reason in err. */
int mpb_frame_parse(const char *buf, size_t len, uint64_t tag_ub, mpb_frame *f, char *err,
                    size_t errlen);
/* What a received user message of len bytes is, as the receiver reads it
** (arrive.c): shorter than a user header (malformed: it cannot be sent on,
** its task is unknown), whole, or the header of a message in parts, its
** table parsed into f (or malformed: the reason in err). */
enum { MPB_RECV_SHORT, MPB_RECV_WHOLE, MPB_RECV_PARTS, MPB_RECV_BADFRAME };
int mpb_frame_classify(const char *buf, size_t len, uint64_t tag_ub, mpb_frame *f, char *err,
                       size_t errlen);
/* mpb_frame_classify would say MPB_RECV_WHOLE (what nearly every message is). */
static inline int mpb_frame_whole(const char *buf, size_t len) {
  mpb_uhdr h;
  if (len < sizeof h) return 0;
  memcpy(&h, buf, sizeof h);
  return !(h.flags & MPB_UF_SPLIT);
}
/* Part i of a parsed frame. */
void mpb_frame_part(const mpb_frame *f, size_t i, size_t *at, size_t *len, int *str);
/* The size of a header of inlen inline bytes and n parts. */
size_t mpb_frame_size(size_t inlen, uint64_t n);
/* Write a header: the inline bytes (their user header gets the flag), the
** table of n parts and the trailer into out (mpb_frame_size bytes). */
void mpb_frame_write(char *out, const char *inl, size_t inlen, uint64_t n, const size_t *at,
                     const size_t *plen, const char *isstr, uint64_t tag);

#endif
