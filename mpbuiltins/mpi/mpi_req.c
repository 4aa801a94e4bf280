/* SPDX-License-Identifier: MIT */
/*
** mp.mpi's requests ("mp.mpi.Request"): Isend, Issend, Irecv; Wait,
** Waitall, Waitany, Waitsome, Test, Testall, Testany, Testsome; Cancel of
** receives. An Irecv that finds no queued message is posted (mpi_match.c)
** and matched, in posting order, by whichever call or wait looks next. A
** request belongs to its task; completing it (a wait, or a test that says
** true) makes it inactive, as MPI's: waiting on it again is an error, and
** the list calls skip it. Every wait is the one wait.
*/
#include <stdio.h>
#include <string.h>

#include "mpi/mpi.h"

#define REQ_MT "mp.mpi.Request"

/* A new request on the communicator at cidx, inert until it is filled in. */
mpb_mpireq *mpb_mpi_req_new(lua_State *L, mpb_mpi *M, const mpb_comm *c, int cidx, int kind,
                            size_t size, int nuv) {
  mpb_mpireq *r = lua_newuserdatauv(L, size, nuv);
  memset(r, 0, size);
  lua_pushvalue(L, cidx); /* keeps the communicator alive (nil: mp.world) */
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, REQ_MT);
  r->c = c;
  r->task = M->st->task;
  r->naborts = M->st->naborts;
  r->kind = kind;
  return r;
}

static int req_gc(lua_State *L) {
  mpb_mpireq *r = lua_touserdata(L, 1);
  mpb_mpi *M = lua_touserdata(L, lua_upvalueindex(1));
  mpb_mpi_unpost(M, r);
  if (r->kind == MPB_RQ_COLL) mpb_mpi_icoll_forget(L, r);
  if (r->kind == MPB_RQ_RMA) mpb_mpi_rma_forget(L, r);
  if (r->kind == MPB_RQ_FILE) mpb_mpi_fio_forget(L, r);
  mpb_msg_free(r->m);
  r->m = NULL;
  r->state = MPB_RQ_USED;
  return 0;
}

static int req_tostring(lua_State *L) {
  mpb_mpireq *r = luaL_checkudata(L, 1, REQ_MT);
  static const char *const kinds[] = {"empty", "Isend", "Issend", "Irecv", "collective",
                                      "one-sided", "file I/O"};
  static const char *const states[] = {"pending", "complete", "inactive"};
  lua_pushfstring(L, "mp.mpi.Request (%s, peer %d, tag %d, %s)", kinds[r->kind], r->peer,
                  r->tag, states[r->state]);
  return 1;
}

/* --------------------------------------------------------------- state */
static int req_done(mpb_mpi *M, mpb_mpireq *r) {
  if (r->state != MPB_RQ_PENDING) return 1;
  int done = 0;
  if (r->kind == MPB_RQ_RECV) done = r->m != NULL;
  else if (r->kind == MPB_RQ_COLL) done = mpb_mpi_icoll_done(M, r);
  else if (r->kind == MPB_RQ_RMA) done = mpb_mpi_rma_done(M, r);
  else if (r->kind == MPB_RQ_FILE) done = mpb_mpi_fio_done(M, r);
  else if (mpb_sends_gone(M->st, r->ids)) {
    if (r->kind == MPB_RQ_SSEND && !r->acked)
      r->acked = mpb_mpi_take_ack(M, r->c->ranks[r->peer], r->c->id, r->token);
    done = r->kind == MPB_RQ_SEND || r->acked;
  }
  if (done) r->state = MPB_RQ_READY;
  return done;
}

/* A pending request nothing can complete while this rank waits. */
static int forever(mpb_mpi *M, mpb_mpireq *r) {
  if (r->state != MPB_RQ_PENDING) return 0;
  int self = r->peer >= 0 && r->c->ranks[r->peer] == M->st->rank;
  if (r->kind == MPB_RQ_RECV) return self || r->c->size == 1;
  return r->kind == MPB_RQ_SSEND && self && mpb_sends_gone(M->st, r->ids);
}

static void no_forever(lua_State *L, mpb_state *st, const char *fname) {
  luaL_error(L, "mp.%s: " MPB_RANKFMT " would wait forever: nothing can complete the request",
             fname, st->rank, st->size);
}

static void usable(lua_State *L, mpb_state *st, const mpb_mpireq *r, const char *fname,
                   lua_Integer item, int inactive_ok) {
  char where[32] = "";
  if (item > 0) snprintf(where, sizeof where, " (item %lld)", (long long)item);
  mpb_check_task(L, st, fname);
  if (r->task != st->task || r->naborts != st->naborts)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " request from an earlier or aborted task%s", fname,
               st->rank, st->size, where);
  if (r->state == MPB_RQ_USED && !inactive_ok)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " request is inactive (its wait or test completed it)%s",
               fname, st->rank, st->size, where);
}

static mpb_mpireq *req_check(lua_State *L, mpb_state *st, int idx, const char *fname) {
  mpb_mpireq *r = luaL_testudata(L, idx, REQ_MT);
  if (!r || r->kind == MPB_RQ_INERT)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " request expected, got %s)", idx,
               fname, st->rank, st->size, r ? "an unfinished request" : luaL_typename(L, idx));
  usable(L, st, r, fname, 0, 0);
  return r;
}

/* Push a complete request's results and make it inactive: v, status for a
** receive (nil, status for PROC_NULL or a cancelled one); nothing for a send. */
static int deliver(lua_State *L, mpb_mpi *M, mpb_mpireq *r, const char *fname) {
  r->state = MPB_RQ_USED;
  if (r->kind == MPB_RQ_COLL) return mpb_mpi_icoll_push(L, M, r, fname);
  if (r->kind == MPB_RQ_RMA) return mpb_mpi_rma_push(L, M, r, fname);
  if (r->kind == MPB_RQ_FILE) return mpb_mpi_fio_push(L, M, r, fname);
  if (r->kind != MPB_RQ_RECV) return 0;
  if (r->cancelled || r->peer == MPB_MPI_PROC_NULL) {
    mpb_mpi_push_null(L, r->cancelled);
    return 2;
  }
  mpb_msg *m = r->m;
  r->m = NULL;
  return mpb_mpi_push(L, M->st, r->c, m, fname);
}

/* ------------------------------------------------------ Isend, Irecv */
static int isend(lua_State *L, int sync, const char *fname) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_state *st = M->st;
  mpb_comm *c = mpb_mpi_comm(L, M, 4, fname);
  int dest = mpb_mpi_dest(L, st, c, 2, fname);
  int tag = mpb_mpi_tag(L, st, 3, 0, fname);
  MPB_TRACE_SPAN(L, st, MPB_TR_SEND, 1, mpb_mpi_peer(c, dest), 0,
                 mpb_mpi_trname(st, fname, 0, tag));
  mpb_mpireq *r = mpb_mpi_req_new(L, M, c, 4, sync ? MPB_RQ_SSEND : MPB_RQ_SEND, sizeof *r, 1);
  r->peer = dest;
  r->tag = tag;
  r->ids[0] = 1; /* none: complete */
  if (dest == MPB_MPI_PROC_NULL) {
    r->state = MPB_RQ_READY;
    return 1;
  }
  if (sync) r->token = mpb_mpi_next_token(&M->tokens);
  int ridx = lua_gettop(L);
  mpb_mpi_send(L, st, c, 1, dest, tag, r->token, r->ids, fname);
  lua_settop(L, ridx);
  return 1;
}

/* mpi.Isend(v, dest, tag[, comm]) / mpi.Issend(...) -> request */
static int Isend(lua_State *L) { return isend(L, 0, "mpi.Isend"); }
static int Issend(lua_State *L) { return isend(L, 1, "mpi.Issend"); }

/* mpi.Irecv(source, tag[, comm]) -> request */
static int Irecv(lua_State *L) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_state *st = M->st;
  mpb_comm *c = mpb_mpi_comm(L, M, 3, "mpi.Irecv");
  int src = mpb_mpi_source(L, st, c, 1, "mpi.Irecv");
  int tag = mpb_mpi_tag(L, st, 2, 1, "mpi.Irecv");
  MPB_TRACE_SPAN(L, st, MPB_TR_RECV, 1, mpb_mpi_peer(c, src), 0,
                 mpb_mpi_trname(st, "mpi.Irecv", src, tag));
  mpb_mpireq *r = mpb_mpi_req_new(L, M, c, 3, MPB_RQ_RECV, sizeof *r, 1);
  r->peer = src;
  r->tag = tag;
  if (src == MPB_MPI_PROC_NULL) {
    r->state = MPB_RQ_READY;
    return 1;
  }
  mpb_mpi_settle(M); /* receives posted earlier come first */
  mpb_mpi_post(M, r);
  mpb_mpi_settle(M);
  mpb_mpi_flush(L, M);
  return 1;
}

/* mpi.Cancel(req) -> true if the receive was cancelled (it had matched
** nothing); its wait then gives nil and a status with cancelled = true. */
static int Cancel(lua_State *L) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_mpireq *r = req_check(L, M->st, 1, "mpi.Cancel");
  if (r->kind != MPB_RQ_RECV)
    luaL_error(L, "bad argument #1 to 'mp.mpi.Cancel' (" MPB_RANKFMT " only receives can be "
               "cancelled: MPI 4.0 deprecates cancelling sends%s)", M->st->rank, M->st->size,
               r->kind == MPB_RQ_COLL ? ", and a collective cannot be" : "");
  mpb_mpi_settle(M);
  mpb_mpi_flush(L, M);
  int ok = r->posted;
  if (ok) {
    mpb_mpi_unpost(M, r);
    r->cancelled = 1;
    r->state = MPB_RQ_READY;
  }
  lua_pushboolean(L, ok);
  return 1;
}

/* ---------------------------------------------------------- one request */
typedef struct {
  mpb_mpi *M;
  mpb_mpireq **v;   /* NULL: inactive */
  lua_Integer n, i; /* all: v[0..i-1] are complete; any: the one found */
} reqs;

static int ready_all(mpb_state *st, void *ud) {
  reqs *a = ud;
  mpb_mpi_settle(a->M);
  while (a->i < a->n && (!a->v[a->i] || req_done(a->M, a->v[a->i]))) a->i++;
  return a->i == a->n;
}

static int ready_any(mpb_state *st, void *ud) {
  reqs *a = ud;
  mpb_mpi_settle(a->M);
  for (a->i = 0; a->i < a->n; a->i++)
    if (a->v[a->i] && req_done(a->M, a->v[a->i])) return 1;
  return 0;
}

/* Wait (the one wait) until ready; fname's words for the whereabouts. */
static void wait_reqs(lua_State *L, reqs *a, mpb_ready ready, const char *fname, int all) {
  mpb_state *st = a->M->st;
  for (int k = 0; k < 2; k++) { /* acknowledgements to itself come back at once */
    int done = ready(st, a);
    mpb_mpi_flush(L, a->M);
    if (done) return;
    mpb_poll(st);
  }
  int pending = 0, stuck = 0, recv = 0;
  mpb_mpireq *one = NULL;
  for (lua_Integer i = 0; i < a->n; i++)
    if (a->v[i] && a->v[i]->state == MPB_RQ_PENDING) {
      pending++;
      stuck += forever(a->M, a->v[i]);
      recv += a->v[i]->kind != MPB_RQ_SEND && a->v[i]->kind != MPB_RQ_RMA &&
              a->v[i]->kind != MPB_RQ_FILE; /* complete by MPI's progress alone */
      one = a->v[i];
    }
  if (stuck && (all || stuck == pending)) no_forever(L, st, fname);
  char what[64];
  uint32_t seq = 0;
  if (a->n == 1 && one && one->kind == MPB_RQ_RECV)
    mpb_mpi_describe(what, sizeof what, fname, one->peer, one->tag);
  else if (a->n == 1 && one && one->kind == MPB_RQ_COLL)
    mpb_mpi_icoll_describe(what, sizeof what, fname, one, &seq);
  else snprintf(what, sizeof what, "%s(%d requests)", fname, pending);
  int peer = pending == 1 && one->kind == MPB_RQ_RECV && one->peer >= 0
                 ? one->c->ranks[one->peer] : -1;
  mpb_waitdesc d = {what, peer, seq ? one->c->id : 0, seq, NULL};
  mpb_mpi_wait(L, a->M, ready, a, recv ? &d : NULL); /* a plain send, RMA, I/O complete by themselves */
}

/* One look for a Test call: ready now, or after a poll; the
** acknowledgements owed are sent; a polling loop stays abortable. */
static int test_reqs(lua_State *L, reqs *a, mpb_ready ready) {
  mpb_state *st = a->M->st;
  int done = ready(st, a) || (mpb_poll(st), ready(st, a));
  mpb_mpi_flush(L, a->M);
  if (!done) mpb_check_abort(L, st);
  return done;
}

/* The requests of the list at idx into a userdata array (pushed). */
static reqs list_reqs(lua_State *L, mpb_mpi *M, int idx, const char *fname) {
  uint64_t stamp = ++M->stamps;
  mpb_state *st = M->st;
  reqs a = {M, NULL, 0, 0};
  if (!lua_istable(L, idx))
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " list of requests expected, got "
               "%s)", idx, fname, st->rank, st->size, luaL_typename(L, idx));
  a.n = luaL_len(L, idx);
  if (a.n < 0 || a.n > (1 << 28))
    luaL_error(L, "bad argument #%d to 'mp.%s' (bad list length)", idx, fname);
  a.v = lua_newuserdatauv(L, (size_t)a.n * sizeof *a.v + 1, 0);
  for (lua_Integer i = 1; i <= a.n; i++) {
    lua_geti(L, idx, i);
    mpb_mpireq *r = luaL_testudata(L, -1, REQ_MT);
    if (!r || r->kind == MPB_RQ_INERT)
      luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " item %I is not a request: %s)",
                 idx, fname, st->rank, st->size, (LUAI_UACINT)i, luaL_typename(L, -1));
    lua_pop(L, 1);
    usable(L, st, r, fname, i, 1);
    if (r->stamp == stamp)
      luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " item %I is a request listed "
                 "twice)", idx, fname, st->rank, st->size, (LUAI_UACINT)i);
    r->stamp = stamp;
    a.v[i - 1] = r->state == MPB_RQ_USED ? NULL : r;
  }
  return a;
}

/* mpi.Wait(req) -> v, status (a receive) or nothing (a send) */
static int Wait(lua_State *L) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_mpireq *r = req_check(L, M->st, 1, "mpi.Wait");
  lua_settop(L, 1);
  MPB_TRACE_SPAN(L, M->st, MPB_TR_WAIT, 0, r->kind == MPB_RQ_RECV ? mpb_mpi_peer(r->c, r->peer) : -1, 0,
                 r->kind == MPB_RQ_RECV ? mpb_mpi_trname(M->st, "mpi.Wait", r->peer, r->tag)
                                        : mpb_mpi_trname(M->st, "mpi.Wait", 0, MPB_MPI_NOTAG));
  reqs a = {M, &r, 1, 0};
  wait_reqs(L, &a, ready_all, "mpi.Wait", 1);
  return deliver(L, M, r, "mpi.Wait");
}

/* mpi.Test(req) -> false | true, v, status */
static int Test(lua_State *L) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_mpireq *r = req_check(L, M->st, 1, "mpi.Test");
  lua_settop(L, 1);
  reqs a = {M, &r, 1, 0};
  if (!test_reqs(L, &a, ready_all)) {
    lua_pushboolean(L, 0);
    return 1;
  }
  lua_pushboolean(L, 1);
  return 1 + deliver(L, M, r, "mpi.Test");
}

/* ------------------------------------------------------------- lists */
/* Deliver v[i] into vals[k], sts[k] (tables at vi, vi + 1). */
static void deliver_into(lua_State *L, mpb_mpi *M, mpb_mpireq *r, int vi, lua_Integer k,
                         const char *fname) {
  int n = deliver(L, M, r, fname);
  if (n == 2) lua_seti(L, vi + 1, k);
  if (n >= 1) lua_seti(L, vi, k); /* a collective's result: no status */
}

/* mpi.Waitall(reqs) -> vals, statuses (tables indexed as reqs; nil for sends
** and inactive requests) */
static int waitall(lua_State *L, int test, const char *fname) {
  mpb_mpi *M = mpb_mpi_get(L);
  lua_settop(L, 1);
  reqs a = list_reqs(L, M, 1, fname);
  if (test) {
    if (!test_reqs(L, &a, ready_all)) {
      lua_pushboolean(L, 0);
      return 1;
    }
    lua_pushboolean(L, 1);
  } else {
    MPB_TRACE_SPAN(L, M->st, MPB_TR_WAIT, 1, -1, 0, mpb_mpi_trname(M->st, fname, 0, MPB_MPI_NOTAG));
    wait_reqs(L, &a, ready_all, fname, 1);
  }
  lua_createtable(L, (int)a.n, 0);
  lua_createtable(L, (int)a.n, 0);
  int vi = lua_gettop(L) - 1;
  for (lua_Integer i = 0; i < a.n; i++)
    if (a.v[i]) deliver_into(L, M, a.v[i], vi, i + 1, fname);
  return 2 + test;
}

static int Waitall(lua_State *L) { return waitall(L, 0, "mpi.Waitall"); }
/* mpi.Testall(reqs) -> false | true, vals, statuses */
static int Testall(lua_State *L) { return waitall(L, 1, "mpi.Testall"); }

static int active(const reqs *a) {
  for (lua_Integer i = 0; i < a->n; i++)
    if (a->v[i]) return 1;
  return 0;
}

/* mpi.Waitany(reqs) -> i, v, status (i 1-based); nil when every request is
** inactive (MPI_UNDEFINED). mpi.Testany(reqs) -> false | true, i, v, status
** (true, nil when every one is inactive). */
static int waitany(lua_State *L, int test, const char *fname) {
  mpb_mpi *M = mpb_mpi_get(L);
  lua_settop(L, 1);
  reqs a = list_reqs(L, M, 1, fname);
  if (!active(&a)) {
    if (test) lua_pushboolean(L, 1);
    lua_pushnil(L);
    return 1 + test;
  }
  if (test) {
    if (!test_reqs(L, &a, ready_any)) {
      lua_pushboolean(L, 0);
      return 1;
    }
    lua_pushboolean(L, 1);
  } else {
    MPB_TRACE_SPAN(L, M->st, MPB_TR_WAIT, 2, -1, 0, mpb_mpi_trname(M->st, fname, 0, MPB_MPI_NOTAG));
    wait_reqs(L, &a, ready_any, fname, 0);
  }
  lua_pushinteger(L, a.i + 1);
  return 1 + test + deliver(L, M, a.v[a.i], fname);
}

static int Waitany(lua_State *L) { return waitany(L, 0, "mpi.Waitany"); }
static int Testany(lua_State *L) { return waitany(L, 1, "mpi.Testany"); }

/* mpi.Waitsome(reqs) -> indices, vals, statuses (vals[k], statuses[k] for
** indices[k]); nil when every request is inactive. mpi.Testsome: the same,
** with an empty list of indices when none is complete. */
static int waitsome(lua_State *L, int test, const char *fname) {
  mpb_mpi *M = mpb_mpi_get(L);
  lua_settop(L, 1);
  reqs a = list_reqs(L, M, 1, fname);
  if (!active(&a)) {
    lua_pushnil(L);
    return 1;
  }
  if (test) {
    test_reqs(L, &a, ready_any);
  } else {
    MPB_TRACE_SPAN(L, M->st, MPB_TR_WAIT, 2, -1, 0, mpb_mpi_trname(M->st, fname, 0, MPB_MPI_NOTAG));
    wait_reqs(L, &a, ready_any, fname, 0);
  }
  lua_newtable(L);
  lua_newtable(L);
  lua_newtable(L);
  int ii = lua_gettop(L) - 2;
  lua_Integer k = 0;
  for (lua_Integer i = 0; i < a.n; i++)
    if (a.v[i] && req_done(M, a.v[i])) {
      lua_pushinteger(L, i + 1);
      lua_seti(L, ii, ++k);
      deliver_into(L, M, a.v[i], ii + 1, k, fname);
    }
  return 3;
}

static int Waitsome(lua_State *L) { return waitsome(L, 0, "mpi.Waitsome"); }
static int Testsome(lua_State *L) { return waitsome(L, 1, "mpi.Testsome"); }

/* ------------------------------------------------------------ register */
void mpb_mpi_req_funcs(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"Isend", Isend}, {"Issend", Issend}, {"Irecv", Irecv}, {"Cancel", Cancel},
      {"Wait", Wait}, {"Test", Test}, {"Waitall", Waitall}, {"Testall", Testall},
      {"Waitany", Waitany}, {"Testany", Testany}, {"Waitsome", Waitsome},
      {"Testsome", Testsome}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"Wait", Wait}, {"Test", Test}, {"Cancel", Cancel},
                                     {NULL, NULL}};
  int t = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.mpi.state");
  int M = lua_gettop(L);
  luaL_newmetatable(L, REQ_MT);
  lua_newtable(L);
  lua_pushvalue(L, M);
  luaL_setfuncs(L, methods, 1);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, M);
  lua_pushcclosure(L, req_gc, 1);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, req_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  lua_pushvalue(L, t);
  lua_pushvalue(L, M);
  luaL_setfuncs(L, funcs, 1);
  lua_settop(L, t);
}
