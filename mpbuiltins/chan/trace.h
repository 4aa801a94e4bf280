/* SPDX-License-Identifier: MIT */
/*
** The trace recorder (DESIGN.md section 9): what each rank records while
** tracing is on, in plain C with no Lua on the hot path. Drawing, clock
** alignment, gathering and the file live above it (trace/).
**
** What it records: spans (a task, a send, a receive, a wait, a collective, a
** transpose, halo exchange or neighbourhood collective, a map job, a pool
** batch, an abort resynchronisation, a user region), which
** nest, and instants (a user mark; a user message leaving this rank or taken
** by its receiver). A span is open on a small stack while it runs and goes
** to the ring, a complete event, when it ends; instants go to the ring at
** once. The ring is bounded (its size is chosen at start): when it is full
** the oldest events are overwritten, never flushed mid-run.
**
** Messages are matched without sending anything extra: the sender's k-th
** user message to rank d since the last resynchronisation (st->sent_to) is
** the k-th one d delivers from it (st->recvd_from counts at arrival, in
** order per sender: arrive.c), and every rank counts its resynchronisations
** (st->naborts). (src, dst, naborts, k) names a message on both sides.
**
** Cost when off: st->trace is NULL, and every hook is one predictable branch
** on it (inline wrappers below). When on, an event costs a clock read (the
** CPU's time-stamp counter where it is invariant) and a few stores; spans
** begun from Lua also ask Lua for the calling line.
*/
#ifndef MPB_TRACE_H
#define MPB_TRACE_H

#include "chan/state.h"

/* Event types: spans, then instants. MPB_TR_DIST is an exchange of
** layout/ (a transpose, a halo exchange, a neighbourhood collective): a
** collective whose messages are its own kind in the matrix. */
enum { MPB_TR_TASK = 1, MPB_TR_SEND, MPB_TR_RECV, MPB_TR_WAIT, MPB_TR_COLL, MPB_TR_DIST,
       MPB_TR_MAP, MPB_TR_POOL, MPB_TR_RESYNC, MPB_TR_REGION,
       MPB_TR_MARK, MPB_TR_OUT, MPB_TR_IN, MPB_TR_NTYPES };
#define MPB_TR_INSTANT(type) ((type) >= MPB_TR_MARK)
/* Spans inside which no other span begins (an error that unwinds one of
** them leaves it open: the next span that begins closes it). */
#define MPB_TR_LEAF(type) ((type) >= MPB_TR_SEND && (type) <= MPB_TR_DIST)

/* Flags of an event. */
#define MPB_TRF_CUT 1      /* still open when tracing stopped: ends there */
#define MPB_TRF_UNWOUND 2  /* left by an error: ends where that was noticed */
#define MPB_TRF_START 4    /* DIST: a nonblocking start (iforward, iexchange) */
#define MPB_TRF_WAIT 8     /* DIST: the wait of a nonblocking one */

/* One event (48 bytes). Times are nanoseconds of this rank's monotonic clock
** (while recording, maybe ticks of the CPU's counter: trace.c, the clock). */
typedef struct mpb_tev {
  int64_t t0, t1;    /* t1 == t0: an instant */
  uint64_t bytes;    /* a span: bytes of the messages in it; OUT/IN: the message's */
  int32_t peer;      /* a rank of the runtime; -1: none; -2: several; COLL: the root;
                        DIST: how many peers the plan talks to (a count, not a rank) */
  uint32_t src, line;/* where Lua called it: a string id (0: unknown) and a line */
  uint32_t a, b;     /* by type: TASK task number, name; COLL/DIST seq, comm id;
                        SEND/RECV/WAIT -, a name (0: mp's own; mp.mpi gives its call's);
                        OUT/IN ordinal k, epoch; MAP job; POOL tasks; REGION/MARK name */
  uint8_t type;
  uint8_t sub;       /* TASK op, SEND/RECV/WAIT variant, COLL/DIST kind, OUT/IN channel */
  uint8_t sub2;      /* OUT/IN on MPB_CH_COLL or MPB_CH_DIST: the collective's kind;
                        a span: MPB_TRF_* */
  uint8_t depth;     /* open spans around it */
} mpb_tev;

#define MPB_TR_DEPTH 48    /* spans open at once (deeper ones are not recorded) */
/* Message kinds: a channel, or MPB_NCHAN + a collective's kind (a message on
** MPB_CH_COLL or MPB_CH_DIST; coll.h's kinds, checked by trace/ which knows them). */
#define MPB_TR_NCOLL 32
#define MPB_TR_KINDS (MPB_NCHAN + MPB_TR_NCOLL)

/* A rank's recorder. It outlives start/stop (gen tells the spans of one
** recording from the next); st->trace points to it only while it records. */
typedef struct mpb_trace {
  mpb_tev *ring;     /* [cap] */
  uint64_t cap, count;/* events ever recorded: the newest is ring[(count - 1) % cap] */
  mpb_tev open[MPB_TR_DEPTH];
  int depth, over;   /* open spans; spans begun beyond MPB_TR_DEPTH */
  uint32_t gen;
  int lines;         /* ask Lua for the calling line */
  int size;          /* ranks */
  uint64_t *row;     /* [MPB_TR_KINDS * size][2]: messages sent, and bytes, by kind and peer */
  /* strings: ids 1..nstr; str holds them NUL-terminated */
  char *str;
  size_t strlen, strcap;
  uint32_t *off, nstr, offcap;  /* off[id - 1]: offset in str */
  uint32_t *hash, hcap;         /* open addressing over ids (0: empty) */
  const char *last_src;         /* the last source pointer Lua gave, and its id */
  uint32_t last_src_id;
  int64_t t_start, t_stop;      /* ns */
  int tsc;                      /* events are stamped in TSC ticks until the stop (trace.c) */
  int64_t k_start, k_stop;      /* ticks at t_start and t_stop */
  void (*at_exit)(mpb_state *st); /* the layer above: stop and write at the end of the job */
} mpb_trace;

/* ------------------------------------------------------------- trace.c */
/* A recorder with a ring of `events` events for a job of `size` ranks;
** NULL when out of memory. */
mpb_trace *mpb_trace_new(uint64_t events, int size);
void mpb_trace_free(mpb_trace *t);
/* Start recording into t (cleared) / stop: the spans still open end now,
** flagged MPB_TRF_CUT. */
void mpb_trace_start(mpb_state *st, mpb_trace *t);
void mpb_trace_stop(mpb_state *st, mpb_trace *t);
/* The ring's events, oldest first, into out[0 .. n) (n = min(count, cap)). */
uint64_t mpb_trace_events(const mpb_trace *t, mpb_tev *out);
/* The id of a string (interned); 0 when out of memory. */
uint32_t mpb_trace_string(mpb_trace *t, const char *s, size_t len);
/* The string of an id ("" for 0). */
const char *mpb_trace_str(const mpb_trace *t, uint32_t id);
/* Nanoseconds of the monotonic clock. */
int64_t mpb_trace_now(void);

/* The recording itself (through the inline wrappers below). */
int mpb_tr_begin(lua_State *L, mpb_trace *t, int type, int sub, int peer, uint32_t a, uint32_t b);
void mpb_tr_close(mpb_trace *t, int level, int flags);
void mpb_tr_mark(lua_State *L, mpb_trace *t, uint32_t name);
void mpb_tr_sent(mpb_state *st, int dst, int chan, const void *msg, size_t len);
void mpb_tr_taken(mpb_state *st, mpb_msg *m);

/* ------------------------------------------------------------ the hooks */
/* A user message (header first, len bytes in all) left for dst on chan. */
static inline void mpb_trace_sent(mpb_state *st, int dst, int chan, const void *msg, size_t len) {
  if (__builtin_expect(st->trace != NULL, 0)) mpb_tr_sent(st, dst, chan, msg, len);
}
/* A user message was delivered to the mailbox (in order per sender): its
** ordinal, for the receive that will take it. */
static inline void mpb_trace_arrived(mpb_state *st, mpb_msg *m) {
  if (__builtin_expect(st->trace != NULL, 0))
    m->tk = (uint32_t)(st->recvd_from[m->src] - st->pending_from[m->src]);
}
/* The receiver takes m (once: a message is recorded where first taken). */
static inline void mpb_trace_taken(mpb_state *st, mpb_msg *m) {
  if (__builtin_expect(m->tk != 0, 0)) mpb_tr_taken(st, m);
}
/* The job ends: the layer above may write what was recorded. */
static inline void mpb_trace_exit(mpb_state *st) {
  if (__builtin_expect(st->trace != NULL, 0) && st->trace->at_exit) st->trace->at_exit(st);
}

/* A span that ends with the C scope it is declared in:
**   MPB_TRACE_SPAN(L, st, MPB_TR_COLL, kind, root, seq, comm);
** begins it (L: where to find the calling line, or NULL) and ends it when the
** function returns or the block is left. An error that unwinds the scope
** (longjmp) skips the end: the span ends at the next end of an enclosing
** span, the next span that begins inside a leaf, or a resynchronisation. */
typedef struct mpb_trace_scope {
  mpb_trace *t;
  uint32_t gen;
  int level;
} mpb_trace_scope;

static inline mpb_trace_scope mpb_trace_open(lua_State *L, mpb_state *st, int type, int sub,
                                             int peer, uint32_t a, uint32_t b) {
  mpb_trace_scope s = {st->trace, 0, 0};
  if (__builtin_expect(s.t != NULL, 0)) {
    s.gen = s.t->gen;
    s.level = mpb_tr_begin(L, s.t, type, sub, peer, a, b);
  }
  return s;
}

/* End the scope's span now (idempotent; the cleanup of MPB_TRACE_SPAN). */
static inline void mpb_trace_close(mpb_trace_scope *s) {
  if (__builtin_expect(s->t != NULL, 0)) {
    if (s->t->gen == s->gen && s->level > 0) mpb_tr_close(s->t, s->level, 0);
    s->t = NULL;
  }
}

#define MPB_TRACE_SPAN(L, st, type, sub, peer, a, b)                                   \
  mpb_trace_scope mpb_trace_span_ __attribute__((cleanup(mpb_trace_close))) =           \
      mpb_trace_open(L, st, type, sub, peer, a, b)
/* End the span of this scope's MPB_TRACE_SPAN now (before a longjmp). */
#define MPB_TRACE_END() mpb_trace_close(&mpb_trace_span_)

/* Set flags (MPB_TRF_START, MPB_TRF_WAIT) on the scope's span. */
static inline void mpb_trace_flag(mpb_trace_scope *s, int flags) {
  if (__builtin_expect(s->t != NULL, 0) && s->t->gen == s->gen && s->level > 0)
    s->t->open[s->level - 1].sub2 = (uint8_t)(s->t->open[s->level - 1].sub2 | flags);
}
#define MPB_TRACE_FLAG(flags) mpb_trace_flag(&mpb_trace_span_, flags)

/* The id of a name (a C string) while tracing, else 0. */
static inline uint32_t mpb_trace_name(mpb_state *st, const char *name) {
  return st->trace ? mpb_trace_string(st->trace, name, __builtin_strlen(name)) : 0;
}

/* A user mark (an instant named by string id name). */
static inline void mpb_trace_mark(lua_State *L, mpb_state *st, uint32_t name) {
  if (st->trace) mpb_tr_mark(L, st->trace, name);
}

#endif
