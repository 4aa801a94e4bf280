/* SPDX-License-Identifier: MIT */
/*
** coll/: collectives on communicators, built on the p2p machinery (channel
** MPB_CH_COLL, filtered by communicator id), never on MPI collectives: an MPI
** collective interrupted by an abort can be neither completed nor
** cancelled, while these messages are drained by the abort protocol, and
** every wait is the one wait.
**
** Every message of a collective carries its signature in the header: the
** kind (flags bits 0-7), the reduction op (bits 8-15, 0: none), the root
** (aux, -1: none) and the collective's number on its communicator (seq). A
** rank that receives a message whose signature differs from its own call
** raises "mismatched collectives", naming what differs, instead of
** computing garbage.
*/
#ifndef MPB_COLL_H
#define MPB_COLL_H

#include "p2p/p2p.h"

enum { MPB_COLL_BCAST = 1, MPB_COLL_REDUCE, MPB_COLL_ALLRED, MPB_COLL_SCAN, MPB_COLL_GATHER,
       MPB_COLL_ALLGATHER, MPB_COLL_SCATTER, MPB_COLL_ALLTOALL, MPB_COLL_BARRIER,
       MPB_COLL_SPLIT, MPB_COLL_DUP,
       /* layout/ and topo/ (channel MPB_CH_DIST) */
       MPB_COLL_TRANSPOSE, MPB_COLL_HALO, MPB_COLL_NALLGATHER, MPB_COLL_NALLTOALL,
       MPB_COLL_SPARSE, MPB_COLL_ATTACH, MPB_COLL_DGATHER, MPB_COLL_DSCATTER, MPB_COLL_FILE,
       /* mpi/'s nonblocking collectives (channel MPB_CH_DIST) */
       MPB_COLL_IBARRIER, MPB_COLL_IBCAST, MPB_COLL_IREDUCE, MPB_COLL_IALLRED,
       MPB_COLL_IGATHER, MPB_COLL_ISCATTER, MPB_COLL_IALLGATHER, MPB_COLL_IALLTOALL,
       MPB_COLL_ISCAN, MPB_COLL_IEXSCAN,
       MPB_COLL_WIN, /* mpi/'s windows */
       MPB_NCOLL };
#define MPB_COLL_FUNC 0xfe /* op: a Lua function */

/* A call of an upper layer that a collective is made for (mp.mpi's
** mpi.Bcast over mp's bcast): mp's C function is called through a closure
** whose upvalue 2 is a light userdata pointing at one of these (upvalue 1
** nil: the method form, comm first). Errors, waits and the root check then
** name that call; its id travels in the header (flags bits 16-23), so a
** member in another such call is named by names[id]. */
typedef struct mpb_coll_call {
  unsigned id;               /* 1..255, the index of name in names */
  const char *name;          /* "mpi.Bcast" */
  const char *const *names;  /* every call's name by id */
} mpb_coll_call;

/* A collective call in progress. */
typedef struct mpb_coll {
  mpb_state *st;
  mpb_comm *c;
  const char *fname;
  int kind;
  int op;            /* reduction op (MPB_RED_*), MPB_COLL_FUNC, or -1: none */
  int fidx;          /* MPB_COLL_FUNC: the function's stack slot */
  int root;          /* -1: none */
  uint32_t seq;      /* its number on c in this task */
  const mpb_coll_call *call; /* the upper layer's call it is made for, or NULL */
} mpb_coll;

/* Begin a collective of this kind on the communicator at slot 1 (checked);
** op and root are set by the caller before the first message. */
mpb_coll mpb_coll_begin(lua_State *L, const char *fname, int kind);
/* Begin one on c directly (collectives made by other layers). */
mpb_coll mpb_coll_on(lua_State *L, mpb_state *st, mpb_comm *c, const char *fname, int kind);
/* Send the n values at first.. to comm rank r (made from the collective's
** argument #1: one that cannot travel is a bad argument #1); with ids, do not
** wait for parts sent in place (see mpb_send). */
void mpb_coll_send_vals(lua_State *L, mpb_coll *x, int r, int first, int n, uint64_t ids[2]);
/* The header of x's messages (kind, op, root in aux, seq, comm id). */
void mpb_coll_header(const mpb_coll *x, mpb_uhdr *h);
/* "allreduce", "transpose", ...: the Lua name of a collective kind. */
const char *mpb_coll_kind_name(int kind);
/* Take r's next message of this collective (raises on a mismatched one). */
mpb_msg *mpb_coll_take(lua_State *L, mpb_coll *x, int r);
/* Take it and push its one value. */
void mpb_coll_recv_val(lua_State *L, mpb_coll *x, int r);
/* Push the caller's own share of a result (the value at idx) as the others
** get theirs: a copy made by the codec (a value that cannot travel raises,
** naming argument arg). */
void mpb_coll_push_own(lua_State *L, mpb_coll *x, int idx, int arg);
/* Send / take exactly len raw bytes (no values). */
void mpb_coll_send_raw(lua_State *L, mpb_coll *x, int r, const void *p, size_t len);
void mpb_coll_take_raw(lua_State *L, mpb_coll *x, int r, void *out, size_t len);
/* Every member's len bytes, in comm rank order, into out. */
void mpb_coll_allgather_raw(lua_State *L, mpb_coll *x, const void *mine, size_t len, void *out);

/* ------------------------------------------------- agreements, agree.c
** The step before a blocking MPI collective on x's members: every member's
** vote (len bytes, in comm rank order) into out, as mpb_coll_allgather_raw.
** When it returns, every member returns from it (or will), so each makes
** the MPI call the caller makes next; when it raises, no member returns
** from it. An abort that comes in between is decided the same way on every
** member (agree.c says how): the caller makes its MPI call with no wait
** and no raise before it, and keeps what the call made where the abort
** protocol frees it; the abort is then taken at the next wait. */
#define MPB_SLOT_AGREE 2
void mpb_coll_agree(lua_State *L, mpb_coll *x, const void *mine, size_t len, void *out);
void mpb_open_agree(lua_State *L);

/* acc (at -2) op v (at -1) -> result at -2, v popped (numbers, booleans,
** typed arrays element-wise, tables field by field); own: acc may be
** updated in place. The op check of mpb_coll_op comes first. */
void mpb_coll_combine(lua_State *L, mpb_coll *x, int from, int own);
/* Check the op at slot idx (a name or a function at fidx) into x->op;
** arrays: the value at slot vidx must support it. */
void mpb_coll_op(lua_State *L, mpb_coll *x, int idx, int vidx);

/* Push an uninitialized array shaped like like (no zero fill). */
struct mpb_array *mpb_coll_push_uninit(lua_State *L, const struct mpb_array *like);
/* The root check of bcast, gather and scatter (coll.c): on entering the
** call, send this rank's root to the next member; at its end, take the
** previous member's checks that have come (raising a mismatch when one
** names another root). mpb_coll_settle, at the end of a task's body, waits
** for every check still due on every communicator. */
void mpb_coll_ring_send(lua_State *L, mpb_coll *x);
void mpb_coll_ring_take(lua_State *L, mpb_coll *x);
void mpb_coll_settle(lua_State *L);
/* Binomial-tree broadcast of the value at vidx from root: leaves the value
** on top (at root, its own). */
void mpb_coll_bcast_at(lua_State *L, mpb_coll *x, int vidx, int root);
/* The allreduce of the typed array at slot 2 with a named op (pushed). */
void mpb_coll_allreduce_array(lua_State *L, mpb_coll *x);

/* ---------------------------------------------- tagged messages, coll_dist.c
** The exchanges of layout/ and topo/ (transposes, halos, neighbourhood
** collectives, sparse exchanges) are collectives, numbered on their
** communicator with the others (mpb_coll_on) so that two calls never take
** each other's messages. They travel on MPB_CH_DIST and are matched by
** (communicator, task, number, sender, tag) instead of being taken in
** order: a nonblocking exchange may stay in flight while other collectives
** run, and a sender may send several messages in one call (tag: which). */

/* A message of len payload bytes for x with tag (in the header's aux): the
** header is written, the payload goes at buf + sizeof(mpb_uhdr). The caller
** fills it without raising, then hands buf to mpb_coll_tagged_send (or frees
** it). Raises when out of memory. */
char *mpb_coll_tagged_new(lua_State *L, const mpb_coll *x, int tag, size_t len);
/* Send such a message (taken: freed when MPI is done) to comm rank r. */
void mpb_coll_tagged_send(lua_State *L, mpb_coll *x, int r, char *buf, size_t len);
/* r's queued message of x with tag, or NULL; taken out of its inbox when take. */
mpb_msg *mpb_coll_tagged_find(mpb_state *st, const mpb_coll *x, int r, int tag, int take);
/* The one wait until ready(st, ud); raises "mismatched collectives" when a
** member is seen in another collective under x's number. *seen: how far the
** caller's earlier waits of this call looked for that (0 at first: every
** queue is looked at once, then only the queues of what arrives since). */
void mpb_coll_tagged_wait(lua_State *L, const mpb_coll *x, mpb_ready ready, void *ud,
                          uint64_t *seen);

/* Registration (methods of mp.Comm and mp.X on mp.world). */
void mpb_open_coll(lua_State *L);
void mpb_coll_reduce_methods(lua_State *L, int mpt);   /* coll_reduce.c */
void mpb_coll_move_methods(lua_State *L, int mpt);     /* coll_move.c */
void mpb_coll_comm_methods(lua_State *L, int mpt);     /* comm_split.c */

#endif
