/* SPDX-License-Identifier: MIT */
/*
** Nonblocking messages: mp.isend, mp.irecv (and comm:isend, comm:irecv),
** requests ("mp.Request") with :wait() and :test(), mp.wait, mp.test,
** mp.waitall and mp.waitany.
**
** All mp traffic is already received eagerly by mpb_poll, so:
** - isend hands the message to MPI at once, as mp.send does, but does not
**   wait for the zero-copy parts of large arrays and strings: the request
**   completes when every MPI send it made is done (the sends themselves
**   anchor what they read, so a request may be dropped unwaited).
** - irecv is matched like an MPI posted receive: at posting, to the oldest
**   queued message it accepts; otherwise it joins mpb_p2p_of(st)->posted (posting order)
**   and the first posted irecv that accepts an arriving message takes it
**   (req_arrived). Irecvs posted earlier thus get earlier messages, and
**   a message taken by an irecv is no longer seen by recv or probe.
** A request belongs to the task that made it: using it in another task, or
** after the abort of its own, is an error, never a hang. Completing it (wait,
** or test returning true) uses it up: waiting again is an error, and
** waitany skips it (MPI's inactive requests).
** ibcast/iallreduce are not provided: the collectives progress only inside
** their own call, so a request could only run the blocking collective at
** wait time, which is not a nonblocking collective.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/p2p.h"
#include "wire/wire.h"

#define REQ_MT "mp.Request"

enum { R_INERT, R_SEND, R_RECV };
enum { S_PENDING, S_READY, S_USED }; /* S_READY: complete, values not yet returned */

typedef struct mpb_req {
  struct mpb_req *prev, *next; /* in mpb_p2p_of(st)->posted (circular) while posted */
  int kind, state, posted;
  int64_t task, naborts;       /* when it was made */
  uint64_t ids[2];             /* send: its MPI sends */
  int peer;                    /* comm rank sent to / received from; -1 any, -2 several */
  int chan, src;               /* recv: channel, world rank or -1 */
  uint32_t comm;               /* recv: communicator id */
  const mpb_comm *c;           /* its communicator (anchored in user value 1) */
  mpb_msg *m;                  /* recv: the message it took, owned */
  uint64_t stamp;              /* waitall: duplicate check */
} mpb_req;

static const char *const state_names[] = {"pending", "complete", "used"};

/* ---------------------------------------------------------- posted list */
/* The channels whose arrivals req_arrived looks at while irecvs are posted. */
#define POSTED_CHANS ((1u << MPB_CH_USER) | (1u << MPB_CH_CUSER))

static void post(mpb_state *st, mpb_req *r) {
  mpb_req *h = mpb_p2p_of(st)->posted;
  if (!h) {
    r->prev = r->next = r;
    mpb_p2p_of(st)->posted = r;
    st->arrival_chans |= POSTED_CHANS;
  } else { /* append: h->prev is the tail */
    r->prev = h->prev;
    r->next = h;
    h->prev->next = r;
    h->prev = r;
  }
  r->posted = 1;
}

static void unpost(mpb_state *st, mpb_req *r) {
  if (!r->posted) return;
  if (r->next == r) {
    mpb_p2p_of(st)->posted = NULL;
    st->arrival_chans &= ~POSTED_CHANS;
  } else {
    r->prev->next = r->next;
    r->next->prev = r->prev;
    if (mpb_p2p_of(st)->posted == r) mpb_p2p_of(st)->posted = r->next;
  }
  r->prev = r->next = NULL;
  r->posted = 0;
}

static int req_arrived(mpb_state *st, mpb_msg *m) {
  mpb_req *r = mpb_p2p_of(st)->posted; /* usually none: every message comes by here */
  if (!r || !st->in_task || st->aborting || (m->chan != MPB_CH_USER && m->chan != MPB_CH_CUSER))
    return 0;
  mpb_uhdr h = mpb_msg_hdr(m);
  while (r) {
    mpb_req *next = r->next == mpb_p2p_of(st)->posted ? NULL : r->next;
    if (r->task != st->task) { /* an earlier task's: can never match again */
      unpost(st, r);
    } else if (r->chan == m->chan && r->comm == h.comm && h.task == r->task &&
               (r->src < 0 || r->src == m->src)) {
      unpost(st, r);
      r->m = m;
      r->state = S_READY;
      st->user_taken++;
      return 1;
    }
    r = next;
  }
  return 0;
}

/* ------------------------------------------------------------- requests */
/* A new request, inert until it owns something: __gc is always safe. */
static mpb_req *req_new(lua_State *L, mpb_state *st, int cidx) {
  mpb_req *r = lua_newuserdatauv(L, sizeof *r, 1);
  memset(r, 0, sizeof *r);
  luaL_setmetatable(L, REQ_MT);
  lua_pushvalue(L, cidx);
  lua_setiuservalue(L, -2, 1);
  r->c = lua_touserdata(L, cidx);
  r->task = st->task;
  r->naborts = st->naborts;
  return r;
}

static int req_gc(lua_State *L) {
  mpb_req *r = lua_touserdata(L, 1);
  mpb_state *st = *(mpb_state **)lua_getextraspace(L);
  if (st) unpost(st, r);
  mpb_msg_free(r->m);
  r->m = NULL;
  r->state = S_USED;
  return 0;
}

static int req_tostring(lua_State *L) {
  mpb_req *r = luaL_checkudata(L, 1, REQ_MT);
  const char *what = r->kind == R_SEND ? "isend to" : "irecv from";
  if (r->kind == R_INERT) lua_pushliteral(L, "mp.Request (empty)");
  else if (r->peer == -1) lua_pushfstring(L, "mp.Request (%s any, task %I, %s)", what,
                                          (LUAI_UACINT)r->task, state_names[r->state]);
  else if (r->peer == -2) lua_pushfstring(L, "mp.Request (%s several, task %I, %s)", what,
                                          (LUAI_UACINT)r->task, state_names[r->state]);
  else lua_pushfstring(L, "mp.Request (%s %d, task %I, %s)", what, r->peer,
                       (LUAI_UACINT)r->task, state_names[r->state]);
  return 1;
}

/* Check that r may be waited on now; item > 0 names its place in a list. */
static void req_usable(lua_State *L, mpb_state *st, mpb_req *r, const char *fname, int item,
                       int used_ok) {
  char where[32] = "";
  if (item > 0) snprintf(where, sizeof where, " (item %d)", item);
  mpb_check_abort(L, st);
  if (r->task != st->task)
    luaL_error(L, "mp.%s: [rank %d/%d] request from an earlier task (task %I, now %I)%s",
               fname, st->rank, st->size, (LUAI_UACINT)r->task, (LUAI_UACINT)st->task, where);
  if (r->naborts != st->naborts)
    luaL_error(L, "mp.%s: [rank %d/%d] request from an aborted task (task %I)%s", fname,
               st->rank, st->size, (LUAI_UACINT)r->task, where);
  mpb_check_task(L, st, fname);
  if (r->state == S_USED && !used_ok)
    luaL_error(L, "mp.%s: [rank %d/%d] request already completed (its wait or test "
               "returned)%s", fname, st->rank, st->size, where);
}

static mpb_req *req_check(lua_State *L, mpb_state *st, int idx, const char *fname) {
  mpb_req *r = luaL_testudata(L, idx, REQ_MT);
  if (!r || r->kind == R_INERT)
    luaL_error(L, "bad argument #%d to 'mp.%s' ([rank %d/%d] request expected, got %s)", idx,
               fname, st->rank, st->size, r ? "an unfinished request" : luaL_typename(L, idx));
  req_usable(L, st, r, fname, 0, 0);
  return r;
}

/* Complete? (No Lua, no raising: a ready function of the one wait.) */
static int req_done(mpb_state *st, mpb_req *r) {
  if (r->state == S_PENDING && (r->kind == R_RECV ? r->m != NULL : mpb_sends_gone(st, r->ids)))
    r->state = S_READY;
  return r->state != S_PENDING;
}

/* A pending irecv that nothing can ever complete (from itself, or alone). */
static int forever(mpb_state *st, const mpb_req *r) {
  return r->kind == R_RECV && r->state == S_PENDING &&
         (r->src == st->rank || r->c->size == 1 || !st->use_mpi);
}

static void no_forever(lua_State *L, mpb_state *st, const char *fname) {
  luaL_error(L, "mp.%s: [rank %d/%d] would wait forever: no message for the request can "
             "arrive", fname, st->rank, st->size);
}

/* Push r's results (a complete request) and use it up; returns their count:
** none for a send; the values for a recv, the sender's comm rank first when
** it was posted for any sender. */
static int req_deliver(lua_State *L, mpb_state *st, mpb_req *r, const char *fname) {
  r->state = S_USED;
  if (r->kind == R_SEND) return 0;
  mpb_msg *m = r->m;
  r->m = NULL; /* mpb_push_msg owns it now */
  mpb_trace_taken(st, m);
  int any = r->peer < 0;
  luaL_checkstack(L, 1, fname);
  if (any) lua_pushinteger(L, mpb_comm_of(r->c, m->src));
  return mpb_push_msg(L, st, m, fname) + any;
}

/* ----------------------------------------------------- isend and irecv */
/* comm:isend(dst | {dst...}, values...) -> request. */
static int c_isend(lua_State *L) {
  mpb_state *st = mpb_get(L);
  int a;
  mpb_comm *c = mpb_comm_self(L, st, "isend", &a);
  int n = lua_gettop(L) - a, chan = mpb_comm_user_chan(c), list = lua_istable(L, a);
  int buf[MPB_DESTS_BUF];
  const int *to;
  lua_Integer nd = mpb_comm_dests(L, st, c, a, 1, "isend", buf, MPB_DESTS_BUF, &to);
  MPB_TRACE_SPAN(L, st, MPB_TR_SEND, 1, -1, 0, 0);
  mpb_req *q = req_new(L, st, mpb_comm_slot(a));
  int qidx = lua_gettop(L);
  mpb_wbuf *b = mpb_encode_msg(L, a + 1, n, "isend", 2, sizeof(mpb_uhdr));
  uint64_t lo = 0, hi = 0;
  for (lua_Integer i = 0; i < nd; i++) {
    uint64_t ids[2];
    mpb_comm_send(L, st, c, to[i], chan, b, i == nd - 1, ids);
    st->user_sent++;
    if (i == 0) lo = ids[0];
    hi = ids[1];
  }
  q->kind = R_SEND;
  q->peer = list && nd > 1 ? -2 : to[0]; /* a one-item list has one peer */
  q->ids[0] = lo;
  q->ids[1] = hi;
  q->state = nd < 1 || lo > hi ? S_READY : S_PENDING;
  lua_settop(L, qidx);
  return 1;
}

/* comm:irecv([src]) -> request; its wait returns what comm:recv(src) would. */
static int c_irecv(lua_State *L) {
  mpb_state *st = mpb_get(L);
  int a;
  mpb_comm *c = mpb_comm_self(L, st, "irecv", &a);
  if (lua_gettop(L) > a) mpb_check_nargs(L, st, a, 1, "irecv", "at most a source rank");
  int src = lua_isnoneornil(L, a) ? -1 : mpb_comm_checkrank(L, st, c, a, 1, "irecv");
  MPB_TRACE_SPAN(L, st, MPB_TR_RECV, 1, -1, 0, 0);
  mpb_req *q = req_new(L, st, mpb_comm_slot(a));
  q->kind = R_RECV;
  q->peer = src;
  q->chan = mpb_comm_user_chan(c);
  q->comm = c->id;
  q->src = src < 0 ? -1 : c->ranks[src];
  mpb_msg *m = mpb_comm_peek(st, c, q->chan, src, 1); /* no earlier posted irecv wants it */
  if (m) {
    q->m = m;
    q->state = S_READY;
  } else {
    post(st, q);
  }
  return 1;
}

/* ----------------------------------------------------------- the waits */
static int ready1(mpb_state *st, void *ud) { return req_done(st, ud); }

/* req:wait() / mp.wait(req): the request's results (see req_deliver). */
static int r_wait(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_req *r = req_check(L, st, 1, "wait");
  MPB_TRACE_SPAN(L, st, MPB_TR_WAIT, 0, -1, 0, 0);
  if (!req_done(st, r)) {
    mpb_poll(st);
    if (!req_done(st, r)) {
      if (forever(st, r)) no_forever(L, st, "wait");
      mpb_waitdesc d = {"wait", r->kind == R_RECV ? r->src : -1, r->comm, 0, NULL};
      if (r->kind == R_RECV) mpb_wait_described(L, st, ready1, r, &d);
      else mpb_wait(L, st, ready1, r, 0); /* a send completes by itself */
    }
  }
  lua_settop(L, 1);
  return req_deliver(L, st, r, "wait");
}

/* req:test() / mp.test(req): false, or true and the results (used up). */
static int r_test(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_req *r = req_check(L, st, 1, "test");
  if (!req_done(st, r)) {
    mpb_poll(st);
    mpb_check_abort(L, st); /* a polling loop stays abortable */
    if (!req_done(st, r)) {
      lua_pushboolean(L, 0);
      return 1;
    }
  }
  lua_settop(L, 1);
  lua_pushboolean(L, 1);
  return 1 + req_deliver(L, st, r, "test");
}

typedef struct {
  mpb_req **v;
  lua_Integer n, i; /* waitall: v[0..i-1] are complete */
} many;

/* The requests of the list at index 1, checked, into a userdata array
** (pushed); used ones are an error unless used_ok (then NULL in v). */
static many gather_reqs(lua_State *L, mpb_state *st, const char *fname, int used_ok) {
  uint64_t stamp = ++mpb_p2p_of(st)->stamps;
  many a = {NULL, 0, 0};
  luaL_checktype(L, 1, LUA_TTABLE);
  a.n = luaL_len(L, 1);
  luaL_argcheck(L, a.n >= 0 && a.n < (1 << 28), 1, "bad list length");
  a.v = lua_newuserdatauv(L, (size_t)a.n * sizeof *a.v + 1, 0);
  for (lua_Integer i = 1; i <= a.n; i++) {
    lua_geti(L, 1, i);
    mpb_req *r = luaL_testudata(L, -1, REQ_MT);
    if (!r || r->kind == R_INERT)
      luaL_error(L, "bad argument #1 to 'mp.%s' ([rank %d/%d] item %I is not a request: %s)",
                 fname, st->rank, st->size, (LUAI_UACINT)i, luaL_typename(L, -1));
    lua_pop(L, 1);
    req_usable(L, st, r, fname, (int)i, used_ok);
    if (r->stamp == stamp)
      luaL_error(L, "bad argument #1 to 'mp.%s' ([rank %d/%d] item %I is a request listed "
                 "twice)", fname, st->rank, st->size, (LUAI_UACINT)i);
    r->stamp = stamp;
    a.v[i - 1] = r->state == S_USED ? NULL : r;
  }
  return a;
}

static int all_done(mpb_state *st, void *ud) {
  many *a = ud;
  while (a->i < a->n && req_done(st, a->v[a->i])) a->i++;
  return a->i == a->n;
}

/* mp.waitall(reqs): a list of the requests' results, each packed as
** table.pack does ({n = count, ...}), in the order of reqs. */
static int waitall(lua_State *L) {
  mpb_state *st = mpb_get(L);
  many a = gather_reqs(L, st, "waitall", 0);
  MPB_TRACE_SPAN(L, st, MPB_TR_WAIT, 1, -1, 0, 0);
  if (!all_done(st, &a)) {
    mpb_poll(st);
    if (!all_done(st, &a)) {
      for (lua_Integer i = a.i; i < a.n; i++)
        if (forever(st, a.v[i])) no_forever(L, st, "waitall");
      mpb_waitdesc d = {"waitall", -1, 0, 0, NULL};
      mpb_wait_described(L, st, all_done, &a, &d);
    }
  }
  lua_createtable(L, (int)a.n, 0);
  int res = lua_gettop(L);
  for (lua_Integer i = 0; i < a.n; i++) {
    int base = lua_gettop(L);
    int k = req_deliver(L, st, a.v[i], "waitall");
    lua_createtable(L, k, 1);
    lua_insert(L, base + 1);
    for (int j = k; j >= 1; j--) lua_rawseti(L, base + 1, j);
    lua_pushinteger(L, k);
    lua_setfield(L, -2, "n");
    lua_rawseti(L, res, i + 1);
  }
  return 1;
}

static int any_done(mpb_state *st, void *ud) {
  many *a = ud;
  for (a->i = 0; a->i < a->n; a->i++)
    if (a->v[a->i] && req_done(st, a->v[a->i])) return 1;
  return 0;
}

/* mp.waitany(reqs): index, results... of a complete request (the first in
** reqs if several are); used-up requests are skipped, and when every one is
** used up, the result is nil. */
static int waitany(lua_State *L) {
  mpb_state *st = mpb_get(L);
  many a = gather_reqs(L, st, "waitany", 1);
  MPB_TRACE_SPAN(L, st, MPB_TR_WAIT, 2, -1, 0, 0);
  int active = 0, stuck = 0;
  for (lua_Integer i = 0; i < a.n; i++)
    if (a.v[i]) active++, stuck += forever(st, a.v[i]);
  if (!active) {
    lua_pushnil(L);
    return 1;
  }
  if (!any_done(st, &a)) {
    mpb_poll(st);
    if (!any_done(st, &a)) {
      if (stuck == active) no_forever(L, st, "waitany");
      mpb_waitdesc d = {"waitany", -1, 0, 0, NULL};
      mpb_wait_described(L, st, any_done, &a, &d);
    }
  }
  lua_pushinteger(L, a.i + 1);
  return 1 + req_deliver(L, st, a.v[a.i], "waitany");
}

/* ------------------------------------------------------------ register */
void mpb_open_request(lua_State *L) {
  int mpt = lua_gettop(L);
  mpb_get(L)->on_arrival = req_arrived;
  static const luaL_Reg methods[] = {{"wait", r_wait}, {"test", r_test}, {NULL, NULL}};
  static const luaL_Reg funcs[] = {{"wait", r_wait}, {"test", r_test}, {"waitall", waitall},
                                   {"waitany", waitany}, {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__gc", req_gc}, {"__tostring", req_tostring}, {NULL, NULL}};
  mpb_class(L, REQ_MT, methods, NULL, meta);
  mpb_comm_setboth(L, mpt, "isend", c_isend);
  mpb_comm_setboth(L, mpt, "irecv", c_irecv);
  luaL_setfuncs(L, funcs, 0);
}
