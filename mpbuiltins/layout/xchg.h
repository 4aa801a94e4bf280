/* SPDX-License-Identifier: MIT */
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
#include "layout/layout_xbox.h"

/* The methods of the exchanges (their plans' :info().method); the trace's
** events of a kind (MPB_COLL_TRANSPOSE, _HALO, _NALLGATHER, _NALLTOALL)
** name it through mpb_xchg_method (NULL: another kind). */
#define MPB_TRANSPOSE_METHOD \
  "box intersection, one exchange: pack + point-to-point, unpack on arrival"
#define MPB_HALO_METHOD \
  "one phase per dimension, one message per neighbour: pack + point-to-point, unpack on arrival"
#define MPB_NEIGHBOR_METHOD "one message to each neighbour (point-to-point)"
const char *mpb_xchg_method(int kind);

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
