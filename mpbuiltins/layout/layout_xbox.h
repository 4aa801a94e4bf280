/* SPDX-License-Identifier: MIT */
/*
** The boxes of an exchange (layout_xbox.c): what transposes, halos,
** gathers and scatters move, described against the local arrays, and the
** arithmetic on them that needs no MPI (which boxes share a message, what a
** plan reports), so that it is unit-tested. The exchange itself is xchg.c.
*/
#ifndef MPB_LAYOUT_XBOX_H
#define MPB_LAYOUT_XBOX_H

#include <stddef.h>
#include <stdint.h>

#include "layout/layout_calc.h"

/* A box of a local array: pack dimension j walks array dimension dim[j]
** from index off[j] (0-based), len[j] elements. The packed order (the order
** of the elements in a message) is column-major over the pack dimensions,
** which both sides of a message agree on. */
typedef struct mpb_xbox {
  int peer;                          /* comm rank (sends and receives) */
  int tag;                           /* which message of the peer's (halos: the side) */
  int nd;
  int dim[MPB_LAYOUT_MAXDIM];
  int64_t off[MPB_LAYOUT_MAXDIM], len[MPB_LAYOUT_MAXDIM];
  int64_t n;                         /* elements */
} mpb_xbox;

typedef struct mpb_xphase {
  int nsend, nrecv, nself;
  const mpb_xbox *send;              /* against the source array */
  const mpb_xbox *recv;              /* against the destination array */
  const mpb_xbox *self;              /* pairs: [2i] in the source, [2i+1] in the destination */
} mpb_xphase;

/* What a plan reports (its :info()). */
typedef struct mpb_xstats {
  int peers, messages;               /* distinct ranks sent to or received from; sends */
  int64_t send_bytes, recv_bytes, self_bytes;
  int64_t peak_extra;                /* the most bytes of messages alive at once, at most */
} mpb_xstats;

/* Sort boxes by peer, then tag: the boxes of one peer travel together. */
void mpb_xchg_sort(mpb_xbox *b, int n);

/* The boxes of one peer that go to (or come from) it share messages: a
** message carries a run of them (consecutive boxes of one peer), packed one
** after the other. Small boxes are merged only while the message stays
** below MPI's rendezvous threshold (MPB_XBOX_EAGER), larger ones together;
** both sides see the same boxes in the same order, so they cut the same
** runs. hdr: the bytes of a message's header. Returns the end of the run
** from box i; *len: its payload bytes. */
#define MPB_XBOX_EAGER 8256
int mpb_xbox_msg_end(const mpb_xbox *b, int n, int i, size_t es, size_t hdr, size_t *len);
/* The number of messages that carry n boxes. */
int mpb_xbox_count_msgs(const mpb_xbox *b, int n, size_t es, size_t hdr);

/* Add up what the phases move (element size es, message header hdr):
** peers is exact (the distinct ranks of every send and receive), computed in
** O(k log k) of the k boxes, whatever the number of ranks. */
void mpb_xchg_stats(const mpb_xphase *ph, int nphase, size_t es, size_t hdr, mpb_xstats *s);

#endif
