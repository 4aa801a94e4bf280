/* SPDX-License-Identifier: MIT */
/*
** The exchange of array boxes (xchg.h) and its request, "mp.Exchange":
**   req:wait()   runs the exchange to the end; returns the destination array
**   req:test()   false, or true and the destination array (unpacking what has
**                arrived, and starting the next phase when one is complete)
** A request belongs to the task that made it (the same rules as mp.Request);
** its userdata owns everything of an exchange in flight except the
** messages: sends own their buffers (chan/ frees them when MPI is done) and
** arrivals wait in the mailbox, where the abort protocol drains them. So a
** fault at any point leaks nothing and leaves nothing to deliver late.
*/
#include <stdlib.h>
#include <string.h>

#include "array/array_iter.h"
#include "layout/laylib.h"
#include "layout/xchg.h"

#define XREQ_MT "mp.Exchange"

enum { X_PENDING, X_READY, X_USED };
static const char *const state_names[] = {"pending", "complete", "used"};

/* user values: 1 communicator (or nil), 2 plan, 3 source, 4 destination.
** The receives of a phase are runs of boxes, one message each; a run is
** known by the index of its first box. What has come is found from the
** arrivals since the last look (chan.h's mpb_arrival_at: the runs of that
** sender only), so a wait does O(1) work per arrival whatever the number of
** peers; the queues are scanned whole only when a phase starts and when
** the record of arrivals does not reach back far enough.
**
** Sends go out in comm rank order from the rank after this one (so no rank
** is everyone's first peer). A blocking exchange keeps at most XCHG_WINDOW
** of its messages in flight, and past the first at most XCHG_WINDOW_BYTES:
** each is packed when a slot frees, inside the one wait, so the memory of
** the messages a rank sends is the window's, not its share of the array.
** A nonblocking exchange (its source may be written once the call returns)
** and one whose arrays share memory (its sends are packed before anything
** is written) pack and post every send at the start. MPLUA_XCHG_WINDOW
** sets the messages of the window (0: none, every send at the start). */
#define XCHG_WINDOW 8
#define XCHG_WINDOW_MAX 64
#define XCHG_WINDOW_BYTES ((size_t)8 << 20)

static int window_size(void) {
  const char *v = getenv("MPLUA_XCHG_WINDOW");
  int k = v && *v ? atoi(v) : XCHG_WINDOW;
  return k < 0 ? 0 : k > XCHG_WINDOW_MAX ? XCHG_WINDOW_MAX : k;
}

typedef struct {
  uint64_t ids[2];               /* its sends' ids (chan/outbox.h): a header and its parts */
  size_t len;
} xsent;

typedef struct mpb_xreq {
  int state, local;
  int alias;                     /* the destination shares memory with the source */
  int64_t task, naborts;
  mpb_coll x;
  const mpb_xphase *ph;
  int nphase, phase;
  mpb_array src, dst;            /* headers of the arrays (anchored in user values) */
  size_t es;                     /* their element size */
  int left;                      /* runs of this phase not unpacked yet */
  int nruns, nready;             /* runs of the phase; runs found arrived, in ready[] */
  int scanned;                   /* the queues were scanned since the phase started */
  uint64_t seen;                 /* st->seq when the arrivals were last looked at */
  uint64_t badseen;              /* the same, looking for a mismatch (coll_dist.c) */
  int *ready;                    /* [maxrecv] runs found arrived, not unpacked */
  int *bypeer;                   /* [2 * maxrecv] (peer, run) sorted by peer */
  unsigned char *done;           /* [maxrecv] per run: 0 pending, 1 listed, 2 unpacked */
  int windowed;                  /* at most this many sends in flight (0: no window) */
  int snext, send_end, sfirst;   /* the next send box, its segment's end; where the order began */
  int nout;                      /* messages of the window in flight, in out[] */
  size_t outbytes;               /* their bytes */
  uint64_t done_seen;            /* st->sends_done when the window was last looked at */
  xsent out[XCHG_WINDOW_MAX];
} mpb_xreq;

/* The bytes of a request's lists for maxrecv receives. */
#define XREQ_ROOM(n) ((size_t)(n) * (3 * sizeof(int) + 1))

const char *mpb_xchg_method(int kind) {
  switch (kind) {
    case MPB_COLL_TRANSPOSE: return MPB_TRANSPOSE_METHOD;
    case MPB_COLL_HALO: return MPB_HALO_METHOD;
    case MPB_COLL_NALLGATHER: case MPB_COLL_NALLTOALL: return MPB_NEIGHBOR_METHOD;
    default: return NULL;
  }
}

/* The runs of boxes that share a message (layout_xbox.h), with this
** runtime's message header. */
static int msg_end(const mpb_xbox *b, int n, int i, size_t es, size_t *len) {
  return mpb_xbox_msg_end(b, n, i, es, sizeof(mpb_uhdr), len);
}

void mpb_xchg_push_info(lua_State *L, const mpb_xstats *s, const char *method, int nextra) {
  lua_createtable(L, 0, 9 + nextra);
  lua_pushstring(L, method);
  lua_setfield(L, -2, "method");
  const struct { const char *k; int64_t v; } f[] = {
      {"peers", s->peers}, {"messages", s->messages}, {"send_bytes", s->send_bytes},
      {"recv_bytes", s->recv_bytes}, {"self_bytes", s->self_bytes},
      {"peak_extra", s->peak_extra}, {"window", window_size()},
      {"window_bytes", (int64_t)XCHG_WINDOW_BYTES}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    lua_pushinteger(L, (lua_Integer)f[i].v);
    lua_setfield(L, -2, f[i].k);
  }
}

/* ------------------------------------------------------------ the boxes */
/* Box b of array a: its first element, and its strides in a (one per pack
** dimension). */
static char *box_at(const mpb_array *a, const mpb_xbox *b, size_t es, int64_t *st) {
  int64_t off = 0;
  for (int j = 0; j < b->nd; j++) {
    st[j] = a->strides[b->dim[j]];
    off += b->off[j] * st[j];
  }
  return (char *)a->data + off * (int64_t)es;
}

/* One copy of a box's elements: from s (strides ss) to d (ds); the packed
** side of a message has strides NULL (column-major over the box). */
typedef struct {
  char *d;
  const int64_t *ds;
  const char *s;
  const int64_t *ss;
} move;

/* Run np (1 or 2) copies of boxes of b's shape. A halo's boxes are small
** and many: they go to the loop nest directly, with no array header built
** for them, and two of one shape go together (mpb_run_copy2). */
static void run_moves(const mpb_xbox *b, const move *mv, int np, size_t es) {
  int64_t cm[MPB_LAYOUT_MAXDIM], n = 1;
  for (int j = 0; j < b->nd; j++) cm[j] = n, n *= b->len[j];
  mpb_iter it;
  mpb_iter_init(&it, b->nd, b->len);
  for (int k = 0; k < np; k++) {
    mpb_iter_addp(&it, mv[k].d, es, mv[k].ds ? mv[k].ds : cm);
    mpb_iter_addp(&it, (char *)mv[k].s, es, mv[k].ss ? mv[k].ss : cm);
  }
  mpb_iter_run(&it, np == 2 ? mpb_run_copy2 : mpb_run_copy, &es);
}

static int same_shape(const mpb_xbox *a, const mpb_xbox *b) {
  if (a->nd != b->nd) return 0;
  for (int j = 0; j < a->nd; j++)
    if (a->dim[j] != b->dim[j] || a->len[j] != b->len[j]) return 0;
  return 1;
}

/* Pack (or unpack) the boxes b[0..n) of array a into (from) the message
** body at buf, one after the other. */
static void pack_run(const mpb_array *a, const mpb_xbox *b, int n, size_t es, char *buf,
                     int unpack) {
  int64_t st[2][MPB_LAYOUT_MAXDIM];
  for (int k = 0; k < n;) {
    int np = k + 1 < n && same_shape(&b[k], &b[k + 1]) ? 2 : 1;
    move mv[2];
    for (int i = 0; i < np; i++) {
      char *at = box_at(a, &b[k + i], es, st[i]);
      if (unpack) mv[i] = (move){at, st[i], buf, NULL};
      else mv[i] = (move){buf, NULL, at, st[i]};
      buf += (size_t)b[k + i].n * es;
    }
    run_moves(&b[k], mv, np, es);
    k += np;
  }
}

static void copy_box(const mpb_array *src, const mpb_xbox *sb, const mpb_array *dst,
                     const mpb_xbox *db, size_t es) {
  int64_t ss[MPB_LAYOUT_MAXDIM], ds[MPB_LAYOUT_MAXDIM];
  move mv = {box_at(dst, db, es, ds), ds, box_at(src, sb, es, ss), ss};
  run_moves(db, &mv, 1, es);
}

/* The copy of a local box when the destination shares memory with the
** source (a view or a reshape of it): through a temporary, or writing one
** element could overwrite another not read yet. Sends are packed before
** and receives land after, so they need none. */
static void copy_box_via(lua_State *L, const mpb_xreq *q, const mpb_xbox *sb,
                         const mpb_xbox *db) {
  char *tmp = malloc((size_t)sb->n * q->es + 1);
  if (!tmp)
    mpb_lay_argerror(L, 0, q->x.fname, "out of memory (%I bytes for the part that stays on "
                     "this rank: the output shares the input's memory)",
                     (LUAI_UACINT)((size_t)sb->n * q->es));
  pack_run(&q->src, sb, 1, q->es, tmp, 0);
  pack_run(&q->dst, db, 1, q->es, tmp, 1);
  free(tmp);
}

/* ------------------------------------------------------------ phases */
static int cmp_pair(const void *x, const void *y) {
  const int *a = x, *b = y;
  return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* ------------------------------------------------------------ sends */
/* Forget the window's messages MPI is done with. */
static void window_prune(mpb_xreq *q) {
  mpb_state *st = q->x.st;
  q->done_seen = st->sends_done;
  for (int k = 0; k < q->nout;)
    if (mpb_sends_gone(st, q->out[k].ids)) {
      q->outbytes -= q->out[k].len;
      q->out[k] = q->out[--q->nout];
    } else {
      k++;
    }
}

/* The payload bytes of the next send's message (its run of boxes), or 0
** when every send of the phase is posted. */
static int next_send(const mpb_xreq *q, size_t *len) {
  const mpb_xphase *p = &q->ph[q->phase];
  if (q->snext >= q->send_end) return 0;
  msg_end(p->send, q->send_end, q->snext, q->es, len);
  return 1;
}

/* May the next send go now? (Always when the window is empty.) */
static int window_open(const mpb_xreq *q, size_t len) {
  if (!q->windowed || q->nout == 0) return 1;
  return q->nout < q->windowed && q->outbytes + len <= XCHG_WINDOW_BYTES;
}

/* Pack and post the phase's sends while the window lets them go. The order
** is a rotation of the boxes (sorted by peer): from the first peer after
** this rank to the end, then from the start. */
static void post_sends(lua_State *L, mpb_xreq *q) {
  const mpb_xphase *p = &q->ph[q->phase];
  mpb_state *st = q->x.st;
  size_t len;
  for (;;) {
    if (!next_send(q, &len)) {
      if (q->send_end == p->nsend && q->sfirst > 0) { /* the rotation's second segment */
        q->snext = 0;
        q->send_end = q->sfirst;
        q->sfirst = 0;
        continue;
      }
      return;
    }
    if (!window_open(q, len)) {
      if (st->sends_done == q->done_seen) return;
      window_prune(q); /* some send completed since the last look */
      continue;
    }
    int i = q->snext, j = msg_end(p->send, q->send_end, i, q->es, &len);
    char *buf = mpb_coll_tagged_new(L, &q->x, p->send[i].tag, len);
    pack_run(&q->src, &p->send[i], j - i, q->es, buf + sizeof(mpb_uhdr), 0);
    q->snext = j;
    uint64_t first = st->send_ids + 1;
    mpb_coll_tagged_send(L, &q->x, p->send[i].peer, buf, len);
    if (q->windowed && st->send_ids >= first) {
      q->out[q->nout++] = (xsent){{first, st->send_ids}, len};
      q->outbytes += len;
    }
  }
}

/* Has a slot of the window freed for a send still to post? */
static int window_moved(mpb_state *st, mpb_xreq *q) {
  size_t len;
  if (!q->windowed || st->sends_done == q->done_seen || !next_send(q, &len)) return 0;
  window_prune(q);
  return window_open(q, len);
}

/* ------------------------------------------------------------ phases */
static void start_phase(lua_State *L, mpb_xreq *q) {
  const mpb_xphase *p = &q->ph[q->phase];
  size_t es = q->es, len;
  int me = q->local ? 0 : q->x.c->rank, lo = 0, hi = p->nsend;
  while (lo < hi) { /* the first send box to a peer after this rank */
    int mid = (lo + hi) / 2;
    if (p->send[mid].peer <= me) lo = mid + 1;
    else hi = mid;
  }
  q->snext = lo;
  q->send_end = p->nsend;
  q->sfirst = lo;
  post_sends(L, q);
  for (int i = 0; i < p->nself; i++)
    if (q->alias) copy_box_via(L, q, &p->self[2 * i], &p->self[2 * i + 1]);
    else copy_box(&q->src, &p->self[2 * i], &q->dst, &p->self[2 * i + 1], es);
  memset(q->done, 0, (size_t)p->nrecv);
  q->nruns = q->nready = q->scanned = 0;
  for (int i = 0; i < p->nrecv; i = msg_end(p->recv, p->nrecv, i, es, &len)) {
    q->bypeer[2 * q->nruns] = p->recv[i].peer;
    q->bypeer[2 * q->nruns + 1] = i;
    q->nruns++;
  }
  qsort(q->bypeer, (size_t)q->nruns, 2 * sizeof(int), cmp_pair);
  q->left = q->nruns;
}

/* List run i when its message has come. */
static void look_run(mpb_state *st, mpb_xreq *q, int i) {
  const mpb_xbox *b = &q->ph[q->phase].recv[i];
  if (q->done[i] == 0 && mpb_coll_tagged_find(st, &q->x, b->peer, b->tag, 0)) {
    q->done[i] = 1;
    q->ready[q->nready++] = i;
  }
}

/* The runs from comm rank r (a binary search in bypeer). */
static void look_peer(mpb_state *st, mpb_xreq *q, int r) {
  int lo = 0, hi = q->nruns;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (q->bypeer[2 * mid] < r) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < q->nruns && q->bypeer[2 * lo] == r; lo++) look_run(st, q, q->bypeer[2 * lo + 1]);
}

/* Find what has come since the last look: every pending run the first
** time in a phase (or when the arrivals since are no longer on record),
** else only the runs of the senders of the messages that arrived. */
static int look(mpb_state *st, mpb_xreq *q) {
  if (q->local) return 0;
  int full = !q->scanned;
  for (uint64_t s = q->seen + 1; !full && s <= st->seq; s++) {
    int ch, src, r;
    if (!mpb_arrival_at(st, s, &ch, &src)) full = 1;
    else if (ch == MPB_CH_DIST && (r = mpb_comm_of(q->x.c, src)) >= 0) look_peer(st, q, r);
  }
  if (full)
    for (int k = 0; k < q->nruns; k++) look_run(st, q, q->bypeer[2 * k + 1]);
  q->scanned = 1;
  q->seen = st->seq;
  return q->nready > 0;
}

/* Unpack what has arrived; start the next phases while they complete.
** Returns 1 when the exchange is complete. */
static int progress(lua_State *L, mpb_xreq *q) {
  mpb_state *st = q->x.st;
  size_t es = q->es;
  while (q->phase < q->nphase) {
    const mpb_xphase *p = &q->ph[q->phase];
    post_sends(L, q);
    if (q->left > 0) look(st, q);
    while (q->nready > 0) {
      int i = q->ready[--q->nready];
      size_t want;
      int j = msg_end(p->recv, p->nrecv, i, es, &want);
      const mpb_xbox *b = &p->recv[i];
      mpb_msg *m = mpb_coll_tagged_find(st, &q->x, b->peer, b->tag, 1);
      if (!m) { /* (listed, so it came: nothing else takes this call's messages) */
        q->done[i] = 0;
        continue;
      }
      if (m->lost || m->len != sizeof(mpb_uhdr) + want) {
        size_t got = m->len - sizeof(mpb_uhdr);
        int lost = m->lost != 0;
        mpb_msg_free(m);
        mpb_lay_argerror(L, 0, q->x.fname, "%s from rank %d: %I bytes where this plan "
                         "expects %I (do all ranks apply the same plan?)",
                         lost ? "a message was lost" : "wrong message size", b->peer,
                         (LUAI_UACINT)got, (LUAI_UACINT)want);
      }
      pack_run(&q->dst, &p->recv[i], j - i, es, m->buf + sizeof(mpb_uhdr), 1);
      mpb_msg_free(m);
      q->done[i] = 2;
      q->left--;
    }
    size_t len;
    if (q->left > 0 || next_send(q, &len) || q->sfirst > 0) return 0;
    if (++q->phase < q->nphase) start_phase(L, q);
  }
  q->state = X_READY;
  return 1;
}

/* A ready function of the one wait: has a message of a pending receive come? */
static int arrived(mpb_state *st, void *ud) {
  mpb_xreq *q = ud;
  return q->nready > 0 || (st->seq != q->seen && look(st, q)) || window_moved(st, q);
}

static void run_to_end(lua_State *L, mpb_xreq *q) {
  while (!progress(L, q)) mpb_coll_tagged_wait(L, &q->x, arrived, q, &q->badseen);
}

/* While tracing: how many ranks the exchange talks to (a span's peers). */
static int trace_peers(const mpb_xreq *q) {
  if (!q->x.st->trace || q->local) return 0;
  mpb_xstats s;
  mpb_xchg_stats(q->ph, q->nphase, q->es, sizeof(mpb_uhdr), &s);
  return s.peers;
}

/* ------------------------------------------------------------- applying */
/* A blocking exchange whose phases receive at most this many messages runs
** on the C stack: no request is made (nothing outlives the call; a fault
** raised out of the wait leaves its messages to the mailbox, as always). */
#define STACK_RECV 64

void mpb_xchg_apply(lua_State *L, int cidx, int pidx, const mpb_xphase *ph, int nphase,
                    int sidx, int didx, int kind, const char *fname, int wait) {
  mpb_state *st = mpb_get(L);
  int maxrecv = 1;
  for (int p = 0; p < nphase; p++)
    if (ph[p].nrecv > maxrecv) maxrecv = ph[p].nrecv;
  mpb_comm *c = cidx ? mpb_comm_check(L, st, cidx, fname) : NULL;
  int room[STACK_RECV * 3 + STACK_RECV / sizeof(int) + 1]; /* the lists of a request on the stack */
  mpb_xreq onstack, *q = &onstack;
  char *lists = (char *)room;
  if (!wait || maxrecv > STACK_RECV) {
    q = lua_newuserdatauv(L, sizeof *q + XREQ_ROOM(maxrecv), 4);
    memset(q, 0, sizeof *q);
    lists = (char *)(q + 1);
    q->state = X_USED; /* inert until started */
    luaL_setmetatable(L, XREQ_MT);
    int qidx = lua_gettop(L);
    int slots[4] = {cidx, pidx, sidx, didx};
    for (int i = 0; i < 4; i++) {
      if (slots[i]) lua_pushvalue(L, slots[i]);
      else lua_pushnil(L);
      lua_setiuservalue(L, qidx, i + 1);
    }
  } else {
    memset(q, 0, sizeof *q);
  }
  q->ready = (int *)lists;
  q->bypeer = q->ready + maxrecv;
  q->done = (unsigned char *)(q->bypeer + 2 * maxrecv);
  q->task = st->task;
  q->naborts = st->naborts;
  q->ph = ph;
  q->nphase = nphase;
  q->src = *(mpb_array *)lua_touserdata(L, sidx);
  q->dst = *(mpb_array *)lua_touserdata(L, didx);
  q->es = mpb_dtype_size(q->src.dtype);
  /* one slot: an exchange in place (a halo), whose boxes never meet */
  q->alias = sidx != didx && mpb_array_overlap(&q->src, &q->dst) != MPB_DISJOINT;
  q->local = c == NULL;
  q->windowed = wait && !q->alias ? window_size() : 0;
  if (c) {
    q->x = mpb_coll_on(L, st, c, fname, kind);
  } else {
    q->x.st = st;
    q->x.fname = fname;
    q->x.kind = kind;
  }
  q->state = X_PENDING;
  /* the trace: one span, its messages inside (a nonblocking one: the start) */
  MPB_TRACE_SPAN(L, st, MPB_TR_DIST, kind, trace_peers(q), q->x.seq, c ? c->id : 0);
  if (!wait) MPB_TRACE_FLAG(MPB_TRF_START);
  if (nphase > 0) start_phase(L, q);
  if (wait) run_to_end(L, q);
  else progress(L, q);
}

/* ------------------------------------------------------------ requests */
static mpb_xreq *check_req(lua_State *L, const char *fname) {
  mpb_xreq *q = luaL_testudata(L, 1, XREQ_MT);
  if (!q) mpb_lay_argerror(L, 1, fname, "exchange request expected, got %s", luaL_typename(L, 1));
  if (!q->local) mpb_lay_check_request(L, q->task, q->naborts, q->state == X_USED, fname);
  else if (q->state == X_USED)
    mpb_lay_argerror(L, 0, fname, "request already completed (its wait or test returned)");
  return q;
}

static int deliver(lua_State *L, mpb_xreq *q) {
  q->state = X_USED;
  lua_getiuservalue(L, 1, 4);
  return 1;
}

/* req:wait() */
static int xwait(lua_State *L) {
  mpb_xreq *q = check_req(L, "Exchange.wait");
  MPB_TRACE_SPAN(L, q->x.st, MPB_TR_DIST, q->x.kind, trace_peers(q), q->x.seq,
                 q->local ? 0 : q->x.c->id); /* also when complete, as mp.Request's */
  MPB_TRACE_FLAG(MPB_TRF_WAIT);
  if (q->state == X_PENDING) {
    q->x.fname = "Exchange.wait";
    run_to_end(L, q);
  }
  return deliver(L, q);
}

/* req:test() */
static int xtest(lua_State *L) {
  mpb_xreq *q = check_req(L, "Exchange.test");
  if (q->state == X_PENDING) {
    mpb_poll(q->x.st);
    q->x.fname = "Exchange.test";
    if (!progress(L, q)) {
      lua_pushboolean(L, 0);
      return 1;
    }
  }
  lua_pushboolean(L, 1);
  return 1 + deliver(L, q);
}

static int xtostring(lua_State *L) {
  mpb_xreq *q = luaL_checkudata(L, 1, XREQ_MT);
  lua_pushfstring(L, "mp.Exchange (%s, task %I, %s)", mpb_coll_kind_name(q->x.kind),
                  (LUAI_UACINT)q->task, state_names[q->state]);
  return 1;
}

void mpb_open_xchg(lua_State *L) {
  static const luaL_Reg methods[] = {{"wait", xwait}, {"test", xtest}, {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__tostring", xtostring}, {NULL, NULL}};
  mpb_class(L, XREQ_MT, methods, NULL, meta);
}
