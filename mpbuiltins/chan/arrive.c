/*
** Receiving. mpb_poll probes the control and user communicators with
** nonblocking matched probes and receives what it finds:
** - a message of a few KiB is received at once (MPI_Mrecv of a matched,
**   eager message does not wait for anyone);
** - a larger one is received with MPI_Imrecv, and becomes an arrival in
**   flight unless it is complete at once (an eager message is: a halo's
**   columns of 4 KiB took the arrival's detour, a poll or two later);
** - the header of a message in parts (chan_int.h) is checked like the wire
**   decoder checks a body, then receives for every part are posted straight
**   into place on `bulk` (long strings into blocks Lua can adopt).
** Arrivals complete in later polls, inside the one wait, so nothing blocks
** and an abort can drain them. Each sender's messages are delivered in the
** order they were sent: one that completes early waits for its elders.
** Delivered control messages go to the handler table (ctl.c), user
** messages to the mailbox.
*/
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "chan/chan_int.h"

#define RECV_NOW 4096 /* bytes: received in the probing call */

enum { A_HDR, A_GC, A_PARTS, A_DONE };

struct mpb_arrival {
  mpb_arrival *next;
  mpb_msg *m;         /* A_HDR: the header in flight; then the whole message */
  int ctl, src, stage;
  int64_t ndone, nreq;
  MPI_Request *req;   /* A_PARTS: one receive per part */
  MPI_Request one;    /* A_HDR */
};

static int key(const mpb_state *st, int ctl, int src) { return ctl ? st->size + src : src; }

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

static mpb_arrival *new_arrival(mpb_state *st, mpb_msg *m, int ctl) {
  mpb_arrival *a = calloc(1, sizeof *a);
  if (!a) mpb_fatal(st, "out of memory receiving a message from rank %d", m->src);
  a->m = m;
  a->ctl = ctl;
  a->src = m->src;
  return a;
}

/* ------------------------------------------------------- message parts */
/* Check the header of a message in parts (frame.c) and lay the message
** out: returns the whole message (its parts still to come, positions in
** m->parts), or NULL when the header is malformed. The header is not freed. */
static mpb_msg *lay_out(mpb_state *st, const mpb_msg *h, uint64_t *tag) {
  mpb_frame f;
  if (mpb_frame_parse(h->buf, h->len, (uint64_t)st->tag_ub, &f, NULL, 0) != 0) return NULL;
  size_t n = (size_t)f.nparts;
  mpb_msg *w = mpb_msg_new(f.inlen + f.total);
  mpb_part *parts = w ? calloc(n, sizeof *parts) : NULL;
  if (!parts) {
    mpb_msg_free(w);
    mpb_fatal(st, "out of memory receiving %zu bytes from rank %d", f.inlen + f.total, h->src);
  }
  w->src = h->src;
  w->chan = h->chan;
  w->parts = parts;
  w->nparts = (int)n;
  size_t from = 0, to = 0;
  for (size_t i = 0; i < n; i++) {
    size_t at, len;
    int str;
    mpb_frame_part(&f, i, &at, &len, &str);
    memcpy(w->buf + to, h->buf + from, at - from);
    to += at - from;
    from = at;
    parts[i].pos = to;
    parts[i].len = len;
    parts[i].block = str && st->optimal ? mpb_adopt_block(st, len) : NULL;
    to += len;
  }
  memcpy(w->buf + to, h->buf + from, f.inlen - from);
  mpb_uhdr u;
  memcpy(&u, w->buf, sizeof u);
  u.flags &= ~MPB_UF_SPLIT;
  memcpy(w->buf, &u, sizeof u);
  *tag = f.tag;
  return w;
}

/* A large message is best received into the buffer its predecessor just
** left: a program that takes one message of a few MiB after another then
** writes into memory still in cache (a fifth of the bandwidth at 8 MiB,
** against rotating between two buffers), and the largest land in the spare
** buffer of the last one (chan/msg.c) rather than in fresh pages. But the
** predecessor's last owner is usually garbage Lua has not collected yet,
** and nothing may run Lua here: the parts of such a message wait (stage
** A_GC) until a wait or the poll hook has run a collection
** (mpb_arrivals_collect). A full one when the message is the largest kind,
** or when the Lua heap is so small next to the message that collecting it
** costs a few percent of the transfer (76 KiB: 9 us); otherwise a step as
** large as the message, the step the decoder would take anyway (msg.c),
** taken before the buffer is chosen. */
#define BIG ((size_t)64 << 20)
#define REUSE_MIN ((size_t)1 << 20)
#define HEAP_PER_MSG 64 /* a full collection when the heap is below message / this */

static int wants_gc(mpb_state *st, const mpb_msg *h, size_t *size) {
  mpb_frame f;
  if (mpb_frame_parse(h->buf, h->len, (uint64_t)st->tag_ub, &f, NULL, 0) != 0) return 0;
  *size = f.inlen + f.total;
  if (*size >= BIG) return mpb_msg_spare() < *size ? 2 : 0;
  return *size >= REUSE_MIN && mpb_msg_live_big() > 0;
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
    st->gc_step_kb += size >> 10;
    return;
  }
  post_parts(st, a, h);
}

void mpb_arrivals_collect(lua_State *L, mpb_state *st) {
  size_t kb = st->gc_step_kb;
  if (L && (st->gc_wanted == 2 || (size_t)lua_gc(L, LUA_GCCOUNT) * HEAP_PER_MSG <= kb))
    lua_gc(L, LUA_GCCOLLECT); /* the predecessor's buffer comes back, if it can */
  else if (L)
    lua_gc(L, LUA_GCSTEP, (int)(kb < INT_MAX ? kb : INT_MAX));
  st->gc_wanted = 0;
  st->gc_step_kb = 0;
  for (mpb_arrival *a = st->arrivals; a; a = a->next)
    if (a->stage == A_GC) {
      post_parts(st, a, a->m);
      a->m->gc_paid = L != NULL; /* the decoder need not step again */
    }
}

static void post_parts(mpb_state *st, mpb_arrival *a, mpb_msg *h) {
  uint64_t tag;
  mpb_msg *w = lay_out(st, h, &tag);
  if (!w) { /* its parts cannot be found: it arrives as a message that was lost */
    h->lost = h->len ? h->len : 1;
    a->m = h;
    a->stage = A_DONE;
    return;
  }
  mpb_msg_free(h);
  a->m = w;
  a->nreq = w->nparts;
  a->ndone = 0;
  a->req = malloc(sizeof *a->req * (size_t)w->nparts);
  if (!a->req) mpb_fatal(st, "out of memory receiving from rank %d", w->src);
  for (int i = 0; i < w->nparts; i++) {
    mpb_part *p = &w->parts[i];
    char *into = p->block ? (char *)p->block + st->stroff : w->buf + p->pos;
    if (MPI_Irecv_c(into, (MPI_Count)p->len, MPI_BYTE, w->src, (int)tag, st->bulk,
                    &a->req[i]) != MPI_SUCCESS)
      mpb_fatal(st, "cannot receive the parts of a message from rank %d", w->src);
  }
  a->stage = A_PARTS;
}

/* -------------------------------------------------------------- probing */
/* A matched message of cnt bytes that cannot be held: received into a
** scrap (MPI truncates it), and delivered as a message that was lost, which
** raises where it is taken. */
static mpb_msg *lost_message(mpb_state *st, int ctl, MPI_Message *mm, MPI_Count cnt, int src) {
  char scrap[sizeof(mpb_uhdr)];
  MPI_Mrecv_c(scrap, (MPI_Count)sizeof scrap, MPI_BYTE, mm, MPI_STATUS_IGNORE);
  mpb_uhdr h;
  memcpy(&h, scrap, sizeof h);
  if (ctl || (h.flags & MPB_UF_SPLIT)) /* its parts or its command cannot be dropped */
    mpb_fatal(st, "out of memory receiving %lld bytes from rank %d", (long long)cnt, src);
  mpb_msg *m = mpb_msg_new(sizeof h);
  if (!m) mpb_fatal(st, "out of memory receiving %lld bytes from rank %d", (long long)cnt, src);
  h.task = st->task; /* raised in this task, not dropped as stale */
  h.comm = 0;
  memcpy(m->buf, &h, sizeof h);
  m->lost = (size_t)cnt;
  return m;
}

static int is_split(const mpb_msg *m, int ctl) {
  return !ctl && !m->lost && (mpb_msg_hdr(m).flags & MPB_UF_SPLIT);
}

static void receive(mpb_state *st, int ctl, MPI_Message *mm, MPI_Status *s) {
  MPI_Count cnt = 0;
  MPI_Get_count_c(s, MPI_BYTE, &cnt);
  int src = s->MPI_SOURCE;
  if (!ctl) st->recvd_from[src]++;
  st->bytes_recv += (uint64_t)cnt;
  mpb_msg *m = cnt >= 0 ? mpb_msg_new((size_t)cnt) : NULL;
  if (!m) {
    m = lost_message(st, ctl, mm, cnt, src);
  } else if (cnt > RECV_NOW) {
    m->src = src;
    m->chan = s->MPI_TAG;
    MPI_Request r;
    int done = 0;
    if (MPI_Imrecv_c(m->buf, cnt, MPI_BYTE, mm, &r) != MPI_SUCCESS ||
        MPI_Test(&r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      mpb_fatal(st, "cannot receive %lld bytes from rank %d", (long long)cnt, src);
    if (!done) {
      mpb_arrival *a = new_arrival(st, m, ctl);
      a->one = r;
      a->stage = A_HDR;
      enqueue(st, a);
      return;
    } /* else an eager message, complete at once: on as if received here */
  } else if (MPI_Mrecv_c(m->buf, cnt, MPI_BYTE, mm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
    mpb_fatal(st, "cannot receive %lld bytes from rank %d", (long long)cnt, src);
  }
  m->src = src;
  m->chan = s->MPI_TAG;
  if (is_split(m, ctl)) {
    start_parts(st, NULL, m);
  } else if (st->pending_from[key(st, ctl, src)]) { /* after its elders */
    mpb_arrival *a = new_arrival(st, m, ctl);
    a->stage = A_DONE;
    enqueue(st, a);
  } else {
    deliver(st, m, ctl);
  }
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
      if (ctl) mpb_fatal(st, "the control channel failed");
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
static int advance(mpb_state *st, mpb_arrival *a) {
  int flag = 0;
  if (a->stage == A_HDR) {
    if (MPI_Test(&a->one, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      mpb_fatal(st, "cannot receive from rank %d", a->src);
    if (!flag) return 0;
    if (is_split(a->m, a->ctl)) start_parts(st, a, a->m);
    else a->stage = A_DONE;
    return 1;
  }
  if (a->stage != A_PARTS) return 0;
  int64_t before = a->ndone;
  while (a->ndone < a->nreq) { /* the parts come in order: test the oldest */
    MPI_Status s;
    if (MPI_Test(&a->req[a->ndone], &flag, &s) != MPI_SUCCESS)
      mpb_fatal(st, "cannot receive the parts of a message from rank %d", a->src);
    if (!flag) break;
    MPI_Count got = 0;
    MPI_Get_count_c(&s, MPI_BYTE, &got);
    if ((size_t)got != a->m->parts[a->ndone].len) a->m->lost = a->m->len; /* refused */
    st->bytes_recv += (uint64_t)got;
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
      free(a);
      deliver(st, m, ctl);
      events++;
      continue;
    }
    blocked[k] = pass; /* younger ones from this sender wait */
    pp = &a->next;
  }
  return events;
}

int mpb_arrivals_idle(const mpb_state *st) { return st->arrivals == NULL; }

void mpb_arrivals_free(mpb_state *st) {
  while (st->arrivals) {
    mpb_arrival *a = st->arrivals;
    st->arrivals = a->next;
    if (a->stage == A_HDR) {
      MPI_Cancel(&a->one);
      MPI_Request_free(&a->one);
    }
    for (int64_t i = a->ndone; a->req && i < a->nreq; i++) {
      MPI_Cancel(&a->req[i]);
      MPI_Request_free(&a->req[i]);
    }
    free(a->req);
    mpb_msg_free(a->m);
    free(a);
  }
  st->arrivals_tail = &st->arrivals;
}

/* ---------------------------------------------------------------- poll */
int mpb_poll_ctl(mpb_state *st, int ctl) {
  if (!st->use_mpi) return 0;
  int events = 0;
  if (ctl) events += probe(st, 1);
  events += probe(st, 0);
  if (st->arrivals) events += progress(st);
  if (st->sends || st->csends) events += mpb_sends_progress(st);
  return events;
}

int mpb_poll(mpb_state *st) { return mpb_poll_ctl(st, 1); }
