/*
** The collectives' machinery (signatures, sending and taking, raw
** exchanges), bcast and barrier; the reductions are in coll_reduce.c and
** coll_allred.c, the data movers in coll_move.c, split and dup in
** comm_split.c.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/array_ops.h"
#include "coll/coll.h"
#include "wire/wire.h"

static const char *const kind_names[MPB_NCOLL] = {
    "?", "bcast", "reduce", "allreduce", "scan", "gather", "allgather", "scatter",
    "alltoall", "barrier", "split", "dup", "transpose", "halo", "neighbor_allgather",
    "neighbor_alltoall", "dist_graph", "attach", "DArray.gather", "Layout.scatter", "file"};

const char *mpb_coll_kind_name(int k) { return k > 0 && k < MPB_NCOLL ? kind_names[k] : "?"; }

mpb_coll mpb_coll_on(lua_State *L, mpb_state *st, mpb_comm *c, const char *fname, int kind) {
  (void)L;
  mpb_coll x;
  x.st = st;
  x.c = c;
  x.fname = fname;
  x.kind = kind;
  x.op = -1;
  x.fidx = 0;
  x.root = -1;
  if (c->seq_task != st->task) { /* numbers restart with each task */
    c->seq_task = st->task;
    c->nseq = 0;
  }
  x.seq = ++c->nseq;
  return x;
}

mpb_coll mpb_coll_begin(lua_State *L, const char *fname, int kind) {
  mpb_state *st = mpb_get(L);
  int a;
  mpb_comm *c = mpb_comm_self(L, st, fname, &a);
  if (a == 1) { /* mp.X(...): the collectives find the communicator at 1 */
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
  }
  return mpb_coll_on(L, st, c, fname, kind);
}

/* ---------------------------------------------------------- signatures */
void mpb_coll_header(const mpb_coll *x, mpb_uhdr *h) {
  h->task = 0;
  h->comm = x->c->id;
  h->flags = (uint32_t)x->kind | (uint32_t)(x->op < 0 ? 0 : x->op + 1) << 8;
  h->seq = x->seq;
  h->aux = x->root;
}

static const char *op_name(int op) {
  return op == MPB_COLL_FUNC ? "a function" : op < 0 ? "none" : mpb_red_name(op);
}

/* Describe how m (from a member of x's communicator) disagrees with x;
** returns 0 when it does not. */
static int mismatch(const mpb_coll *x, const mpb_msg *m, char *buf, size_t n) {
  mpb_uhdr h = mpb_msg_hdr(m);
  int kind = (int)(h.flags & 0xff), op = (int)((h.flags >> 8) & 0xff) - 1;
  int r = x->c->of_world[m->src];
  if (h.seq != x->seq)
    snprintf(buf, n, "rank %d sent a message of its collective #%u on this communicator "
             "(mp.%s) where this rank waits in #%u (mp.%s)", r, h.seq,
             mpb_coll_kind_name(kind), x->seq, mpb_coll_kind_name(x->kind));
  else if (kind != x->kind)
    snprintf(buf, n, "rank %d called mp.%s (collective #%u on this communicator)", r,
             mpb_coll_kind_name(kind), x->seq);
  else if (op != x->op)
    snprintf(buf, n, "rank %d called it with op %s%s%s (here %s%s%s)", r,
             op >= 0 && op != MPB_COLL_FUNC ? "'" : "", op_name(op),
             op >= 0 && op != MPB_COLL_FUNC ? "'" : "",
             x->op >= 0 && x->op != MPB_COLL_FUNC ? "'" : "", op_name(x->op),
             x->op >= 0 && x->op != MPB_COLL_FUNC ? "'" : "");
  else if (h.aux != x->root)
    snprintf(buf, n, "rank %d called it with root %d (here %d)", r, (int)h.aux, x->root);
  else
    return 0;
  return 1;
}

static void raise_mismatch(lua_State *L, const mpb_coll *x, const char *what) {
  luaL_error(L, "mp.%s: " MPB_RANKFMT " mismatched collectives: %s", x->fname, x->st->rank,
             x->st->size, what);
}

/* ------------------------------------------------------ send and take */
void mpb_coll_send_vals(lua_State *L, mpb_coll *x, int r, int first, int n, uint64_t ids[2]) {
  struct mpb_wbuf *b = mpb_encode_msg(L, first, n, x->fname, 0, sizeof(mpb_uhdr));
  mpb_uhdr h;
  mpb_coll_header(x, &h);
  mpb_send(L, x->st, x->c->ranks[r], MPB_CH_COLL, b, 1, &h, ids);
  x->st->user_sent++; /* one that nobody takes is reported as dropped */
  lua_pop(L, 1);
}

typedef struct {
  const mpb_coll *x;
  int r;
  uint64_t seen;     /* st->seq when the queues were last scanned */
  const mpb_msg *bad;
} take_arg;

/* A queued message of this collective from another member that disagrees. */
static const mpb_msg *find_bad(const mpb_coll *x) {
  char scratch[8];
  for (int i = 0; i < x->c->size; i++) {
    mpb_queue *q = mpb_inbox(x->st, MPB_CH_COLL, x->c->ranks[i]);
    for (const mpb_msg *m = q->head; m; m = m->next) {
      mpb_uhdr h = mpb_msg_hdr(m);
      if (h.comm == x->c->id && h.task == x->st->task && h.seq == x->seq &&
          mismatch(x, m, scratch, sizeof scratch))
        return m;
    }
  }
  return NULL;
}

static int coll_ready(mpb_state *st, void *ud) {
  take_arg *a = ud;
  if (mpb_comm_peek(st, a->x->c, MPB_CH_COLL, a->r, 0)) return 1;
  if (st->seq != a->seen) { /* something arrived: is it a sign of a mismatch? */
    a->seen = st->seq;
    a->bad = find_bad(a->x);
  }
  return a->bad != NULL;
}

mpb_msg *mpb_coll_take(lua_State *L, mpb_coll *x, int r) {
  mpb_state *st = x->st;
  char what[MPB_ERRLEN];
  mpb_msg *m = mpb_comm_peek(st, x->c, MPB_CH_COLL, r, 1);
  if (!m) {
    take_arg a = {x, r, 0, NULL};
    mpb_poll(st);
    if (!coll_ready(st, &a)) {
      if (x->c->ranks[r] == st->rank || x->c->size == 1)
        luaL_error(L, "mp.%s: " MPB_RANKFMT " would wait forever: no message from itself is "
                   "queued", x->fname, st->rank, st->size);
      mpb_waitdesc d = {x->fname, x->c->ranks[r], x->c->id, x->seq};
      mpb_wait_msg(L, st, coll_ready, &a, &d);
    }
    if (a.bad && !mpb_comm_peek(st, x->c, MPB_CH_COLL, r, 0)) {
      mismatch(x, a.bad, what, sizeof what);
      raise_mismatch(L, x, what);
    }
    m = mpb_comm_peek(st, x->c, MPB_CH_COLL, r, 1);
  }
  if (mismatch(x, m, what, sizeof what)) {
    mpb_msg_free(m);
    raise_mismatch(L, x, what);
  }
  return m;
}

void mpb_coll_recv_val(lua_State *L, mpb_coll *x, int r) {
  int top = lua_gettop(L);
  int n = mpb_push_msg(L, x->st, mpb_coll_take(L, x, r), x->fname);
  if (n == 0) lua_pushnil(L);
  lua_settop(L, top + 1);
}

/* ------------------------------------------------------ raw exchanges */
void mpb_coll_send_raw(lua_State *L, mpb_coll *x, int r, const void *p, size_t len) {
  char *buf = malloc(sizeof(mpb_uhdr) + len);
  if (!buf) luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory", x->fname, x->st->rank, x->st->size);
  mpb_uhdr h;
  mpb_coll_header(x, &h);
  h.task = x->st->task;
  memcpy(buf, &h, sizeof h);
  if (len) memcpy(buf + sizeof h, p, len);
  mpb_send_bytes(L, x->st, x->c->ranks[r], MPB_CH_COLL, buf, sizeof h + len, 1);
  x->st->user_sent++;
}

void mpb_coll_take_raw(lua_State *L, mpb_coll *x, int r, void *out, size_t len) {
  mpb_msg *m = mpb_coll_take(L, x, r);
  size_t got = m->len - sizeof(mpb_uhdr);
  if (got == len && len) memcpy(out, m->buf + sizeof(mpb_uhdr), len);
  mpb_msg_free(m);
  if (got != len)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " malformed message from rank %d", x->fname,
               x->st->rank, x->st->size, r);
}

void mpb_coll_allgather_raw(lua_State *L, mpb_coll *x, const void *mine, size_t len, void *out) {
  int n = x->c->size, me = x->c->rank;
  for (int k = 1; k < n; k++) mpb_coll_send_raw(L, x, (me + k) % n, mine, len);
  memcpy((char *)out + (size_t)me * len, mine, len);
  for (int k = 1; k < n; k++) {
    int r = (me - k + n) % n;
    mpb_coll_take_raw(L, x, r, (char *)out + (size_t)r * len, len);
  }
}

/* -------------------------------------------------------------- bcast */
/* Binomial tree from root; inner ranks forward the message they got as it
** is (its parts in place), and everyone waits until what it sent is out. */
void mpb_coll_bcast_at(lua_State *L, mpb_coll *x, int vidx, int root) {
  mpb_state *st = x->st;
  int n = x->c->size, vr = (x->c->rank - root + n) % n, mask = 1;
  mpb_msg **held = NULL;
  if (vr != 0) {
    for (; mask < n; mask <<= 1)
      if (vr & mask) {
        held = mpb_msg_hold(L, mpb_coll_take(L, x, (vr - mask + root) % n));
        break;
      }
  } else {
    while (mask < n) mask <<= 1;
  }
  int hidx = lua_gettop(L), nkids = 0, kids[32];
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < n) kids[nkids++] = x->c->ranks[(vr + mask + root) % n];
  uint64_t ids[2], span[2] = {st->send_ids + 1, st->send_ids};
  if (nkids && !held) mpb_encode_msg(L, vidx, 1, x->fname, 1, sizeof(mpb_uhdr));
  for (int k = 0; k < nkids; k++) {
    if (held) {
      mpb_msg_forward(L, st, *held, kids[k], MPB_CH_COLL, ids);
    } else {
      mpb_uhdr h;
      mpb_coll_header(x, &h);
      mpb_send(L, st, kids[k], MPB_CH_COLL, mpb_wbuf_check(L, -1), k == nkids - 1, &h, ids);
    }
    st->user_sent++;
    span[1] = ids[1];
  }
  lua_settop(L, hidx);
  if (span[0] <= span[1]) mpb_wait(L, st, mpb_sends_gone, span, 0);
  if (!held) {
    lua_pushvalue(L, vidx);
    return;
  }
  mpb_msg *m = *held;
  *held = NULL;
  lua_settop(L, hidx - 1);
  int top = lua_gettop(L);
  if (mpb_push_msg(L, st, m, x->fname) == 0) lua_pushnil(L);
  lua_settop(L, top + 1);
}

/* comm:bcast(v, root=0) */
static int c_bcast(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "bcast", MPB_COLL_BCAST);
  x.root = lua_isnoneornil(L, 3) ? 0 : mpb_comm_checkrank(L, x.st, x.c, 3, 2, "bcast");
  MPB_TRACE_SPAN(L, x.st, MPB_TR_COLL, x.kind, x.root, x.seq, x.c->id);
  lua_settop(L, 2);
  mpb_coll_bcast_at(L, &x, 2, x.root);
  return 1;
}

/* comm:barrier(): dissemination, ceil(log2 n) rounds of empty messages. */
static int c_barrier(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "barrier", MPB_COLL_BARRIER);
  MPB_TRACE_SPAN(L, x.st, MPB_TR_COLL, x.kind, x.root, x.seq, x.c->id);
  int n = x.c->size, me = x.c->rank;
  for (int k = 1; k < n; k <<= 1) {
    mpb_coll_send_raw(L, &x, (me + k) % n, NULL, 0);
    mpb_coll_take_raw(L, &x, (me - k + n) % n, NULL, 0);
  }
  return 0;
}

void mpb_open_coll(lua_State *L) {
  int mpt = lua_gettop(L);
  mpb_comm_setboth(L, mpt, "bcast", c_bcast);
  mpb_comm_setboth(L, mpt, "barrier", c_barrier);
  mpb_coll_reduce_methods(L, mpt);
  mpb_coll_move_methods(L, mpt);
  mpb_coll_comm_methods(L, mpt);
}
