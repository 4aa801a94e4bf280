/* SPDX-License-Identifier: MIT */
/*
** mp.mpi's nonblocking collectives: Ibarrier, Ibcast, Ireduce, Iallreduce,
** Igather, Iscatter, Iallgather, Ialltoall, Iscan, Iexscan. Each returns a
** request (mpi_req.c) that mixes with point-to-point ones in every Wait and
** Test call; its wait gives what the blocking call returns.
**
** Schedule: direct. Every message a rank owes the collective is sent when
** the call starts (a barrier's empty message to every other member, a
** bcast's value from the root to each, an allreduce's value to each, a
** scan's to every higher rank...), and completing it is local: every
** message it expects has come (found in the mailbox, where any wait or
** poll of the runtime puts what arrives) and its own sends are done. So
** nothing waits on another rank's progress: a rank that tests in a loop
** completes as soon as every other member has started the call, even if
** they compute meanwhile, and a rank blocked in any other call never holds
** a collective up. The price is n - 1 messages per rank where trees send
** log2(n), and for reductions n - 1 values received where a tree receives
** log2(n): fine at the sizes a prototype runs (see README "Nonblocking
** collectives").
**
** The messages travel on MPB_CH_DIST (coll.h's tagged messages: found by
** communicator, task, number and sender wherever they sit, so collectives
** in flight never take each other's, and neither mp.recv nor mpi.Recv sees
** them), numbered on their communicator with every other collective (MPI's
** rule: all ranks start collectives in the same order). A message under
** this number that belongs to another collective (another kind, op or
** root, or a blocking collective's) is a mismatch, raised by the wait. A
** reduction folds the values as mp.reduce does (a binomial tree over ranks
** 0..n-1), a scan left to right, after all have come.
*/
#include <stdio.h>
#include <string.h>

#include "coll/coll.h"
#include "mpi/mpi.h"
#include "wire/wire.h"

typedef struct mpb_icoll {
  mpb_coll x;        /* kind, op, root, number, communicator */
  uint32_t flags;    /* its messages' header flags (kind, op) */
  int next;          /* members below it have their message here */
  uint64_t ids[2];   /* its sends (ids[0] > ids[1]: none) */
  char why[160];     /* a mismatch seen (empty: none) */
} mpb_icoll;

typedef struct {
  mpb_mpireq r;
  mpb_icoll ic;
} icreq;

/* What a request's result is made of besides its messages (this rank's
** value or list, and the op when it is a function) waits in a registry
** table of the current task, keyed by the request's address, until the
** request is delivered or collected, or the next task replaces the table. */
static const char KEEP = 0;

/* Push the table of the current task (a new one at a task's start). */
static void keep_table(lua_State *L, mpb_state *st) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &KEEP) == LUA_TTABLE) {
    lua_getfield(L, -1, "task");
    lua_getfield(L, -2, "naborts");
    int same = lua_tointeger(L, -2) == st->task && lua_tointeger(L, -1) == st->naborts;
    lua_pop(L, 2);
    if (same) return;
  }
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushinteger(L, st->task);
  lua_setfield(L, -2, "task");
  lua_pushinteger(L, st->naborts);
  lua_setfield(L, -2, "naborts");
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &KEEP);
}

void mpb_mpi_icoll_forget(lua_State *L, mpb_mpireq *r) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &KEEP) == LUA_TTABLE) {
    lua_pushnil(L);
    lua_rawsetp(L, -2, r);
  }
  lua_pop(L, 1);
}

/* The root check of rooted collectives (bcast, scatter, gather, reduce):
** as mp's (coll.c), every member sends an empty message naming its root to
** the next member, so that ranks that disagree on the root raise a
** mismatch instead of returning garbage. It carries this bit in its kind. */
#define RING 0x80

static int rooted(const mpb_coll *x) { return x->root >= 0 && x->c->size > 1; }

/* Whether comm rank from sends a message to comm rank to. */
static int owes(const mpb_coll *x, int from, int to) {
  if (from == to) return 0;
  switch (x->kind) {
    case MPB_COLL_IBCAST: case MPB_COLL_ISCATTER: return from == x->root;
    case MPB_COLL_IGATHER: case MPB_COLL_IREDUCE: return to == x->root;
    case MPB_COLL_ISCAN: case MPB_COLL_IEXSCAN: return to > from;
    default: return 1; /* barrier, allgather, alltoall, allreduce */
  }
}
static int sends_to(const mpb_coll *x, int r) { return owes(x, x->c->rank, r); }
static int expects(const mpb_coll *x, int r) { return owes(x, r, x->c->rank); }

/* --------------------------------------------------------------- finding */
/* Record how a message h from comm rank r under ic's number disagrees. */
static void mismatch(mpb_icoll *ic, int r, const mpb_uhdr *h) {
  const mpb_coll *x = &ic->x;
  int kind = (int)(h->flags & 0x7f);
  if (kind != x->kind)
    snprintf(ic->why, sizeof ic->why, "rank %d called mp.%s (collective #%u on this "
             "communicator) where this rank called mp.%s", r, mpb_coll_kind_name(kind),
             (unsigned)x->seq, x->fname);
  else if (h->aux != x->root)
    snprintf(ic->why, sizeof ic->why, "rank %d called mp.%s with root %d (here %d)", r, x->fname,
             (int)h->aux, x->root);
  else
    snprintf(ic->why, sizeof ic->why, "rank %d called mp.%s with another op", r, x->fname);
}

/* Comm rank r's message of ic (its root check with ring; taken out of its
** queue when take), or NULL; a message of r under ic's number that belongs
** to another call is recorded in ic->why. No Lua. */
static mpb_msg *find(mpb_state *st, mpb_icoll *ic, int r, int ring, int take) {
  const mpb_coll *x = &ic->x;
  int w = x->c->ranks[r];
  st->looks++;
  for (mpb_msg *m = mpb_inbox(st, MPB_CH_DIST, w)->head; m; m = m->next) {
    mpb_uhdr h = mpb_msg_hdr(m);
    if (h.comm != x->c->id || h.task != st->task || h.seq != x->seq) continue;
    if ((h.flags & 0xff7f) != ic->flags || h.aux != x->root) {
      mismatch(ic, r, &h);
      return NULL;
    }
    if (!(h.flags & RING) != !ring) continue;
    if (take) {
      mpb_inbox_take(st, m);
      mpb_trace_taken(st, m);
    }
    return m;
  }
  for (const mpb_msg *m = mpb_inbox(st, MPB_CH_COLL, w)->head; m; m = m->next) {
    mpb_uhdr h = mpb_msg_hdr(m); /* a blocking collective under this number */
    if (h.comm == x->c->id && h.task == st->task && h.seq == x->seq) {
      mismatch(ic, r, &h);
      return NULL;
    }
  }
  return NULL;
}

int mpb_mpi_icoll_done(mpb_mpi *M, mpb_mpireq *r) {
  mpb_icoll *ic = r->icoll;
  const mpb_coll *x = &ic->x;
  int n = x->c->size;
  for (; !ic->why[0] && ic->next < n; ic->next++)
    if (expects(x, ic->next) && !find(M->st, ic, ic->next, 0, 0) && !ic->why[0]) return 0;
  if (!ic->why[0] && rooted(x) && !find(M->st, ic, (x->c->rank + n - 1) % n, 1, 0) && !ic->why[0])
    return 0;
  return ic->why[0] || mpb_sends_gone(M->st, ic->ids);
}

void mpb_mpi_icoll_describe(char *buf, size_t n, const char *fname, const mpb_mpireq *r,
                            uint32_t *seq) {
  const mpb_coll *x = &r->icoll->x;
  const char *name = x->fname + 4; /* past "mpi." */
  if (x->root >= 0) snprintf(buf, n, "%s(%s, root %d)", fname, name, x->root);
  else snprintf(buf, n, "%s(%s)", fname, name);
  *seq = x->seq;
}

/* --------------------------------------------------------------- results */
/* Push comm rank r's value (its message taken and decoded). */
static void recv_val(lua_State *L, mpb_mpi *M, mpb_icoll *ic, int r) {
  int top = lua_gettop(L);
  mpb_msg *m = find(M->st, ic, r, 0, 1);
  if (!m) /* mpb_mpi_icoll_done found it: only a bug gets here */
    luaL_error(L, "mp.%s: " MPB_RANKFMT " the message of rank %d is gone", ic->x.fname,
               M->st->rank, M->st->size, r);
  if (mpb_push_msg(L, M->st, m, ic->x.fname) == 0) lua_pushnil(L);
  lua_settop(L, top + 1);
}

/* Push {v0, v1, ...}: every member's value but this rank's (own) read from
** its message; for lists (alltoall), own is this rank's list item. */
static void all_vals(lua_State *L, mpb_mpi *M, mpb_icoll *ic, int lo, int hi, int own) {
  lua_createtable(L, hi - lo, 0);
  for (int r = lo; r < hi; r++) {
    if (r == ic->x.c->rank) lua_pushvalue(L, own);
    else recv_val(L, M, ic, r);
    lua_rawseti(L, -2, r + 1);
  }
}

/* Fold the values of ranks lo..hi-1 (in the table at t) as mp.reduce does:
** a binomial tree, (v0 op v1) op (v2 op v3) for 4 ranks; scan: left to
** right. Pushes the result. */
static void fold(lua_State *L, mpb_icoll *ic, int t, int lo, int hi, int tree) {
  int me = ic->x.c->rank, mine = 1; /* this rank's value is the caller's: never changed */
  if (tree) {
    for (int mask = 1; mask < hi - lo; mask <<= 1)
      for (int r = lo; r + mask < hi; r += 2 * mask) {
        lua_rawgeti(L, t, r + 1);
        lua_rawgeti(L, t, r + mask + 1);
        mpb_coll_combine(L, &ic->x, r + mask, !(r == me && mine));
        lua_rawseti(L, t, r + 1);
        if (r == me) mine = 0;
      }
    lua_rawgeti(L, t, lo + 1);
    return;
  }
  lua_rawgeti(L, t, lo + 1);
  int owned = lo != me;
  for (int r = lo + 1; r < hi; r++) {
    lua_rawgeti(L, t, r + 1);
    mpb_coll_combine(L, &ic->x, r, owned);
    owned = 1;
  }
}

int mpb_mpi_icoll_push(lua_State *L, mpb_mpi *M, mpb_mpireq *r, const char *fname) {
  mpb_icoll *ic = r->icoll;
  mpb_coll *x = &ic->x;
  mpb_state *st = M->st;
  int n = x->c->size, me = x->c->rank, root = x->root;
  if (ic->why[0])
    luaL_error(L, "mp.%s: " MPB_RANKFMT " mismatched collectives: %s", fname, st->rank, st->size,
               ic->why);
  luaL_checkstack(L, 8, fname);
  if (rooted(x)) mpb_msg_free(find(st, ic, (me + n - 1) % n, 1, 1));
  int base = lua_gettop(L);
  keep_table(L, st);
  if (lua_rawgetp(L, -1, r) != LUA_TTABLE) { /* {value, op} */
    lua_pop(L, 1);
    lua_newtable(L);
  }
  lua_pushnil(L);
  lua_rawsetp(L, base + 1, r);
  lua_rawgeti(L, base + 2, 1);
  int own = base + 3;
  lua_rawgeti(L, base + 2, 2);
  x->fidx = base + 4; /* the op, when a function */
  int nres = 1;
  switch (x->kind) {
    case MPB_COLL_IBARRIER:
      for (int k = 0; k < n; k++)
        if (k != me) mpb_msg_free(find(st, ic, k, 0, 1));
      nres = 0;
      break;
    case MPB_COLL_IBCAST:
      if (me == root) lua_pushvalue(L, own);
      else recv_val(L, M, ic, root);
      break;
    case MPB_COLL_ISCATTER:
      if (me == root) lua_rawgeti(L, own, me + 1);
      else recv_val(L, M, ic, root);
      break;
    case MPB_COLL_IGATHER:
      if (me == root) all_vals(L, M, ic, 0, n, own);
      else nres = 0;
      break;
    case MPB_COLL_IALLGATHER:
      all_vals(L, M, ic, 0, n, own);
      break;
    case MPB_COLL_IALLTOALL:
      lua_rawgeti(L, own, me + 1);
      all_vals(L, M, ic, 0, n, lua_gettop(L));
      break;
    case MPB_COLL_IREDUCE: case MPB_COLL_IALLRED:
      if (x->kind == MPB_COLL_IREDUCE && me != root) {
        nres = 0;
        break;
      }
      all_vals(L, M, ic, 0, n, own);
      fold(L, ic, lua_gettop(L), 0, n, 1);
      break;
    default: { /* scan, exscan: ranks 0..me (0..me-1) */
      int hi = x->kind == MPB_COLL_ISCAN ? me + 1 : me;
      if (hi == 0) {
        lua_pushnil(L);
        break;
      }
      all_vals(L, M, ic, 0, hi, own);
      fold(L, ic, lua_gettop(L), 0, hi, 0);
    }
  }
  if (nres) lua_replace(L, base + 1);
  lua_settop(L, base + nres);
  return nres;
}

/* ------------------------------------------------------------------ start */
typedef struct {
  const char *fname;
  int kind;
  int value;      /* argument: the value or list (0: none) */
  int list;       /* the value is a list of one item per member */
  int op;         /* argument: the op (0: none) */
  int root;       /* argument: the root (0: none) */
  int comm;       /* argument: the communicator */
} spec;

/* Send b to comm rank r with header h. A send that reads arrays or strings
** in place (b has segments) joins ic's: the request completes once MPI is
** done with them; the others were copied, and need no wait. */
static void send_one(lua_State *L, mpb_icoll *ic, int r, struct mpb_wbuf *b, int last,
                     const mpb_uhdr *h) {
  uint64_t ids[2];
  int inplace = b->nseg > 0;
  mpb_send(L, ic->x.st, ic->x.c->ranks[r], MPB_CH_DIST, b, last, h, ids);
  if (inplace && ids[0] <= ids[1]) {
    if (ic->ids[0] > ic->ids[1]) ic->ids[0] = ids[0];
    ic->ids[1] = ids[1];
  }
}

/* Send this rank's messages: the value at vidx (encoded once) to every
** member it owes one, or each member its item of the list at vidx; then
** the root check. */
static void send_all(lua_State *L, mpb_icoll *ic, int vidx, int list, int arg) {
  mpb_coll *x = &ic->x;
  int n = x->c->size, me = x->c->rank, last = -1;
  mpb_uhdr h;
  mpb_coll_header(x, &h);
  if (rooted(x)) {
    mpb_uhdr hr = h;
    hr.flags |= RING;
    send_one(L, ic, (me + 1) % n, mpb_encode_msg(L, 0, 0, x->fname, 0, sizeof(mpb_uhdr)), 1, &hr);
    lua_pop(L, 1);
  }
  for (int k = 1; k < n; k++)
    if (sends_to(x, (me + k) % n)) last = k;
  if (last < 0) return;
  struct mpb_wbuf *b = NULL;
  if (!list) b = mpb_encode_msg(L, vidx, vidx ? 1 : 0, x->fname, arg, sizeof(mpb_uhdr));
  for (int k = 1; k <= last; k++) { /* staggered: nobody is everyone's first */
    int r = (me + k) % n;
    if (!sends_to(x, r)) continue;
    if (list) {
      lua_rawgeti(L, vidx, r + 1);
      b = mpb_encode_msg(L, lua_gettop(L), 1, x->fname, arg, sizeof(mpb_uhdr));
    }
    send_one(L, ic, r, b, list || k == last, &h);
    if (list) lua_pop(L, 2);
  }
  if (!list) lua_pop(L, 1);
}

static int start(lua_State *L, const spec *s) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_state *st = M->st;
  mpb_comm *c = mpb_mpi_comm(L, M, s->comm, s->fname);
  int root = -1;
  if (s->root)
    root = lua_isnoneornil(L, s->root) ? 0
                                       : mpb_comm_checkrank(L, st, c, s->root, s->root, s->fname);
  lua_settop(L, s->comm);
  mpb_coll x0 = {st, c, s->fname, s->kind, -1, 0, root, 0, NULL}; /* numbered once checked */
  if (s->list && (c->rank == root || root < 0)) { /* one item per member, checked first */
    if (!lua_istable(L, s->value))
      luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " table expected, got %s)",
                 s->value, s->fname, st->rank, st->size, luaL_typename(L, s->value));
    lua_Integer len = luaL_len(L, s->value);
    if (len != c->size)
      luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " list of %d values (one per "
                 "rank) expected, got %I)", s->value, s->fname, st->rank, st->size, c->size,
                 (LUAI_UACINT)len);
  }
  if (s->op) { /* mpb_coll_op names argument idx - 1: the comm's slot comes first */
    lua_pushnil(L);
    lua_insert(L, 1);
    mpb_coll_op(L, &x0, s->op + 1, s->value + 1);
    lua_remove(L, 1);
    x0.fidx = 0;
  }
  x0.seq = mpb_coll_on(L, st, c, s->fname, s->kind).seq;
  MPB_TRACE_SPAN(L, st, MPB_TR_COLL, x0.kind, x0.root, x0.seq, x0.c->id);
  icreq *q = (icreq *)mpb_mpi_req_new(L, M, c, s->comm, MPB_RQ_COLL, sizeof *q, 1);
  int ridx = lua_gettop(L);
  mpb_icoll *ic = &q->ic;
  q->r.icoll = ic;
  q->r.peer = root;
  q->r.tag = -1;
  ic->x = x0;
  ic->flags = (uint32_t)x0.kind | (uint32_t)(x0.op < 0 ? 0 : x0.op + 1) << 8;
  ic->ids[0] = 1; /* none */
  keep_table(L, st);
  lua_createtable(L, 2, 0);
  if (s->value) lua_pushvalue(L, s->value);
  else lua_pushnil(L);
  lua_rawseti(L, -2, 1);
  if (s->op && lua_isfunction(L, s->op)) {
    lua_pushvalue(L, s->op);
    lua_rawseti(L, -2, 2);
  }
  lua_rawsetp(L, -2, q);
  lua_settop(L, ridx);
  send_all(L, ic, s->value, s->list, s->value);
  lua_settop(L, ridx);
  return 1;
}

#define START(name, kind, value, list, op, root, comm)                        \
  static int name(lua_State *L) {                                             \
    static const spec s = {"mpi." #name, kind, value, list, op, root, comm}; \
    return start(L, &s);                                                      \
  }
/* mpi.Ibarrier([comm]) */
START(Ibarrier, MPB_COLL_IBARRIER, 0, 0, 0, 0, 1)
/* mpi.Ibcast(v, root[, comm]) */
START(Ibcast, MPB_COLL_IBCAST, 1, 0, 0, 2, 3)
/* mpi.Ireduce(v, op, root[, comm]) */
START(Ireduce, MPB_COLL_IREDUCE, 1, 0, 2, 3, 4)
/* mpi.Iallreduce(v, op[, comm]) */
START(Iallreduce, MPB_COLL_IALLRED, 1, 0, 2, 0, 3)
/* mpi.Igather(v, root[, comm]) */
START(Igather, MPB_COLL_IGATHER, 1, 0, 0, 2, 3)
/* mpi.Iscatter(t, root[, comm]) */
START(Iscatter, MPB_COLL_ISCATTER, 1, 1, 0, 2, 3)
/* mpi.Iallgather(v[, comm]) */
START(Iallgather, MPB_COLL_IALLGATHER, 1, 0, 0, 0, 2)
/* mpi.Ialltoall(t[, comm]) */
START(Ialltoall, MPB_COLL_IALLTOALL, 1, 1, 0, 0, 2)
/* mpi.Iscan(v, op[, comm]) */
START(Iscan, MPB_COLL_ISCAN, 1, 0, 2, 0, 3)
/* mpi.Iexscan(v, op[, comm]) */
START(Iexscan, MPB_COLL_IEXSCAN, 1, 0, 2, 0, 3)

void mpb_mpi_icoll_funcs(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"Ibarrier", Ibarrier}, {"Ibcast", Ibcast}, {"Ireduce", Ireduce},
      {"Iallreduce", Iallreduce}, {"Igather", Igather}, {"Iscatter", Iscatter},
      {"Iallgather", Iallgather}, {"Ialltoall", Ialltoall}, {"Iscan", Iscan},
      {"Iexscan", Iexscan}, {NULL, NULL}};
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.mpi.state");
  luaL_setfuncs(L, funcs, 1);
}
