/* SPDX-License-Identifier: MIT */
/*
** p2p/: communicators ("mp.Comm"), send/recv on them, and requests. A
** communicator is a list of ranks plus an id carried in every message
** header (mpb_uhdr.comm): all traffic still goes over st->user, and a
** receiver takes only the messages of the communicator it waits on. No MPI
** communicator is created, so thousands of aborts spend no context id. Ids
** are unique by construction (see mpb_comm_new_id); the collectives that
** make communicators (split, dup) live in coll/.
*/
#ifndef MPB_P2P_H
#define MPB_P2P_H

#include "chan/chan.h"
#include "p2p/comm_ranks.h"

#define MPB_COMM_MT "mp.Comm"
/* The methods table of communicators (coll/ and request.c add to it). */
#define MPB_COMM_METHODS "mp.Comm.methods"

#define MPB_COMM_RING 32 /* root checks a rank may run ahead of its predecessor's */

/* What p2p/ keeps per state (in st->slot[MPB_SLOT_P2P], made by mpb_open_comm). */
#define MPB_SLOT_P2P 0
typedef struct mpb_p2p {
  const void *comm_mt;         /* the communicators' metatable (comm.c: a fast check) */
  struct mpb_comm *world;      /* mp.world (anchored in the registry for the state's life) */
  uint32_t comm_ids;           /* communicator ids used in task comm_ids_task (comm.c) */
  int64_t comm_ids_task;
  struct mpb_req *posted;      /* the arrival hook's list of posted irecvs (request.c) */
  uint64_t stamps;             /* lists of requests checked (request.c: duplicates) */
  uint64_t probe_seen;         /* user arrivals when mp.probe last returned a list (p2p.c) */
  int64_t probe_task;          /* the task of that probe */
} mpb_p2p;
static inline mpb_p2p *mpb_p2p_of(mpb_state *st) { return st->slot[MPB_SLOT_P2P]; }

typedef struct mpb_comm {
  uint32_t id;       /* 0: world */
  int64_t task;      /* task it was made in; -1: world (lives for ever) */
  int rank, size;    /* this rank's place in it, its size */
  uint32_t nseq;     /* collectives begun on it in task seq_task (coll/) */
  int64_t seq_task;
  /* coll/'s root check: this rank's rooted collectives (seq, kind, root)
  ** whose message from the previous member is not taken yet, oldest first */
  int ring_n;
  struct { uint32_t seq; int32_t root; int kind; const void *call; } ring[MPB_COMM_RING];
  int *ranks;        /* comm rank -> rank of the runtime [size] */
  int *order;        /* comm ranks sorted by rank of the runtime [size] (comm_ranks.h) */
} mpb_comm;

/* The comm rank of runtime rank w in c, or -1: O(1) on mp.world and on a
** run of consecutive ranks, else a binary search (no per-job array). */
static inline int mpb_comm_of(const mpb_comm *c, int w) {
  return mpb_ranks_find(c->ranks, c->order, c->size, w);
}

/* ------------------------------------------------------------- comm.c */
/* Push a new communicator of n members made in this task (ranks filled by
** the caller, then mpb_comm_index). Its user value 1 (nil) is what an upper
** layer attaches to it (layout/: a topology, comm:with_topology). */
mpb_comm *mpb_comm_new(lua_State *L, mpb_state *st, int n, uint32_t id);
void mpb_comm_index(mpb_state *st, mpb_comm *c);
/* The id this rank proposes for its next communicator. Every member of a
** new communicator proposes one, all take the largest, and each moves past
** it (mpb_comm_used_id): a rank's ids only grow within a task, so no two
** communicators a rank belongs to share an id. */
uint32_t mpb_comm_next_id(lua_State *L, mpb_state *st);
void mpb_comm_used_id(mpb_state *st, uint32_t id);
/* Raise unless a task runs and nothing (an abort, Ctrl-C, an MPI error)
** is pending (p2p.c). */
void mpb_check_task(lua_State *L, mpb_state *st, const char *fname);
/* Raise unless the call has at most max arguments from slot a on: an
** extra one is a mistake (mp.recv(src, tag): there are no tags), never
** ignored. what says what fname takes ("at most a source rank"). */
void mpb_check_nargs(lua_State *L, mpb_state *st, int a, int max, const char *fname,
                     const char *what);
/* The communicator at idx, checked to be usable now ("communicator from an
** earlier task" otherwise); fname names the caller in errors. */
mpb_comm *mpb_comm_check(lua_State *L, mpb_state *st, int idx, const char *fname);
/* Push mp.world. */
void mpb_comm_pushworld(lua_State *L);
/* The rank of c at stack slot idx, checked (errors call it argument arg).
** Inline, as are mpb_comm_self and mpb_comm_dests below: they sit on the
** path of every small message, and only their errors are out of line. */
int mpb_comm_badrank(lua_State *L, mpb_state *st, const mpb_comm *c, int idx, int arg,
                     const char *fname);
static inline int mpb_comm_checkrank(lua_State *L, mpb_state *st, const mpb_comm *c, int idx,
                                     int arg, const char *fname) {
  int ok;
  lua_Integer r = lua_tointegerx(L, idx, &ok);
  if (ok && r >= 0 && r < c->size) return (int)r;
  return mpb_comm_badrank(L, st, c, idx, arg, fname);
}
/* methods[name] = f and mp[name] = f on mp.world (mpt: index of the mp
** table); f finds its communicator with mpb_comm_self. */
void mpb_comm_setboth(lua_State *L, int mpt, const char *name, lua_CFunction f);
/* In a function registered by mpb_comm_setboth: the communicator it runs on
** (checked, as mpb_comm_check does) and in *a the stack slot of its first
** argument after the communicator (1 for mp.X(...), 2 for comm:X(...)). */
static inline mpb_comm *mpb_comm_self(lua_State *L, mpb_state *st, const char *fname, int *a) {
  mpb_comm *w = lua_touserdata(L, lua_upvalueindex(1));
  if (w) {
    if (!st->in_task || st->aborting || mpb_sigint || st->mpi_err[0])
      mpb_check_task(L, st, fname);
    *a = 1;
    return w;
  }
  *a = 2;
  return mpb_comm_check(L, st, 1, fname);
}
/* methods[name] = f and mp[name] = fw, a plain function that runs f's work
** on mp.world (found with mpb_comm_world): for the calls of every small
** message, which then skip the look at an upvalue. */
void mpb_comm_setpair(lua_State *L, int mpt, const char *name, lua_CFunction f,
                      lua_CFunction fw);
/* mp.world, for a function registered by mpb_comm_setpair (checked as
** mpb_comm_self does: a task runs and nothing is pending). */
static inline mpb_comm *mpb_comm_world(lua_State *L, mpb_state *st, const char *fname) {
  if (!st->in_task || st->aborting || mpb_sigint || st->mpi_err[0])
    mpb_check_task(L, st, fname);
  return mpb_p2p_of(st)->world;
}
/* There, where the communicator's userdata is (to keep it alive). */
static inline int mpb_comm_slot(int a) { return a == 1 ? lua_upvalueindex(1) : 1; }
/* The channel of send/recv on c. */
static inline int mpb_comm_user_chan(const mpb_comm *c) {
  return c->id ? MPB_CH_CUSER : MPB_CH_USER;
}
/* The destinations of a send at stack slot idx: a rank of c or a non-empty
** list of them (errors name fname and argument arg). A list is read once,
** its length and then each item (metamethods honoured once each, so a proxy
** answers once), into C storage that later reads never go back from: ranks
** (into buf when they fit in nbuf, else into a userdata pushed on the
** stack). Returns how many, *ranks pointing at them. */
lua_Integer mpb_comm_destlist(lua_State *L, mpb_state *st, const mpb_comm *c, int idx, int arg,
                              const char *fname, int *buf, int nbuf, const int **ranks);
static inline lua_Integer mpb_comm_dests(lua_State *L, mpb_state *st, const mpb_comm *c, int idx,
                                         int arg, const char *fname, int *buf, int nbuf,
                                         const int **ranks) {
  int ok;
  lua_Integer r = lua_tointegerx(L, idx, &ok);
  *ranks = buf;
  if (ok && r >= 0 && r < c->size) {
    buf[0] = (int)r;
    return 1;
  }
  if (lua_istable(L, idx)) return mpb_comm_destlist(L, st, c, idx, arg, fname, buf, nbuf, ranks);
  return mpb_comm_badrank(L, st, c, idx, arg, fname);
}
#define MPB_DESTS_BUF 16 /* destinations a caller keeps on its C stack */

/* An MPI communicator of c's members, for the calls that need a real one
** (MPI-IO, windows): mpb_ccomm's for mp.world (*own 0), else a new one made
** with MPI_Comm_create_group (*own 1: the caller frees it). Collective over
** c's members and blocking: call it only once every member is known to be
** here (after an mplua collective on c agreed), so it cannot wait for a rank
** that faulted. Returns MPI's code. */
int mpb_comm_mpi(mpb_state *st, const mpb_comm *c, MPI_Comm *out, int *own);

/* Send the message in b to comm rank r on chan (last: the buffer may be
** taken); ids as mpb_send's. */
static inline void mpb_comm_send(lua_State *L, mpb_state *st, const mpb_comm *c, int r, int chan,
                                 struct mpb_wbuf *b, int last, uint64_t ids[2]) {
  mpb_uhdr h = {0, c->id, 0, 0, 0};
  mpb_send(L, st, c->ranks[r], chan, b, last, &h, ids);
}
/* The oldest queued message of c on chan from comm rank src (-1: any), or
** NULL; taken out of its inbox when take. Inline for the spin's case (an
** empty inbox), which a wait for one sender meets on every poll. */
mpb_msg *mpb_comm_find(mpb_state *st, const mpb_comm *c, int chan, int src, int take);
static inline mpb_msg *mpb_comm_peek(mpb_state *st, const mpb_comm *c, int chan, int src,
                                     int take) {
  if (src >= 0 && !mpb_inbox(st, chan, c->ranks[src])->head) return NULL;
  return mpb_comm_find(st, c, chan, src, take);
}
/* Wait (the one wait) for such a message and take it. */
mpb_msg *mpb_comm_take(lua_State *L, mpb_state *st, const mpb_comm *c, int chan, int src,
                       const char *fname);

/* ---------------------------------------------------------------- openers */
void mpb_open_comm(lua_State *L);    /* mp.world, the mp.Comm metatable */
void mpb_open_p2p(lua_State *L);     /* send, recv, probe (mp.X and methods) */
void mpb_open_request(lua_State *L); /* isend, irecv, wait, test, waitall, waitany */

#endif
