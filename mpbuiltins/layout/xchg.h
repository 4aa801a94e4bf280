/*
** The exchange of array boxes (xchg.c): the data movement of transposes and
** halo exchanges. A plan (made once) is a list of phases; a phase is a list
** of boxes to send, to receive and to copy locally, each described against
** the local array it reads or writes. Applying a phase packs the send boxes
** of each peer into the one message that carries them and sends it at once
** (so packing the next overlaps the transfer of this one), copies the local
** boxes view to view, then unpacks each message's boxes as soon as it is
** found, in whatever order messages arrive. Messages are the tagged collective messages of
** coll.h: numbered on their communicator, so a fault anywhere stops the
** exchange through the abort protocol and a message of one application is
** never taken by another.
*/
#ifndef MPB_XCHG_H
#define MPB_XCHG_H

#include "array/array.h"
#include "coll/coll.h"
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

/* The methods of the exchanges (their plans' :info().method); the trace's
** events of a kind (MPB_COLL_TRANSPOSE, _HALO, _NALLGATHER, _NALLTOALL)
** name it through mpb_xchg_method (NULL: another kind). */
#define MPB_TRANSPOSE_METHOD \
  "box intersection, one exchange: pack + point-to-point, unpack on arrival"
#define MPB_HALO_METHOD \
  "one phase per dimension, one message per neighbour: pack + point-to-point, unpack on arrival"
#define MPB_NEIGHBOR_METHOD "one message to each neighbour (point-to-point)"
const char *mpb_xchg_method(int kind);

/* Sort boxes by peer, then tag: a plan does so with each phase's sends and
** receives, so that the boxes of one peer travel in one message. */
void mpb_xchg_sort(mpb_xbox *b, int n);

/* Add up what the phases move (element size es). */
void mpb_xchg_stats(const mpb_xphase *ph, int nphase, size_t es, int nranks, mpb_xstats *s);
/* Push a plan's :info() table: method and s's fields (room for nextra more). */
void mpb_xchg_push_info(lua_State *L, const mpb_xstats *s, const char *method, int nextra);

/* Apply a plan. On the stack: the communicator at cidx (0: none, the plan
** is local: no sends, no receives), the plan's userdata at pidx (anchors
** ph), the source array at sidx and the destination at didx (the same
** slot for an exchange in place, whose boxes must not meet). Two arrays
** that share memory (one a view or reshape of the other) are right for a
** plan of one phase: its local boxes are copied through a temporary, its
** sends packed before anything is written. kind and fname name the
** collective.
** Without wait, pushes an "mp.Exchange" request with phase 0 started (sends
** posted, local boxes copied); with wait, runs the exchange to the end (and
** may push a spent request or nothing: the caller pushes its result). Either
** way the source array may be written as soon as this returns. */
void mpb_xchg_apply(lua_State *L, int cidx, int pidx, const mpb_xphase *ph, int nphase,
                    int sidx, int didx, int kind, const char *fname, int wait);

#endif
