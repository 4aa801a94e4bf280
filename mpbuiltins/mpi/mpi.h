/* SPDX-License-Identifier: MIT */
/*
** mpi/: `mp.mpi`, MPI's own vocabulary (tags, wildcards, statuses, requests,
** synchronous sends, collectives under MPI's names) on the runtime of
** p2p/ and coll/ (DESIGN.md section 13).
**
** Its messages travel on their own channel (MPB_CH_MPI), so mp.recv never
** sees them; the header carries the communicator id (comm), the tag (aux)
** and, for a synchronous send, a token (seq) the receiver acknowledges when
** it matches the message. Matching is MPI's: a receive takes the oldest
** queued message of its communicator from its source (or, for ANY_SOURCE,
** the oldest among the first of each source) whose tag it accepts; receives
** posted by Irecv match first, in posting order. Messages from one sender
** stay in order (one queue per sender), so MPI's non-overtaking rule holds.
** The matching is done by whoever looks (a call, or a wait's ready
** function): it needs no Lua, so a wait can match while it waits; the
** acknowledgements it owes are sent when that wait returns to C.
*/
#ifndef MPB_MPI_H
#define MPB_MPI_H

#include "p2p/p2p.h"

/* MPICH's values, so that a prototype prints what its C would. */
#define MPB_MPI_ANY_SOURCE (-2)
#define MPB_MPI_PROC_NULL (-1)
#define MPB_MPI_ANY_TAG (-1)
#define MPB_MPI_UNDEFINED (-32766)

#define MPB_MPI_F_SSEND 1u /* header flags: a synchronous send (with a token) */
#define MPB_MPI_F_ACK 2u   /* its acknowledgement (the same token, no body) */
#define MPB_MPI_TOKEN_SHIFT 2 /* the token's bits in flags (within MPB_UF_USER) */
#define MPB_MPI_TOKENS 0x3fffu
static inline uint32_t mpb_mpi_token(uint32_t flags) {
  return (flags >> MPB_MPI_TOKEN_SHIFT) & MPB_MPI_TOKENS;
}
/* The next token, 1..MPB_MPI_TOKENS (0: none); unique among a rank's
** unacknowledged synchronous sends unless 16383 are in flight at once. */
static inline uint32_t mpb_mpi_next_token(uint32_t *tokens) {
  *tokens = *tokens % MPB_MPI_TOKENS + 1;
  return *tokens;
}
#define MPB_MPI_ACKS 64    /* acknowledgements owed before they are sent */

typedef struct mpb_mpireq mpb_mpireq;

/* The wing's state, one per lua_State (a userdata in the registry and the
** upvalue of every mpi function). */
typedef struct mpb_mpi {
  mpb_state *st;
  mpb_comm *world;              /* mp.world (COMM_WORLD) */
  mpb_msg *held;                /* a message taken by a wait, until its values are pushed */
  int64_t task, naborts;        /* what the posted list below belongs to */
  mpb_mpireq *posted, *posted_tail; /* receives posted by Irecv, in posting order */
  uint32_t tokens;              /* synchronous sends made */
  uint64_t stamps;              /* lists of requests checked (mpi_req.c: duplicates) */
  int nacks;
  struct { int dst; uint32_t comm, token; } acks[MPB_MPI_ACKS];
  /* the seeded scheduler (mpi_sched.c) */
  int sched;                    /* MPLUA_SCHEDULE is set */
  uint64_t seed, rng, decisions;
  int64_t sched_task;           /* the generator's task numbers count from this one */
  double patience;              /* seconds a wildcard receive waits for more candidates */
  char *log;                    /* MPLUA_SCHEDULE_LOG: file of this rank's choices (malloc'ed) */
  int file_fault;               /* the test knob mp.mpi._file_fault (mpi_file.c): armed, or 0 */
  int64_t file_fault_task;
} mpb_mpi;

/* A posted or matched receive, a send in flight (mpi_req.c). */
struct mpb_mpireq {
  mpb_mpireq *prev, *next;      /* in M->posted while posted */
  int kind, state, posted, cancelled, acked;
  uint64_t stamp;               /* lists: the duplicate check */
  int64_t task, naborts;
  uint64_t ids[2];              /* sends: their MPI sends */
  int peer;                     /* comm rank, MPB_MPI_ANY_SOURCE or MPB_MPI_PROC_NULL */
  int tag;                      /* receive: tag or ANY_TAG; send: its tag */
  uint32_t token;               /* synchronous send: the token acknowledged */
  const mpb_comm *c;            /* anchored in user value 1 */
  mpb_msg *m;                   /* receive: the message it matched, owned */
  struct mpb_icoll *icoll;      /* a nonblocking collective: its state (mpi_icoll.c) */
};
enum { MPB_RQ_INERT, MPB_RQ_SEND, MPB_RQ_SSEND, MPB_RQ_RECV, MPB_RQ_COLL, MPB_RQ_RMA, MPB_RQ_FILE };
enum { MPB_RQ_PENDING, MPB_RQ_READY, MPB_RQ_USED };

/* ------------------------------------------------------- mpi_match.c */
/* The state (upvalue 1 of the calling C function); forgets the posted
** receives of a finished or aborted task. */
mpb_mpi *mpb_mpi_get(lua_State *L);
/* Settle what has arrived: posted receives take their messages, in
** posting order. Returns how many did (no Lua, never raises). */
int mpb_mpi_settle(mpb_mpi *M);
/* The message a receive (src a comm rank or ANY_SOURCE, tag or ANY_TAG)
** would take now, or NULL; taken out of its queue when take is 1 (and its
** acknowledgement owed); take 2: left queued, but a wildcard's candidate is
** chosen by the scheduler as a take's would be (probes). No Lua, never raises. */
mpb_msg *mpb_mpi_match(mpb_mpi *M, const mpb_comm *c, int src, int tag, int take);
/* Post r (an Irecv that matched nothing yet) / take it off the list. */
void mpb_mpi_post(mpb_mpi *M, mpb_mpireq *r);
void mpb_mpi_unpost(mpb_mpi *M, mpb_mpireq *r);
/* Take the acknowledgement of token from world rank w, if it has come. */
int mpb_mpi_take_ack(mpb_mpi *M, int w, uint32_t comm, uint32_t token);
/* Send the acknowledgements owed. */
void mpb_mpi_flush(lua_State *L, mpb_mpi *M);
/* The one wait until ready(M->st, ud), matching (and acknowledging) as it
** waits; d describes it (NULL: not a wait for a message). */
void mpb_mpi_wait(lua_State *L, mpb_mpi *M, mpb_ready ready, void *ud, const mpb_waitdesc *d);
/* How many members of c have a message the receive (ANY_SOURCE, tag) could
** take, and whether c's own rank is one of them. */
int mpb_mpi_candidates(mpb_mpi *M, const mpb_comm *c, int tag, int *self);

/* --------------------------------------------------------- mpi_args.c */
/* The communicator at idx (checked), mp.world when none or nil; raises
** outside a task. */
mpb_comm *mpb_mpi_comm(lua_State *L, mpb_mpi *M, int idx, const char *fname);
/* A destination (comm rank or PROC_NULL) / a source (also ANY_SOURCE). */
int mpb_mpi_dest(lua_State *L, mpb_state *st, const mpb_comm *c, int idx, const char *fname);
int mpb_mpi_source(lua_State *L, mpb_state *st, const mpb_comm *c, int idx, const char *fname);
/* A send's tag (0..TAG_UB) / a receive's (also ANY_TAG). */
int mpb_mpi_tag(lua_State *L, mpb_state *st, int idx, int any, const char *fname);
/* "mpi.Recv(ANY_SOURCE, tag 7)" into buf: a wait's words. */
void mpb_mpi_describe(char *buf, size_t n, const char *fname, int src, int tag);
/* A trace span's name, as mpb_mpi_describe's words (tag MPB_MPI_NOTAG: fname
** alone), interned; 0 when the rank is not tracing (the span is mp's then). */
#define MPB_MPI_NOTAG (-0x7fffffff)
uint32_t mpb_mpi_trname(mpb_state *st, const char *fname, int src, int tag);
/* A trace region named fname around the rest of the C scope (the files' and
** windows' calls: their spans inside keep their own names). */
#define MPB_MPI_REGION(L, st, fname)                                                    \
  MPB_TRACE_SPAN(L, st, MPB_TR_REGION, 0, -1, mpb_mpi_trname(st, fname, 0, MPB_MPI_NOTAG), 0)
/* The world rank of comm rank r (-1 for ANY_SOURCE, PROC_NULL): a span's peer. */
static inline int mpb_mpi_peer(const mpb_comm *c, int r) { return r >= 0 ? c->ranks[r] : -1; }
/* Push the value of m (taken) and its status (st.source, st.tag, st.count). */
int mpb_mpi_push(lua_State *L, mpb_state *st, const mpb_comm *c, mpb_msg *m,
                 const char *fname);
/* Create the metatable of statuses (at opening). */
void mpb_mpi_status_open(lua_State *L);
/* Push the status of a receive from PROC_NULL, or of a cancelled one. */
void mpb_mpi_push_null(lua_State *L, int cancelled);
/* Push the status of a file's read of count elements (source PROC_NULL). */
void mpb_mpi_push_count(lua_State *L, lua_Integer count);
/* Push the status of m without taking it (probes). */
void mpb_mpi_push_status(lua_State *L, const mpb_comm *c, const mpb_msg *m);
/* Send the value at vidx to comm rank dest with tag (token: synchronous,
** 0: not); ids as mpb_send's. */
void mpb_mpi_send(lua_State *L, mpb_state *st, const mpb_comm *c, int vidx, int dest, int tag,
                  uint32_t token, uint64_t ids[2], const char *fname);

/* --------------------------------------------------------- mpi_sched.c */
/* Read MPLUA_SCHEDULE (and MPLUA_SCHEDULE_LOG, MPLUA_SCHEDULE_WAIT). */
void mpb_mpi_sched_init(mpb_mpi *M);
/* Restart the generator from (seed, rank, task - sched_task) (a task's start). */
void mpb_mpi_sched_reseed(mpb_mpi *M);
/* mpi.Schedule(seed | nil) */
int mpb_mpi_schedule(lua_State *L);
/* Choose one of n candidates (the seeded scheduler; records the choice). */
int mpb_mpi_sched_pick(mpb_mpi *M, int n, const int *srcs);
/* A wildcard receive under the scheduler: wait until every member has a
** candidate, or patience has passed since the first came. */
void mpb_mpi_sched_gather(lua_State *L, mpb_mpi *M, const mpb_comm *c, int tag,
                          const char *fname);

/* ----------------------------------------------------------- mpi_req.c */
/* Push a new request of kind on the communicator at cidx (its user value 1;
** nil: mp.world), with size bytes (>= sizeof(mpb_mpireq)) and nuv user values. */
mpb_mpireq *mpb_mpi_req_new(lua_State *L, mpb_mpi *M, const mpb_comm *c, int cidx, int kind,
                            size_t size, int nuv);

/* --------------------------------------------------------- mpi_icoll.c */
/* Whether the nonblocking collective of r can be delivered (complete, or
** found mismatched). No Lua, never raises. */
int mpb_mpi_icoll_done(mpb_mpi *M, mpb_mpireq *r);
/* Push its result (what the blocking call returns: 0 or 1 value), taking
** its messages; raises on a mismatch. */
int mpb_mpi_icoll_push(lua_State *L, mpb_mpi *M, mpb_mpireq *r, const char *fname);
/* Drop what r's result was to be made of (r is collected). */
void mpb_mpi_icoll_forget(lua_State *L, mpb_mpireq *r);
/* "mpi.Wait(Ibcast, root 2)" into buf: a wait's words; *seq its number. */
void mpb_mpi_icoll_describe(char *buf, size_t n, const char *fname, const mpb_mpireq *r,
                            uint32_t *seq);

/* --------------------------------------------------------- mpi_winreq.c */
/* A window's request (Rput, Rget, Raccumulate): complete? (no Lua, never
** raises); push its result (Rget: the array; raises MPI's error); r is
** collected. */
int mpb_mpi_rma_done(mpb_mpi *M, mpb_mpireq *r);
int mpb_mpi_rma_push(lua_State *L, mpb_mpi *M, mpb_mpireq *r, const char *fname);
void mpb_mpi_rma_forget(lua_State *L, mpb_mpireq *r);

/* -------------------------------------------------------- mpi_fileireq.c */
/* A file's request (Iwrite_at, Iread_all, ...): the same three. */
int mpb_mpi_fio_done(mpb_mpi *M, mpb_mpireq *r);
int mpb_mpi_fio_push(lua_State *L, mpb_mpi *M, mpb_mpireq *r, const char *fname);
void mpb_mpi_fio_forget(lua_State *L, mpb_mpireq *r);

/* ---------------------------------------------------------- openers */
void mpb_open_mpi(lua_State *L);          /* mp.mpi (mpi_p2p.c) */
void mpb_mpi_req_funcs(lua_State *L);     /* requests, into the table on top (mpi_req.c) */
void mpb_mpi_icoll_funcs(lua_State *L);   /* nonblocking collectives, likewise (mpi_icoll.c) */
void mpb_mpi_file_funcs(lua_State *L);    /* MPI-IO, into the table on top (mpi_file.c) */
void mpb_mpi_win_funcs(lua_State *L);     /* windows, into the table on top (mpi_win.c) */
/* Push name(f, label[, root arg]), which mpi_trace.lua calls to name the
** Lua calls' waits in reports; installs the describer (mpi_names.c). */
void mpb_mpi_names_push(lua_State *L);
/* Push call(method, name), which mpi_coll.lua calls to reach mp's
** collectives as MPI's call name (mpi_names.c). */
void mpb_mpi_calls_push(lua_State *L);
#define MPB_SLOT_WIN 3                    /* mpi_win.c's state in st->slot */

#endif
