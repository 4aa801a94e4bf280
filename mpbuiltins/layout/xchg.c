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

/* user values: 1 communicator (or nil), 2 plan, 3 source, 4 destination */
typedef struct mpb_xreq {
  int state, local;
  int alias;                     /* the destination shares memory with the source */
  int64_t task, naborts;
  mpb_coll x;
  const mpb_xphase *ph;
  int nphase, phase;
  mpb_array src, dst;            /* headers of the arrays (anchored in user values) */
  size_t es;                     /* their element size */
  int left;                      /* receives of this phase not unpacked yet */
  uint64_t seen;                 /* st->seq at the last scan for arrivals */
  unsigned char done[];          /* per receive of the phase */
} mpb_xreq;

const char *mpb_xchg_method(int kind) {
  switch (kind) {
    case MPB_COLL_TRANSPOSE: return MPB_TRANSPOSE_METHOD;
    case MPB_COLL_HALO: return MPB_HALO_METHOD;
    case MPB_COLL_NALLGATHER: case MPB_COLL_NALLTOALL: return MPB_NEIGHBOR_METHOD;
    default: return NULL;
  }
}

/* ------------------------------------------------------------ messages */
/* The boxes of a phase that go to (or come from) one peer share messages:
** plans list them by peer and tag (mpb_xchg_sort) and a message carries a
** run of them, packed one after the other, tagged with the run's first tag.
** On a periodic grid two ranks wide both slabs of a dimension go to the
** other rank: one message instead of two. Small boxes are merged only while
** the message stays below MPI's rendezvous threshold (a message above it
** waits for a handshake: between the ranks of a host UCX's round trip
** doubles at 8256 bytes); boxes above it are merged together (one handshake
** instead of several). Both sides of a message see the same boxes in the
** same order, so they cut the same runs. Returns the end of the run from
** box i; *len: its bytes. */
#define EAGER_MAX 8256

static int msg_end(const mpb_xbox *b, int n, int i, size_t es, size_t *len) {
  size_t hdr = sizeof(mpb_uhdr), sum = (size_t)b[i].n * es;
  int big = sum + hdr >= EAGER_MAX, j = i + 1;
  for (; j < n && b[j].peer == b[i].peer; j++) {
    size_t add = (size_t)b[j].n * es;
    if (big ? add + hdr < EAGER_MAX : sum + add + hdr >= EAGER_MAX) break;
    sum += add;
  }
  *len = sum;
  return j;
}

/* The number of messages that carry n boxes. */
static int count_msgs(const mpb_xbox *b, int n, size_t es) {
  int k = 0;
  size_t len;
  for (int i = 0; i < n; i = msg_end(b, n, i, es, &len)) k++;
  return k;
}

static int cmp_box(const void *x, const void *y) {
  const mpb_xbox *a = x, *b = y;
  if (a->peer != b->peer) return a->peer < b->peer ? -1 : 1;
  return (a->tag > b->tag) - (a->tag < b->tag);
}

void mpb_xchg_sort(mpb_xbox *b, int n) {
  if (n > 1) qsort(b, (size_t)n, sizeof *b, cmp_box);
}

/* ---------------------------------------------------------------- stats */
void mpb_xchg_stats(const mpb_xphase *ph, int nphase, size_t es, int nranks, mpb_xstats *s) {
  memset(s, 0, sizeof *s);
  unsigned char *seen = NULL;
  int64_t peak = 0;
  for (int p = 0; p < nphase; p++) {
    int64_t alive = 0;
    for (int i = 0; i < ph[p].nsend; i++) {
      s->send_bytes += ph[p].send[i].n * (int64_t)es;
      alive += ph[p].send[i].n * (int64_t)es;
    }
    for (int i = 0; i < ph[p].nrecv; i++) {
      s->recv_bytes += ph[p].recv[i].n * (int64_t)es;
      alive += ph[p].recv[i].n * (int64_t)es;
    }
    for (int i = 0; i < ph[p].nself; i++) s->self_bytes += ph[p].self[2 * i].n * (int64_t)es;
    s->messages += count_msgs(ph[p].send, ph[p].nsend, es);
    if (alive > peak) peak = alive;
  }
  s->peak_extra = peak;
  /* distinct peers: a small bitmap on the stack for the usual sizes */
  unsigned char small[256];
  size_t nb = (size_t)nranks / 8 + 1;
  seen = nb <= sizeof small ? small : NULL;
  if (!seen) { /* many ranks: count sends' peers only, an upper bound stays meaningful */
    s->peers = s->messages;
    return;
  }
  memset(seen, 0, nb);
  for (int p = 0; p < nphase; p++) {
    for (int i = 0; i < ph[p].nsend; i++) seen[ph[p].send[i].peer / 8] |= 1 << (ph[p].send[i].peer % 8);
    for (int i = 0; i < ph[p].nrecv; i++) seen[ph[p].recv[i].peer / 8] |= 1 << (ph[p].recv[i].peer % 8);
  }
  for (size_t b = 0; b < nb; b++) s->peers += __builtin_popcount(seen[b]);
}

void mpb_xchg_push_info(lua_State *L, const mpb_xstats *s, const char *method, int nextra) {
  lua_createtable(L, 0, 7 + nextra);
  lua_pushstring(L, method);
  lua_setfield(L, -2, "method");
  const struct { const char *k; int64_t v; } f[] = {
      {"peers", s->peers}, {"messages", s->messages}, {"send_bytes", s->send_bytes},
      {"recv_bytes", s->recv_bytes}, {"self_bytes", s->self_bytes},
      {"peak_extra", s->peak_extra}};
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
static void start_phase(lua_State *L, mpb_xreq *q) {
  const mpb_xphase *p = &q->ph[q->phase];
  size_t es = q->es;
  for (int i = 0, j; i < p->nsend; i = j) {
    size_t len;
    j = msg_end(p->send, p->nsend, i, es, &len);
    char *buf = mpb_coll_tagged_new(L, &q->x, p->send[i].tag, len);
    pack_run(&q->src, &p->send[i], j - i, es, buf + sizeof(mpb_uhdr), 0);
    mpb_coll_tagged_send(L, &q->x, p->send[i].peer, buf, len);
  }
  for (int i = 0; i < p->nself; i++)
    if (q->alias) copy_box_via(L, q, &p->self[2 * i], &p->self[2 * i + 1]);
    else copy_box(&q->src, &p->self[2 * i], &q->dst, &p->self[2 * i + 1], es);
  memset(q->done, 0, (size_t)p->nrecv);
  q->left = count_msgs(p->recv, p->nrecv, es);
  q->seen = 0;
}

/* Unpack what has arrived; start the next phases while they complete.
** Returns 1 when the exchange is complete. done[i] marks the run starting
** at receive i. */
static int progress(lua_State *L, mpb_xreq *q) {
  mpb_state *st = q->x.st;
  size_t es = q->es;
  while (q->phase < q->nphase) {
    const mpb_xphase *p = &q->ph[q->phase];
    for (int i = 0, j; i < p->nrecv && q->left > 0; i = j) {
      size_t want;
      j = msg_end(p->recv, p->nrecv, i, es, &want);
      if (q->done[i]) continue;
      const mpb_xbox *b = &p->recv[i];
      mpb_msg *m = mpb_coll_tagged_find(st, &q->x, b->peer, b->tag, 1);
      if (!m) continue;
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
      q->done[i] = 1;
      q->left--;
    }
    if (q->left > 0) return 0;
    if (++q->phase < q->nphase) start_phase(L, q);
  }
  q->state = X_READY;
  return 1;
}

/* A ready function of the one wait: has a message of a pending receive come? */
static int arrived(mpb_state *st, void *ud) {
  mpb_xreq *q = ud;
  if (st->seq == q->seen) return 0;
  q->seen = st->seq;
  const mpb_xphase *p = &q->ph[q->phase];
  size_t es = q->es, len;
  for (int i = 0; i < p->nrecv; i = msg_end(p->recv, p->nrecv, i, es, &len))
    if (!q->done[i] && mpb_coll_tagged_find(st, &q->x, p->recv[i].peer, p->recv[i].tag, 0))
      return 1;
  return 0;
}

static void run_to_end(lua_State *L, mpb_xreq *q) {
  while (!progress(L, q)) mpb_coll_tagged_wait(L, &q->x, arrived, q);
}

/* While tracing: how many ranks the exchange talks to (a span's peers). */
static int trace_peers(const mpb_xreq *q) {
  if (!q->x.st->trace || q->local) return 0;
  mpb_xstats s;
  mpb_xchg_stats(q->ph, q->nphase, q->es, q->x.c->size, &s);
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
  union { /* the request and room for its done[] (a union may hold it; a struct may not) */
    mpb_xreq q;
    unsigned char room[sizeof(mpb_xreq) + STACK_RECV];
  } onstack;
  mpb_xreq *q = &onstack.q;
  if (!wait || maxrecv > STACK_RECV) {
    q = lua_newuserdatauv(L, sizeof *q + (size_t)maxrecv, 4);
    memset(q, 0, sizeof *q);
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
  mpb_state *st = mpb_get(L);
  mpb_xreq *q = luaL_testudata(L, 1, XREQ_MT);
  if (!q) mpb_lay_argerror(L, 1, fname, "exchange request expected, got %s", luaL_typename(L, 1));
  if (!q->local) {
    mpb_check_abort(L, st);
    if (q->task != st->task)
      mpb_lay_argerror(L, 0, fname, "request from an earlier task (task %I, now %I)",
                       (LUAI_UACINT)q->task, (LUAI_UACINT)st->task);
    if (q->naborts != st->naborts)
      mpb_lay_argerror(L, 0, fname, "request from an aborted task (task %I)", (LUAI_UACINT)q->task);
    mpb_check_task(L, st, fname);
  }
  if (q->state == X_USED)
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
  luaL_newmetatable(L, XREQ_MT);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, xtostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
}
