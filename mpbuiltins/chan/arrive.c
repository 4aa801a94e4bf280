/* SPDX-License-Identifier: MIT */
/*
** Receiving. mpb_poll probes the control and user communicators with
** nonblocking matched probes and receives what it finds:
** - a message of a few KiB is received at once (MPI_Mrecv of a matched,
**   eager message does not wait for anyone);
** - a larger one is received with MPI_Imrecv, and becomes an arrival in
**   flight unless it is complete at once (an eager message is, and is
**   delivered in the same poll rather than a poll or two later);
** - the header of a message in parts (chan_int.h) is checked like the wire
**   decoder checks a body, then receives for every part are posted straight
**   into place on `bulk`: arrays into the message's buffer, long strings
**   each into a block of its own that the decoder hands to Lua as the
**   string's memory (wire/wire_lstr.h), so they are not copied again.
** Arrivals complete in later polls, inside the one wait, so nothing blocks
** and an abort can drain them. Each sender's messages are delivered in the
** order they were sent: one that completes early waits for its elders.
** Delivered control messages go to the handler table (ctl.c), user
** messages to the mailbox.
**
** Running out of memory. Every message larger than 64 KiB travels in parts
** (send.c), so what arrives whole is small, and a message too large for the
** memory left announces its size in a small header first. When its buffer
** cannot be had, even after a full collection, its parts are received into
** nothing (MPI truncates them and each sender's send completes, so the
** abort protocol's counts hold) and the header is delivered in its place,
** marked lost: whoever takes it raises "out of memory receiving a message
** of N bytes from rank R", a fault of this rank's task, and the session
** goes on. The small blocks this needs come from reserves (a message buffer
** and an arrival record, kept in the state); only a rank that cannot hold
** even a header or a command ends the job.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/arrive.h"
#include "chan/ctl.h"
#include "chan/frame.h"
#include "chan/mailbox.h"
#include "chan/outbox.h"
#include "wire/wire_lstr.h"

#define RECV_NOW 4096 /* bytes: received in the probing call */

enum { A_HDR, A_GC, A_PARTS, A_DRAIN, A_DONE };

struct mpb_arrival {
  mpb_arrival *next;
  mpb_msg *m;         /* A_HDR: in flight; A_GC, A_DRAIN: its header; then the whole message */
  int ctl, src, stage;
  int gc_full;        /* a full collection has run since its header came (or none can) */
  int64_t ndone, nreq;
  uint64_t tag;       /* A_DRAIN: the tag of its parts */
  MPI_Request *req;   /* A_PARTS: one receive per part */
  MPI_Request one;    /* A_HDR: the message; A_DRAIN: the part being drained */
};

static int key(const mpb_state *st, int ctl, int src) { return ctl ? st->size + src : src; }

/* An MPI failure while receiving from src: the peer or MPI is gone. */
static void fail(mpb_state *st, int rc, const char *what, int src) {
  char s[96];
  snprintf(s, sizeof s, "%s from rank %d", what, src);
  mpb_fatal_mpi(st, rc, s);
}

/* A receive MPI truncated: what a drain does on purpose, and what a part
** longer than its header announced gets. */
static int truncated(int rc) {
  int cls = 0;
  return MPI_Error_class(rc, &cls) == MPI_SUCCESS && cls == MPI_ERR_TRUNCATE;
}

/* ------------------------------------------------------------ delivery */
static void deliver(mpb_state *st, mpb_msg *m, int ctl) {
  if (ctl) mpb_ctl_dispatch(st, m);
  else mpb_user_arrived(st, m);
}

static void enqueue(mpb_state *st, mpb_arrival *a) {
  a->next = NULL;
  *st->arrivals_tail = a;
  st->arrivals_tail = &a->next;
  st->pending_from[key(st, a->ctl, a->src)]++;
}

/* A record from malloc, or the spare kept so that a message is never lost
** for want of the record's few bytes (replaced as soon as memory allows). */
static mpb_arrival *new_arrival(mpb_state *st, mpb_msg *m, int ctl) {
  mpb_arrival *a = calloc(1, sizeof *a);
  if (!a && (a = st->arrival_spare)) {
    st->arrival_spare = NULL;
    memset(a, 0, sizeof *a);
  }
  if (!a) mpb_fatal(st, "out of memory receiving a message from rank %d", m->src);
  if (!st->arrival_spare) st->arrival_spare = calloc(1, sizeof *a);
  a->m = m;
  a->ctl = ctl;
  a->src = m->src;
  return a;
}

static void free_arrival(mpb_state *st, mpb_arrival *a) {
  if (!st->arrival_spare) st->arrival_spare = a;
  else free(a);
}

/* ------------------------------------------------------- message parts */
/* Lay out the message whose header h announces f: the whole message, its
** parts still to come (their places in w->parts); NULL when out of memory.
** h is not freed. */
static mpb_msg *lay_out(mpb_state *st, const mpb_msg *h, const mpb_frame *f) {
  size_t n = (size_t)f->nparts, apart = 0;
  int nstrs = 0;
  mpb_part *parts = calloc(n, sizeof *parts);
  mpb_wire_str *strs = parts && mpb_lstr_on(st->lstr) ? calloc(n, sizeof *strs) : NULL;
  if (!parts) return NULL;
  for (size_t i = 0; strs && i < n; i++) { /* long strings: places Lua can adopt */
    size_t at, len;
    int str;
    mpb_frame_part(f, i, &at, &len, &str);
    if (str && (parts[i].to = mpb_lstr_alloc(st->lstr, len))) {
      strs[nstrs].len = len;
      strs[nstrs++].s = parts[i].to;
      apart += len & ~(size_t)7; /* len % 8 bytes stay: what follows keeps its alignment */
    }
  }
  mpb_msg *w = mpb_msg_new(&st->msgmem, f->inlen + f->total - apart);
  if (!w) {
    for (int k = 0; k < nstrs; k++) mpb_lstr_free(st->lstr, strs[k].s, strs[k].len);
    free(strs);
    free(parts);
    return NULL;
  }
  w->src = h->src;
  w->chan = h->chan;
  w->parts = parts;
  w->nparts = (int)n;
  w->lstr = st->lstr;
  w->strs = strs;
  w->nstrs = nstrs;
  size_t from = 0, to = 0;
  for (size_t i = 0, k = 0; i < n; i++) {
    size_t at, len;
    int str;
    mpb_frame_part(f, i, &at, &len, &str);
    memcpy(w->buf + to, h->buf + from, at - from);
    to += at - from;
    from = at;
    parts[i].pos = to;
    parts[i].len = len;
    if (parts[i].to) { /* apart: its bytes would begin here, a gap of len % 8 stands for them */
      strs[k++].at = to - sizeof(mpb_uhdr);
      to += len & 7;
      continue;
    }
    parts[i].to = w->buf + to;
    to += len;
  }
  memcpy(w->buf + to, h->buf + from, f->inlen - from);
  mpb_uhdr u;
  memcpy(&u, w->buf, sizeof u);
  u.flags &= ~MPB_UF_SPLIT;
  memcpy(w->buf, &u, sizeof u);
  return w;
}

/* A large message is best received into the block its predecessor just
** left, still in cache: writing a MiB into memory the cache lost costs
** about as much again as the transfer itself, so a stream of messages
** that each land in fresh memory falls well behind raw MPI, which reuses
** one buffer. The predecessor (a string Lua adopted, or the
** buffer of an array's view) is usually dead by then but not yet
** collected: Lua's own pace frees it only when the heap has grown by a
** share of its size, which after one large value has lived can be many
** such blocks later. So before the places of a message of a MiB or
** more are chosen, the wait or the poll hook runs one basic step of the
** collector (nothing may run Lua here: the parts wait, stage A_GC, for
** mpb_arrivals_collect). In generational mode, the interpreter's, that is
** a minor collection, which frees the young dead predecessor for little;
** in incremental mode, a bounded piece of the cycle. A step that costs
** more than the cache misses it could save (a collector that does a full
** collection for every step: a large old heap in generational mode) makes
** the next ones skip, for twice as many messages each time. The largest
** messages, which no cache holds, wait for a full collection when the
** spare buffer of the last one (chan/msg.c) would not fit, and so does a
** message whose buffer cannot be had, as Lua's own allocations do. */
#define BIG ((size_t)64 << 20)
#define REUSE_MIN ((size_t)1 << 20)
#define STEP_SEC_PER_MIB 50e-6 /* a step may cost this per MiB it waits for */
#define SKIP_MAX 1024

static int wants_gc(mpb_state *st, const mpb_msg *h, size_t *size) {
  mpb_frame f;
  if (mpb_frame_parse(h->buf, h->len, (uint64_t)st->tag_ub, &f, NULL, 0) != 0) return 0;
  *size = f.inlen + f.total;
  if (*size >= BIG) return mpb_msg_spare(&st->msgmem) < *size ? 2 : 0;
  if (*size < REUSE_MIN) return 0;
  if (st->gc_skip_left > 0) {
    st->gc_skip_left--;
    return 0;
  }
  return 1;
}

static void post_parts(mpb_state *st, mpb_arrival *a, mpb_msg *h);

/* The header h (user, flagged) is here: post the parts' receives (now, or
** after a collection). Takes h; a becomes (or is made) the arrival of the
** whole message. */
static void start_parts(mpb_state *st, mpb_arrival *a, mpb_msg *h) {
  if (!a) a = new_arrival(st, h, 0), enqueue(st, a);
  size_t size = 0;
  int gc = wants_gc(st, h, &size);
  if (gc) {
    a->m = h;
    a->stage = A_GC;
    if (gc > st->gc_wanted) st->gc_wanted = gc;
    st->gc_bytes += size;
    return;
  }
  post_parts(st, a, h);
}

/* One basic step, timed: a costly one makes the next large messages skip it. */
static void gc_step(lua_State *L, mpb_state *st) {
  double t = mpb_now();
  lua_gc(L, LUA_GCSTEP, 0);
  t = mpb_now() - t;
  if (t <= STEP_SEC_PER_MIB * (double)st->gc_bytes / (1 << 20)) {
    st->gc_skip = 0;
    return;
  }
  st->gc_skip = st->gc_skip ? (st->gc_skip < SKIP_MAX ? 2 * st->gc_skip : SKIP_MAX) : 1;
  st->gc_skip_left = st->gc_skip;
}

void mpb_arrivals_collect(lua_State *L, mpb_state *st) {
  int full = L && st->gc_wanted == 2;
  if (full)
    lua_gc(L, LUA_GCCOLLECT);
  else if (L)
    gc_step(L, st);
  st->gc_wanted = 0;
  st->gc_bytes = 0;
  for (mpb_arrival *a = st->arrivals; a; a = a->next)
    if (a->stage == A_GC) {
      a->gc_full |= full || !L; /* without L, no collection will come */
      post_parts(st, a, a->m);
      if (a->stage == A_PARTS) a->m->gc_paid = L != NULL; /* the decoder need not step again */
    }
}

/* Receive the next part of a message being drained into nothing (a part
** of any size: MPI truncates it to none, and its send completes). The
** parts of one message share their sender and tag: they match in order. */
static void drain_next(mpb_state *st, mpb_arrival *a) {
  static char nothing[1]; /* shared by every state: a receive of 0 bytes writes nothing */
  int rc = MPI_Irecv_c(nothing, 0, MPI_BYTE, a->src, (int)a->tag, st->bulk, &a->one);
  if (rc != MPI_SUCCESS) fail(st, rc, "cannot drain a message", a->src);
}

static void post_parts(mpb_state *st, mpb_arrival *a, mpb_msg *h) {
  mpb_frame f;
  if (mpb_frame_parse(h->buf, h->len, (uint64_t)st->tag_ub, &f, NULL, 0) != 0) {
    h->lost = h->len ? h->len : 1; /* its parts cannot be found: a message that was lost */
    h->lost_why = MPB_LOST_FRAME;
    a->m = h;
    a->stage = A_DONE;
    return;
  }
  mpb_msg *w = lay_out(st, h, &f);
  MPI_Request *req = w ? malloc(sizeof *req * (size_t)f.nparts) : NULL;
  if (!req) {
    mpb_msg_free(w);
    a->m = h;
    if (!a->gc_full) { /* the garbage may hold the memory: after a full collection, again */
      a->stage = A_GC;
      st->gc_wanted = 2;
      return;
    }
    h->lost = f.inlen + f.total; /* h stands for the message, its parts drained */
    h->lost_why = MPB_LOST_MEMORY;
    a->tag = f.tag;
    a->nreq = (int64_t)f.nparts;
    a->ndone = 0;
    a->stage = A_DRAIN;
    drain_next(st, a);
    return;
  }
  mpb_msg_free(h);
  a->m = w;
  a->req = req;
  a->nreq = w->nparts;
  a->ndone = 0;
  for (int i = 0; i < w->nparts; i++) {
    mpb_part *p = &w->parts[i];
    int rc = MPI_Irecv_c(p->to, (MPI_Count)p->len, MPI_BYTE, w->src, (int)f.tag,
                         st->bulk, &req[i]);
    if (rc != MPI_SUCCESS) fail(st, rc, "cannot receive the parts of a message", w->src);
  }
  a->stage = A_PARTS;
}

/* -------------------------------------------------------------- probing */
/* A message too short for its header, or the header of one in parts. */
static void received_not_whole(mpb_state *st, mpb_arrival *a, mpb_msg *m, int ctl) {
  char err[MPB_ERRLEN];
  mpb_frame f;
  int kind = ctl ? MPB_RECV_SHORT
                 : mpb_frame_classify(m->buf, m->len, (uint64_t)st->tag_ub, &f, err, sizeof err);
  if (kind == MPB_RECV_SHORT) { /* its task and channel unknown: it cannot be delivered */
    if (ctl) mpb_fatal(st, "malformed control message from rank %d (%zu bytes)", m->src, m->len);
    mpb_note(st, "malformed message from rank %d: %s (dropped)", m->src, err);
    mpb_msg_free(m);
    if (a) a->m = NULL, a->stage = A_DONE;
  } else { /* in parts (a malformed table is found there) */
    start_parts(st, a, m);
  }
}

/* Message m (whole, or the header of one in parts) is here; a: its arrival
** record (NULL: received in the probing call). Every header is checked
** before it is used: a message too short to hold one is not from mplua. */
static void received(mpb_state *st, mpb_arrival *a, mpb_msg *m, int ctl) {
  if (ctl ? m->len < sizeof(mpb_chdr) : !mpb_frame_whole(m->buf, m->len)) {
    received_not_whole(st, a, m, ctl);
  } else if (a) {
    a->stage = A_DONE;
  } else if (st->pending_from[key(st, ctl, m->src)]) { /* after its elders */
    a = new_arrival(st, m, ctl);
    a->stage = A_DONE;
    enqueue(st, a);
  } else {
    deliver(st, m, ctl);
  }
}

static void receive(mpb_state *st, int ctl, MPI_Message *mm, MPI_Status *s) {
  MPI_Count cnt = 0;
  int src = s->MPI_SOURCE;
  int rc = MPI_Get_count_c(s, MPI_BYTE, &cnt);
  if (rc != MPI_SUCCESS || cnt < 0) fail(st, rc, "cannot size a message", src);
  if (!ctl) st->recvd_from[src]++;
  st->bytes_recv += (uint64_t)cnt;
  mpb_msg *m = mpb_msg_new_or_reserve(&st->msgmem, (size_t)cnt);
  if (!m) /* small (larger ones come in parts) and the reserve is taken: nothing is left */
    mpb_fatal(st, "out of memory receiving %s of %lld bytes from rank %d",
              ctl ? "a command" : "a message", (long long)cnt, src);
  m->src = src;
  m->chan = s->MPI_TAG;
  if (cnt > RECV_NOW) {
    MPI_Request r;
    int done = 0;
    rc = MPI_Imrecv_c(m->buf, cnt, MPI_BYTE, mm, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) fail(st, rc, "cannot receive a message", src);
    if (!done) {
      mpb_arrival *a = new_arrival(st, m, ctl);
      a->one = r;
      a->stage = A_HDR;
      enqueue(st, a);
      return;
    } /* else an eager message, complete at once: on as if received here */
  } else if ((rc = MPI_Mrecv_c(m->buf, cnt, MPI_BYTE, mm, MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
    fail(st, rc, "cannot receive a message", src);
  }
  received(st, NULL, m, ctl);
}

static int probe(mpb_state *st, int ctl) {
  MPI_Comm c = ctl ? st->ctl : st->user;
  int n = 0;
  for (;;) {
    int flag = 0;
    MPI_Message mm;
    MPI_Status s;
    int rc = MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &mm, &s);
    if (rc != MPI_SUCCESS) {
      if (ctl) mpb_fatal_mpi(st, rc, "the control channel failed");
      mpb_mpi_note(st, rc, "receiving");
      break;
    }
    if (!flag) break;
    receive(st, ctl, &mm, &s);
    n++;
    if (!ctl) break;
  }
  return n;
}

/* ------------------------------------------------------------ progress */
static int advance_drain(mpb_state *st, mpb_arrival *a) {
  int64_t before = a->ndone;
  while (a->ndone < a->nreq) {
    int flag = 0, rc = MPI_Test(&a->one, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS && !truncated(rc)) fail(st, rc, "cannot drain a message", a->src);
    if (!flag) break;
    if (++a->ndone < a->nreq) drain_next(st, a);
  }
  if (a->ndone == a->nreq) a->stage = A_DONE;
  return a->ndone > before;
}

static int advance(mpb_state *st, mpb_arrival *a) {
  int flag = 0, rc;
  if (a->stage == A_HDR) {
    if ((rc = MPI_Test(&a->one, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
      fail(st, rc, "cannot receive a message", a->src);
    if (!flag) return 0;
    received(st, a, a->m, a->ctl);
    return 1;
  }
  if (a->stage == A_DRAIN) return advance_drain(st, a);
  if (a->stage != A_PARTS) return 0;
  int64_t before = a->ndone;
  while (a->ndone < a->nreq) { /* the parts come in order: test the oldest */
    MPI_Status s;
    size_t want = a->m->parts[a->ndone].len;
    MPI_Count got = 0;
    rc = MPI_Test(&a->req[a->ndone], &flag, &s);
    if (rc != MPI_SUCCESS) {
      if (!truncated(rc)) fail(st, rc, "cannot receive the parts of a message", a->src);
      got = -1; /* longer than announced: refused (the request is complete) */
    } else if (!flag) {
      break;
    } else if ((rc = MPI_Get_count_c(&s, MPI_BYTE, &got)) != MPI_SUCCESS) {
      fail(st, rc, "cannot size the parts of a message", a->src);
    }
    if (got != (MPI_Count)want) { /* shorter or longer: refused */
      a->m->lost = a->m->len;
      a->m->lost_why = MPB_LOST_PART;
    }
    st->bytes_recv += got > 0 ? (uint64_t)got : 0;
    a->ndone++;
  }
  if (a->ndone == a->nreq) {
    free(a->req);
    a->req = NULL;
    a->stage = A_DONE;
  }
  return a->ndone > before;
}

static int progress(mpb_state *st) {
  int events = 0;
  for (mpb_arrival *a = st->arrivals; a; a = a->next) events += advance(st, a);
  uint32_t *blocked = st->arr_blocked, pass = ++st->arr_pass;
  if (pass == 0) { /* wrapped: forget the old stamps */
    memset(blocked, 0, 2 * (size_t)st->size * sizeof *blocked);
    pass = st->arr_pass = 1;
  }
  for (mpb_arrival **pp = &st->arrivals; *pp;) {
    mpb_arrival *a = *pp;
    int k = key(st, a->ctl, a->src);
    if (a->stage == A_DONE && blocked[k] != pass) {
      *pp = a->next;
      if (!a->next) st->arrivals_tail = pp;
      st->pending_from[k]--;
      mpb_msg *m = a->m;
      int ctl = a->ctl;
      free_arrival(st, a);
      if (m) deliver(st, m, ctl);
      events++;
      continue;
    }
    blocked[k] = pass; /* younger ones from this sender wait */
    pp = &a->next;
  }
  return events;
}

int mpb_arrivals_idle(const mpb_state *st) { return st->arrivals == NULL; }

/* Shutdown: nothing can raise and nothing depends on these any more. */
static void cancel(mpb_state *st, MPI_Request *r) {
  if (*r == MPI_REQUEST_NULL) return;
  mpb_mpi_warn(st, MPI_Cancel(r), "cancelling a receive at exit");
  mpb_mpi_warn(st, MPI_Request_free(r), "freeing a receive at exit");
}

void mpb_arrivals_free(mpb_state *st) {
  while (st->arrivals) {
    mpb_arrival *a = st->arrivals;
    st->arrivals = a->next;
    if (a->stage == A_HDR || a->stage == A_DRAIN) cancel(st, &a->one);
    for (int64_t i = a->ndone; a->req && i < a->nreq; i++) cancel(st, &a->req[i]);
    free(a->req);
    mpb_msg_free(a->m);
    free(a);
  }
  st->arrivals_tail = &st->arrivals;
  free(st->arrival_spare);
  st->arrival_spare = NULL;
}

/* ---------------------------------------------------------------- poll */
static inline int poll(mpb_state *st, int ctl) {
  if (!st->use_mpi) return 0;
  int events = 0;
  if (ctl) events += probe(st, 1);
  events += probe(st, 0);
  if (st->arrivals) events += progress(st);
  if (st->sends || st->csends) events += mpb_sends_progress(st);
  return events;
}

int mpb_poll_ctl(mpb_state *st, int ctl) { return poll(st, ctl); }

int mpb_poll(mpb_state *st) { return poll(st, 1); }

int mpb_poll_for(mpb_state *st, int ctl, mpb_want *w) {
  st->want = w; /* nothing in a poll raises: a failure ends the job or is noted */
  int events = poll(st, ctl);
  st->want = NULL;
  return events;
}
