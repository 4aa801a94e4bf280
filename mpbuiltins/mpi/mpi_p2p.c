/* SPDX-License-Identifier: MIT */
/*
** mp.mpi's blocking point to point: Send, Ssend, Recv, Sendrecv,
** Sendrecv_replace, Probe, Iprobe; and the opener of mp.mpi (constants, the
** request calls of mpi_req.c, the collectives of mpi_coll.lua).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "mpi/mpi.h"

#include "mp_mpi_lua.h" /* generated from mpi/mpi_coll.lua */
#include "mp_mpiv_lua.h" /* mpi/mpi_vcoll.lua */
#include "mp_mpi_group_lua.h" /* mpi/mpi_group.lua */
#include "mp_mpi_topo_lua.h" /* mpi/mpi_topo.lua */
#include "mp_mpi_trace_lua.h" /* mpi/mpi_trace.lua */
#include "mp_mpi_sched_lua.h" /* mpi/mpi_sched.lua */
#include "tasks/tasks.h"      /* MPB_EXEC_OPTIONS */

#define STATE_MT "mp.mpi.state"

/* ---------------------------------------------------------------- sends */
/* mpi.Send(v, dest, tag[, comm]) */
static int Send(lua_State *L) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_comm *c = mpb_mpi_comm(L, M, 4, "mpi.Send");
  int dest = mpb_mpi_dest(L, M->st, c, 2, "mpi.Send");
  int tag = mpb_mpi_tag(L, M->st, 3, 0, "mpi.Send");
  if (dest == MPB_MPI_PROC_NULL) return 0;
  MPB_TRACE_SPAN(L, M->st, MPB_TR_SEND, 0, mpb_mpi_peer(c, dest), 0,
                 mpb_mpi_trname(M->st, "mpi.Send", 0, tag));
  mpb_mpi_send(L, M->st, c, 1, dest, tag, 0, NULL, "mpi.Send");
  return 0;
}

typedef struct {
  mpb_mpi *M;
  int w;
  uint32_t comm, token;
  int done;
} acked;

static int ready_ack(mpb_state *st, void *ud) {
  acked *a = ud;
  mpb_mpi_settle(a->M); /* receives posted here may complete another rank's Ssend */
  if (!a->done) a->done = mpb_mpi_take_ack(a->M, a->w, a->comm, a->token);
  return a->done;
}

/* mpi.Ssend(v, dest, tag[, comm]): returns once the receiver has matched it. */
static int Ssend(lua_State *L) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_state *st = M->st;
  mpb_comm *c = mpb_mpi_comm(L, M, 4, "mpi.Ssend");
  int dest = mpb_mpi_dest(L, st, c, 2, "mpi.Ssend");
  int tag = mpb_mpi_tag(L, st, 3, 0, "mpi.Ssend");
  if (dest == MPB_MPI_PROC_NULL) return 0;
  MPB_TRACE_SPAN(L, st, MPB_TR_SEND, 0, mpb_mpi_peer(c, dest), 0,
                 mpb_mpi_trname(st, "mpi.Ssend", 0, tag));
  uint32_t token = mpb_mpi_next_token(&M->tokens);
  mpb_mpi_send(L, st, c, 1, dest, tag, token, NULL, "mpi.Ssend");
  acked a = {M, c->ranks[dest], c->id, token, 0};
  if (!ready_ack(st, &a)) {
    mpb_mpi_flush(L, M);
    if (!ready_ack(st, &a) && c->ranks[dest] == st->rank)
      luaL_error(L, "mp.mpi.Ssend: " MPB_RANKFMT " would wait forever: no receive posted by this "
                 "rank matches its synchronous send to itself", st->rank, st->size);
    char what[48]; /* the wait's peer is a source: the destination goes in the words */
    snprintf(what, sizeof what, "mpi.Ssend(dest %d, tag %d)", dest, tag);
    mpb_waitdesc d = {what, -1, c->id, 0, NULL};
    mpb_mpi_wait(L, M, ready_ack, &a, &d);
  }
  mpb_mpi_flush(L, M);
  return 0;
}

/* ------------------------------------------------------------- receives */
typedef struct {
  mpb_mpi *M;
  const mpb_comm *c;
  int src, tag;
} want;

/* The message taken goes to M->held: an error raised before its values are
** pushed (an acknowledgement's send) leaves it there, freed by the next
** receive, never lost track of. */
static int ready_recv(mpb_state *st, void *ud) {
  want *w = ud;
  if (w->M->held) return 1;
  mpb_mpi_settle(w->M); /* receives posted earlier match first */
  w->M->held = mpb_mpi_match(w->M, w->c, w->src, w->tag, 1);
  return w->M->held != NULL;
}

static void never(lua_State *L, mpb_state *st, const mpb_comm *c, int src, const char *fname) {
  if ((src >= 0 && c->ranks[src] == st->rank) || c->size == 1)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " would wait forever: no message from %s is queued",
               fname, st->rank, st->size, src < 0 ? "any rank" : "itself");
}

/* Wait for the message a receive takes (the caller owns it). */
static mpb_msg *recv_msg(lua_State *L, mpb_mpi *M, const mpb_comm *c, int src, int tag,
                         const char *fname) {
  mpb_state *st = M->st;
  want w = {M, c, src, tag};
  if (M->held) { /* left by a receive that raised */
    mpb_msg_free(M->held);
    M->held = NULL;
  }
  if (src == MPB_MPI_ANY_SOURCE && M->sched && c->size > 1)
    mpb_mpi_sched_gather(L, M, c, tag, fname);
  if (!ready_recv(st, &w)) {
    mpb_poll_ctl(st, 0);
    if (!ready_recv(st, &w)) {
      never(L, st, c, src, fname);
      char what[48];
      mpb_mpi_describe(what, sizeof what, fname, src, tag);
      mpb_waitdesc d = {what, src >= 0 ? c->ranks[src] : -1, c->id, 0, NULL};
      mpb_mpi_wait(L, M, ready_recv, &w, &d);
    }
  }
  if (M->nacks) mpb_mpi_flush(L, M);
  mpb_msg *m = M->held;
  M->held = NULL;
  return m;
}

/* mpi.Recv(source, tag[, comm]) -> v, status */
static int Recv(lua_State *L) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_comm *c = mpb_mpi_comm(L, M, 3, "mpi.Recv");
  int src = mpb_mpi_source(L, M->st, c, 1, "mpi.Recv");
  int tag = mpb_mpi_tag(L, M->st, 2, 1, "mpi.Recv");
  lua_settop(L, 3);
  if (src == MPB_MPI_PROC_NULL) {
    mpb_mpi_push_null(L, 0);
    return 2;
  }
  MPB_TRACE_SPAN(L, M->st, MPB_TR_RECV, 0, mpb_mpi_peer(c, src), 0,
                 mpb_mpi_trname(M->st, "mpi.Recv", src, tag));
  mpb_msg *m = recv_msg(L, M, c, src, tag, "mpi.Recv");
  return mpb_mpi_push(L, M->st, c, m, "mpi.Recv");
}

/* mpi.Sendrecv(sendv, dest, sendtag, source, recvtag[, comm]) -> v, status */
static int Sendrecv(lua_State *L) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_state *st = M->st;
  mpb_comm *c = mpb_mpi_comm(L, M, 6, "mpi.Sendrecv");
  int dest = mpb_mpi_dest(L, st, c, 2, "mpi.Sendrecv");
  int stag = mpb_mpi_tag(L, st, 3, 0, "mpi.Sendrecv");
  int src = mpb_mpi_source(L, st, c, 4, "mpi.Sendrecv");
  int rtag = mpb_mpi_tag(L, st, 5, 1, "mpi.Sendrecv");
  lua_settop(L, 6);
  MPB_TRACE_SPAN(L, st, MPB_TR_RECV, 0, mpb_mpi_peer(c, src), 0,
                 mpb_mpi_trname(st, "mpi.Sendrecv", src, rtag));
  if (dest != MPB_MPI_PROC_NULL) mpb_mpi_send(L, st, c, 1, dest, stag, 0, NULL, "mpi.Sendrecv");
  if (src == MPB_MPI_PROC_NULL) {
    mpb_mpi_push_null(L, 0);
    return 2;
  }
  mpb_msg *m = recv_msg(L, M, c, src, rtag, "mpi.Sendrecv");
  return mpb_mpi_push(L, st, c, m, "mpi.Sendrecv");
}

/* mpi.Sendrecv_replace(a, dest, sendtag, source, recvtag[, comm]) -> status:
** a (an mp.Array) is sent, then overwritten with what comes. */
static int Sendrecv_replace(lua_State *L) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_state *st = M->st;
  mpb_array *a = mpb_array_test(L, 1);
  if (!a)
    luaL_error(L, "bad argument #1 to 'mp.mpi.Sendrecv_replace' (" MPB_RANKFMT " mp.Array "
               "expected, got %s)", st->rank, st->size, luaL_typename(L, 1));
  lua_settop(L, 6);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushcclosure(L, Sendrecv, 1);
  lua_insert(L, 1);
  lua_call(L, 6, 2);
  mpb_array *b = mpb_array_test(L, -2);
  lua_Integer got = b ? b->n : -1;
  if (lua_isnil(L, -2)) return 1; /* PROC_NULL: a unchanged */
  if (!b || b->n != a->n)
    luaL_error(L, "mp.mpi.Sendrecv_replace: " MPB_RANKFMT " counts disagree: received %s%I "
               "elements into an array of %I", st->rank, st->size, b ? "" : "a non-array, not ",
               (LUAI_UACINT)(b ? got : 0), (LUAI_UACINT)a->n);
  const char *err = mpb_array_convert(L, a, b);
  if (err) luaL_error(L, "mp.mpi.Sendrecv_replace: " MPB_RANKFMT " %s", st->rank, st->size, err);
  return 1;
}

/* --------------------------------------------------------------- probes */
typedef struct {
  mpb_mpi *M;
  const mpb_comm *c;
  int src, tag;
} peek;

static int ready_probe(mpb_state *st, void *ud) {
  peek *p = ud;
  mpb_mpi_settle(p->M);
  return mpb_mpi_match(p->M, p->c, p->src, p->tag, 0) != NULL;
}

static int probe(lua_State *L, int block, const char *fname) {
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_state *st = M->st;
  mpb_comm *c = mpb_mpi_comm(L, M, 3, fname);
  int src = mpb_mpi_source(L, st, c, 1, fname);
  int tag = mpb_mpi_tag(L, st, 2, 1, fname);
  if (!block) lua_pushboolean(L, 1);
  if (src == MPB_MPI_PROC_NULL) {
    mpb_mpi_push_null(L, 0);
    lua_remove(L, -2);
    return block ? 1 : 2;
  }
  peek p = {M, c, src, tag};
  MPB_TRACE_SPAN(L, st, MPB_TR_RECV, 0, mpb_mpi_peer(c, src), 0,
                 mpb_mpi_trname(st, fname, src, tag));
  mpb_poll(st);
  if (block && src == MPB_MPI_ANY_SOURCE && M->sched && c->size > 1)
    mpb_mpi_sched_gather(L, M, c, tag, fname);
  if (!ready_probe(st, &p)) {
    if (!block) {
      mpb_mpi_flush(L, M);
      mpb_check_abort(L, st); /* a polling loop stays abortable */
      lua_pushboolean(L, 0);
      return 1;
    }
    never(L, st, c, src, fname);
    char what[48];
    mpb_mpi_describe(what, sizeof what, fname, src, tag);
    mpb_waitdesc d = {what, src >= 0 ? c->ranks[src] : -1, c->id, 0, NULL};
    mpb_mpi_wait(L, M, ready_probe, &p, &d);
  }
  mpb_mpi_flush(L, M);
  mpb_mpi_push_status(L, c, mpb_mpi_match(M, c, src, tag, 2));
  return block ? 1 : 2;
}

/* mpi.Probe(source, tag[, comm]) -> status; mpi.Iprobe(...) -> false | true, status */
static int Probe(lua_State *L) { return probe(L, 1, "mpi.Probe"); }
static int Iprobe(lua_State *L) { return probe(L, 0, "mpi.Iprobe"); }

/* ----------------------------------------------------------------- open */
static int state_gc(lua_State *L) {
  mpb_mpi *M = lua_touserdata(L, 1);
  free(M->log);
  M->log = NULL;
  mpb_msg_free(M->held);
  M->held = NULL;
  return 0;
}

/* Run a compiled-in chunk with (mp.mpi, mp[, the value on top if arg]),
** leaving nres results. */
static void run_glue(lua_State *L, const char *code, size_t len, const char *name, int mpi,
                     int mpt, int arg, int nres) {
  if (luaL_loadbufferx(L, code, len, name, "t") != LUA_OK) lua_error(L);
  lua_pushvalue(L, mpi);
  lua_pushvalue(L, mpt);
  if (arg) lua_rotate(L, -4, -1); /* the chunk, mpi, mp, the value */
  lua_call(L, 2 + arg, nres);
}

void mpb_open_mpi(lua_State *L) {
  int mpt = lua_gettop(L);
  mpb_state *st = mpb_get(L);
  lua_newtable(L); /* mp.mpi */
  mpb_mpi *M = lua_newuserdatauv(L, sizeof *M, 0);
  memset(M, 0, sizeof *M);
  M->st = st;
  M->task = -1;
  luaL_newmetatable(L, STATE_MT);
  lua_pushcfunction(L, state_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  mpb_mpi_sched_init(M);
  mpb_comm_pushworld(L);
  M->world = lua_touserdata(L, -1);
  lua_pop(L, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, STATE_MT); /* lives as long as L */
  static const luaL_Reg funcs[] = {
      {"Send", Send}, {"Ssend", Ssend}, {"Recv", Recv}, {"Sendrecv", Sendrecv},
      {"Sendrecv_replace", Sendrecv_replace}, {"Probe", Probe}, {"Iprobe", Iprobe},
      {"Schedule", mpb_mpi_schedule}, {NULL, NULL}};
  luaL_setfuncs(L, funcs, 1); /* each with the state as upvalue 1 */
  mpb_mpi_status_open(L);
  mpb_mpi_req_funcs(L);
  mpb_mpi_icoll_funcs(L);
  mpb_mpi_file_funcs(L);
  mpb_mpi_win_funcs(L);
  static const struct { const char *name; lua_Integer v; } k[] = {
      {"ANY_SOURCE", MPB_MPI_ANY_SOURCE}, {"ANY_TAG", MPB_MPI_ANY_TAG},
      {"PROC_NULL", MPB_MPI_PROC_NULL}, {"UNDEFINED", MPB_MPI_UNDEFINED}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    lua_pushinteger(L, k[i].v);
    lua_setfield(L, -2, k[i].name);
  }
  lua_pushinteger(L, st->tag_ub);
  lua_setfield(L, -2, "TAG_UB");
  /* in Lua over mp's: the collectives, communicators and ops (mpi_coll.lua),
  ** whose argument checks go to the v-collectives (mpi_vcoll.lua) and
  ** groups (mpi_group.lua), whose helpers go to topologies (mpi_topo.lua);
  ** mp.exec{f, ..., schedule = seed} (mpi_sched.lua); last, regions named
  ** as MPI's around the Lua calls while tracing, and their names in the
  ** reports of waits (mpi_trace.lua, mpi_names.c) */
  int mpi = lua_gettop(L);
  mpb_mpi_calls_push(L);
  run_glue(L, mp_mpi_lua, mp_mpi_lua_len, "=mp.mpi", mpi, mpt, 1, 1); /* its checks: */
  lua_pushvalue(L, -1);
  run_glue(L, mp_mpiv_lua, mp_mpiv_lua_len, "=mp.mpi.v", mpi, mpt, 1, 0); /* to mpi_vcoll */
  run_glue(L, mp_mpi_group_lua, mp_mpi_group_lua_len, "=mp.mpi.group", mpi, mpt, 1, 1);
  run_glue(L, mp_mpi_topo_lua, mp_mpi_topo_lua_len, "=mp.mpi.topo", mpi, mpt, 1, 0);
  run_glue(L, mp_mpi_sched_lua, mp_mpi_sched_lua_len, "=mp.mpi.sched", mpi, mpt, 0, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, MPB_EXEC_OPTIONS);
  mpb_mpi_names_push(L);
  run_glue(L, mp_mpi_trace_lua, mp_mpi_trace_lua_len, "=mp.mpi.trace", mpi, mpt, 1, 0);
  lua_setfield(L, mpt, "mpi");
}
