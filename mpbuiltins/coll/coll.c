/* SPDX-License-Identifier: MIT */
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
    "neighbor_alltoall", "dist_graph", "attach", "DArray.gather", "Layout.scatter", "file",
    "mpi.Ibarrier", "mpi.Ibcast", "mpi.Ireduce", "mpi.Iallreduce", "mpi.Igather", "mpi.Iscatter",
    "mpi.Iallgather", "mpi.Ialltoall", "mpi.Iscan", "mpi.Iexscan",
    "window"};

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
  x.call = NULL;
  if (c->seq_task != st->task) { /* numbers restart with each task */
    c->seq_task = st->task;
    c->nseq = 0;
    c->ring_n = 0;
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
  mpb_coll x = mpb_coll_on(L, st, c, fname, kind);
  x.call = lua_touserdata(L, lua_upvalueindex(2)); /* an upper layer's call (coll.h) */
  if (x.call) x.fname = x.call->name;
  return x;
}

/* ---------------------------------------------------------- signatures */
/* The kind byte of a root check's message (coll.c, roots) has this bit. */
#define RING_BIT 0x80

void mpb_coll_header(const mpb_coll *x, mpb_uhdr *h) {
  h->task = 0;
  h->comm = x->c->id;
  h->flags = (uint32_t)x->kind | (uint32_t)(x->op < 0 ? 0 : x->op + 1) << 8 |
             (x->call ? x->call->id : 0u) << 16;
  h->seq = x->seq;
  h->aux = x->root;
}

static const char *op_name(int op) {
  return op == MPB_COLL_FUNC ? "a function" : op < 0 ? "none" : mpb_red_name(op);
}

/* The name a user calls a collective of this kind by (after "mp."). */
static const char *call_name(int kind) {
  return kind == MPB_COLL_SPLIT ? "Comm.split" : kind == MPB_COLL_DUP ? "Comm.dup"
                                                                      : mpb_coll_kind_name(kind);
}

/* The name of the call that sent a message with this header's flags: the
** upper layer's call when both it and x are one (coll.h), else mp's. */
static const char *sender_name(const mpb_coll *x, uint32_t flags) {
  unsigned id = (flags >> 16) & 0xff;
  return id && x->call ? x->call->names[id] : call_name((int)(flags & 0x7f));
}

/* Describe how m (from a member of x's communicator) disagrees with x;
** returns 0 when it does not. */
static int mismatch(const mpb_coll *x, const mpb_msg *m, char *buf, size_t n) {
  mpb_uhdr h = mpb_msg_hdr(m);
  int kind = (int)(h.flags & 0x7f), op = (int)((h.flags >> 8) & 0xff) - 1;
  unsigned id = (h.flags >> 16) & 0xff;
  int r = mpb_comm_of(x->c, m->src);
  if (h.seq != x->seq)
    snprintf(buf, n, "rank %d sent a message of its collective #%u on this communicator "
             "(mp.%s) where this rank waits in #%u (mp.%s)", r, h.seq, sender_name(x, h.flags),
             x->seq, x->call ? x->call->name : call_name(x->kind));
  else if (kind != x->kind || (id && x->call && id != x->call->id))
    snprintf(buf, n, "rank %d called mp.%s (collective #%u on this communicator)", r,
             sender_name(x, h.flags), x->seq);
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
  /* what a collective sends comes from its argument #1 (the value, or the list) */
  struct mpb_wbuf *b = mpb_encode_msg(L, first, n, x->fname, 1, sizeof(mpb_uhdr));
  mpb_uhdr h;
  mpb_coll_header(x, &h);
  mpb_send(L, x->st, x->c->ranks[r], MPB_CH_COLL, b, 1, &h, ids);
  x->st->user_sent++; /* one that nobody takes is reported as dropped */
  lua_pop(L, 1);
}

typedef struct {
  const mpb_coll *x;
  int r;
  uint64_t seen;     /* st->seq when the queued messages were last looked at */
  const mpb_msg *bad;
} take_arg;

/* A queued message of this collective from another member that disagrees,
** among those that arrived after number `since`: the channel's arrival
** order walked back from the newest, so that a wait looks at each arrival
** once, not at every member's queue. Of several, the lowest comm rank's
** oldest, as a walk over the members' queues finds. */
static const mpb_msg *find_bad(const mpb_coll *x, uint64_t since) {
  char scratch[8];
  const mpb_msg *bad = NULL;
  int bad_r = x->c->size;
  for (const mpb_msg *m = mpb_inbox_newest(x->st, MPB_CH_COLL); m && m->seq > since;
       m = m->aprev) {
    mpb_uhdr h = mpb_msg_hdr(m);
    int r = h.comm == x->c->id && h.task == x->st->task && h.seq == x->seq
                ? mpb_comm_of(x->c, m->src) : -1;
    if (r >= 0 && r <= bad_r && mismatch(x, m, scratch, sizeof scratch)) bad = m, bad_r = r;
  }
  return bad;
}

static int coll_ready(mpb_state *st, void *ud) {
  take_arg *a = ud;
  if (mpb_comm_peek(st, a->x->c, MPB_CH_COLL, a->r, 0)) return 1;
  if (st->seq != a->seen) { /* something arrived: is it a sign of a mismatch? */
    a->bad = find_bad(a->x, a->seen);
    a->seen = st->seq;
  }
  return a->bad != NULL;
}

static int is_ring(const mpb_msg *m) { return (mpb_msg_hdr(m).flags & RING_BIT) != 0; }
static void ring_taken(lua_State *L, mpb_coll *x, mpb_msg *m);

/* r's next message on x's communicator, whatever it is (the one wait). */
static mpb_msg *take_any(lua_State *L, mpb_coll *x, int r) {
  mpb_state *st = x->st;
  char what[MPB_ERRLEN];
  mpb_msg *m = mpb_comm_peek(st, x->c, MPB_CH_COLL, r, 1);
  if (m) return m;
  take_arg a = {x, r, 0, NULL};
  mpb_poll(st);
  if (!coll_ready(st, &a)) {
    if (x->c->ranks[r] == st->rank || x->c->size == 1)
      luaL_error(L, "mp.%s: " MPB_RANKFMT " would wait forever: no message from itself is "
                 "queued", x->fname, st->rank, st->size);
    mpb_waitdesc d = {x->fname, x->c->ranks[r], x->c->id, x->seq, NULL};
    mpb_wait_described(L, st, coll_ready, &a, &d);
  }
  if (a.bad && !mpb_comm_peek(st, x->c, MPB_CH_COLL, r, 0)) {
    mismatch(x, a.bad, what, sizeof what);
    raise_mismatch(L, x, what);
  }
  return mpb_comm_peek(st, x->c, MPB_CH_COLL, r, 1);
}

mpb_msg *mpb_coll_take(lua_State *L, mpb_coll *x, int r) {
  char what[MPB_ERRLEN];
  for (;;) {
    mpb_msg *m = take_any(L, x, r);
    if (is_ring(m)) { /* a root check come first in r's order: settle it, go on */
      ring_taken(L, x, m);
      continue;
    }
    if (mismatch(x, m, what, sizeof what)) {
      mpb_msg_free(m);
      raise_mismatch(L, x, what);
    }
    return m;
  }
}

void mpb_coll_recv_val(lua_State *L, mpb_coll *x, int r) {
  int top = lua_gettop(L);
  int n = mpb_push_msg(L, x->st, mpb_coll_take(L, x, r), x->fname);
  if (n == 0) lua_pushnil(L);
  lua_settop(L, top + 1);
}

void mpb_coll_push_own(lua_State *L, mpb_coll *x, int idx, int arg) {
  mpb_push_copy(L, x->st, idx, x->fname, arg);
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

/* ------------------------------------------------------------- roots */
/* Roots are checked round a ring: on entering bcast, gather or scatter each
** member sends the next one an empty message of the call (RING_BIT in its
** kind, its root in the header), and the previous member's is compared with
** this rank's own call. Ranks that name different roots always include a
** pair of neighbours that disagree, and the second of the pair raises the
** mismatch naming both roots (a tree's own messages cannot tell: a rank
** that takes itself for the root of a bcast receives nothing).
** The previous member's message is taken when it is there (at the end of
** the call, when a message from that member is taken anyway, since it comes
** first in that member's order), else later: by the next rooted call, at
** the latest when MPB_COMM_RING calls wait for theirs, or at the end of the
** task (mpb_coll_settle). So the check synchronizes nobody: a loop of
** broadcasts runs ahead as before. The calls not settled yet are kept on
** the communicator (its ring[]), oldest first. */
static int prev_of(const mpb_comm *c) { return (c->rank + c->size - 1) % c->size; }

/* The call the oldest unsettled check is for (x: the current one). */
static mpb_coll oldest(const mpb_coll *x) {
  mpb_coll y = *x;
  y.kind = x->c->ring[0].kind;
  y.seq = x->c->ring[0].seq;
  y.root = x->c->ring[0].root;
  y.op = -1;
  y.call = x->c->ring[0].call;
  y.fname = y.call ? y.call->name : mpb_coll_kind_name(y.kind);
  return y;
}

/* The previous member's check message m, compared with the oldest call
** not settled yet (freed). */
static void ring_taken(lua_State *L, mpb_coll *x, mpb_msg *m) {
  mpb_comm *c = x->c;
  char what[MPB_ERRLEN];
  mpb_coll y = c->ring_n > 0 ? oldest(x) : *x; /* none due: a call this rank did not make */
  int bad = mismatch(&y, m, what, sizeof what) || c->ring_n == 0;
  mpb_msg_free(m);
  if (bad) raise_mismatch(L, &y, what);
  c->ring_n--;
  memmove(c->ring, c->ring + 1, sizeof c->ring[0] * (size_t)c->ring_n);
}

/* Take the previous member's check messages that have come (wait for the
** oldest one when block; block 2: at the task's end, where the wait is
** named by its call and root, the call's line being gone). */
static void ring_settle(lua_State *L, mpb_coll *x, int block) {
  mpb_comm *c = x->c;
  int prev = prev_of(c), end = block == 2;
  while (c->ring_n > 0) {
    mpb_msg *m = mpb_comm_peek(x->st, c, MPB_CH_COLL, prev, 0);
    if (!m && !block) {
      mpb_poll(x->st);
      m = mpb_comm_peek(x->st, c, MPB_CH_COLL, prev, 0);
    }
    if (!m && !block) return;
    mpb_coll y = oldest(x);
    char named[64]; /* an upper layer's call: "mpi.Bcast(root 0)" */
    if (end && y.call &&
        snprintf(named, sizeof named, "%s(root %d)", y.call->name, y.root) > 0)
      y.fname = named;
    if (m && !is_ring(m)) { /* another message before the check: a call this rank did not make */
      char what[MPB_ERRLEN];
      if (!mismatch(&y, m, what, sizeof what))
        snprintf(what, sizeof what, "rank %d sent a message of collective #%u before checking "
                 "its root", prev, y.seq);
      raise_mismatch(L, &y, what);
    }
    ring_taken(L, x, take_any(L, &y, prev));
    block = 0; /* the oldest is settled; the others if they are there */
  }
}

static const char DUE[] = "mp.coll.due"; /* {[communicator] = true}: checks still due */

void mpb_coll_ring_send(lua_State *L, mpb_coll *x) {
  mpb_comm *c = x->c;
  if (c->size < 2) return;
  if (c->ring_n == MPB_COMM_RING) ring_settle(L, x, 1); /* so far ahead: wait for the oldest */
  if (c->ring_n == 0 && lua_touserdata(L, 1) == c) { /* settled at the task's end */
    luaL_getsubtable(L, LUA_REGISTRYINDEX, DUE);
    lua_pushvalue(L, 1);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
  }
  c->ring[c->ring_n].seq = x->seq;
  c->ring[c->ring_n].kind = x->kind;
  c->ring[c->ring_n].root = x->root;
  c->ring[c->ring_n].call = x->call;
  c->ring_n++;
  mpb_coll y = *x;
  y.kind |= RING_BIT;
  mpb_coll_send_raw(L, &y, (c->rank + 1) % c->size, NULL, 0);
}

void mpb_coll_ring_take(lua_State *L, mpb_coll *x) {
  if (x->c->size > 1) ring_settle(L, x, 0);
}

void mpb_coll_settle(lua_State *L) {
  mpb_state *st = mpb_get(L);
  if (lua_getfield(L, LUA_REGISTRYINDEX, DUE) != LUA_TTABLE) {
    lua_pop(L, 1);
    return;
  }
  int due = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, due)) {
    lua_pop(L, 1);
    mpb_comm *c = lua_touserdata(L, -1);
    if (c->ring_n > 0 && c->seq_task == st->task) {
      mpb_coll x = {st, c, "exec", MPB_COLL_BCAST, -1, 0, -1, c->nseq, NULL};
      while (c->ring_n > 0) ring_settle(L, &x, 2);
    }
  }
  lua_pop(L, 1);
  lua_pushnil(L); /* a new table for the next task (the old one let its comms go) */
  lua_setfield(L, LUA_REGISTRYINDEX, DUE);
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
        mpb_msg *m = mpb_coll_take(L, x, (vr - mask + root) % n);
        if (mask > 1 && vr + 1 < n && !(m = mpb_msg_inline_strs(m))) /* it goes on as it is */
          luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory", x->fname, st->rank, st->size);
        held = mpb_msg_hold(L, m);
        mpb_msg_check_lost(L, st, *held, x->fname); /* before it goes on */
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
  if (!nkids && vr == 0 && n == 1) { /* alone: what could not travel fails as with others */
    mpb_encode_done(st, mpb_encode_msg(L, vidx, 1, x->fname, 1, 0));
    lua_pop(L, 1);
  }
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
  mpb_coll_ring_send(L, &x); /* the root check */
  mpb_coll_bcast_at(L, &x, 2, x.root);
  mpb_coll_ring_take(L, &x);
  return 1;
}

/* comm:barrier(): dissemination, ceil(log2 n) rounds of empty messages. */
static int c_barrier(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "barrier", MPB_COLL_BARRIER);
  if (lua_gettop(L) > 1) mpb_check_nargs(L, x.st, 2, 0, "barrier", "no arguments");
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
  mpb_open_agree(L);
}
