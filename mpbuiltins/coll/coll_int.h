/*
** What the collectives files (coll.c, coll_move.c) share: the collective
** kinds (carried in each message's header flags, so that mismatched
** collectives are reported), a call's context, and sending/taking values.
*/
#ifndef MPB_COLL_INT_H
#define MPB_COLL_INT_H

#include "p2p/comm.h"

enum { K_BCAST = 1, K_REDUCE, K_ALLRED, K_SCAN, K_GATHER, K_ALLGATHER, K_SCATTER,
       K_ALLTOALL, K_BARRIER, K_SPLIT, K_NKIND };
typedef struct {
  mpb_state *st;
  mpb_comm *c;
  const char *fname;
  int kind;
} ctx;

/* The context of a collective call on the communicator at slot 1. */
ctx mpb_coll_begin(lua_State *L, const char *fname, int kind);
/* Send the n values at first.. to comm rank r / take r's next message of this
** collective (raises on a mismatched one) / take it and push its one value. */
void mpb_coll_send_vals(lua_State *L, ctx *x, int r, int first, int n);
mpb_msg *mpb_coll_take(lua_State *L, ctx *x, int r);
void mpb_coll_recv_val(lua_State *L, ctx *x, int r);
/* Register gather, allgather, scatter, alltoall (coll_move.c). */
void mpb_coll_move_methods(lua_State *L, int mpt);

#endif
