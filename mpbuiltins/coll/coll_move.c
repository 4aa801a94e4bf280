/* SPDX-License-Identifier: MIT */
/*
** Collectives that move data rather than combine it: gather, allgather,
** scatter, alltoall. Direct messages, staggered so that no rank is
** everyone's first peer.
*/
#include "coll/coll.h"
#include "wire/wire.h"

/* comm:gather(v, root=0): at root, {v0, v1, ...} (index rank+1); nil elsewhere. */
static int c_gather(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "gather", MPB_COLL_GATHER);
  x.root = lua_isnoneornil(L, 3) ? 0 : mpb_comm_checkrank(L, x.st, x.c, 3, 2, "gather");
  MPB_TRACE_SPAN(L, x.st, MPB_TR_COLL, x.kind, x.root, x.seq, x.c->id);
  lua_settop(L, 2);
  mpb_coll_ring_send(L, &x); /* the root check (coll.c) */
  if (x.c->rank != x.root) {
    mpb_coll_send_vals(L, &x, x.root, 2, 1, NULL);
    mpb_coll_ring_take(L, &x);
    return 0;
  }
  lua_createtable(L, x.c->size, 0);
  for (int r = 0; r < x.c->size; r++) {
    if (r == x.root) mpb_coll_push_own(L, &x, 2, 1);
    else mpb_coll_recv_val(L, &x, r);
    lua_rawseti(L, 3, r + 1);
  }
  mpb_coll_ring_take(L, &x);
  return 1;
}

/* comm:allgather(v): {v0, v1, ...} on every rank (each sends to each). */
static int c_allgather(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "allgather", MPB_COLL_ALLGATHER);
  MPB_TRACE_SPAN(L, x.st, MPB_TR_COLL, x.kind, x.root, x.seq, x.c->id);
  lua_settop(L, 2);
  int n = x.c->size, me = x.c->rank;
  if (n > 1) {
    struct mpb_wbuf *b = mpb_encode_msg(L, 2, 1, x.fname, 1, sizeof(mpb_uhdr));
    mpb_uhdr h = {0, x.c->id, (uint32_t)x.kind, x.seq, -1};
    for (int k = 1; k < n; k++) /* staggered so that nobody is everyone's first */
      mpb_send(L, x.st, x.c->ranks[(me + k) % n], MPB_CH_COLL, b, k == n - 1, &h, NULL);
    x.st->user_sent += n - 1;
    lua_pop(L, 1);
  }
  lua_createtable(L, n, 0);
  for (int k = 0; k < n; k++) {
    int r = (me - k + n) % n;
    if (r == me) mpb_coll_push_own(L, &x, 2, 1);
    else mpb_coll_recv_val(L, &x, r);
    lua_rawseti(L, 3, r + 1);
  }
  return 1;
}

/* The list at idx must hold one value per member (checked before any
** message, so that a wrong length is an error on this rank, not a hang). */
static void check_list(lua_State *L, mpb_coll *x, int idx) {
  if (!lua_istable(L, idx))
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " table expected, got %s)",
               idx - 1, x->fname, x->st->rank, x->st->size, luaL_typename(L, idx));
  lua_Integer len = luaL_len(L, idx);
  if (len != x->c->size)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " a list of %d values (one per "
               "rank) expected, got %I)", idx - 1, x->fname, x->st->rank, x->st->size,
               x->c->size, (LUAI_UACINT)len);
}

/* comm:scatter(t, root=0): rank r gets t[r+1] of root's table. */
static int c_scatter(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "scatter", MPB_COLL_SCATTER);
  x.root = lua_isnoneornil(L, 3) ? 0 : mpb_comm_checkrank(L, x.st, x.c, 3, 2, "scatter");
  MPB_TRACE_SPAN(L, x.st, MPB_TR_COLL, x.kind, x.root, x.seq, x.c->id);
  lua_settop(L, 2);
  if (x.c->rank != x.root) {
    mpb_coll_ring_send(L, &x); /* the root check (coll.c) */
    mpb_coll_recv_val(L, &x, x.root);
    mpb_coll_ring_take(L, &x);
    return 1;
  }
  check_list(L, &x, 2);
  mpb_coll_ring_send(L, &x);
  for (int r = 0; r < x.c->size; r++) {
    if (r == x.root) continue;
    lua_geti(L, 2, r + 1);
    mpb_coll_send_vals(L, &x, r, 3, 1, NULL);
    lua_pop(L, 1);
  }
  lua_geti(L, 2, x.root + 1);
  mpb_coll_push_own(L, &x, -1, 1);
  mpb_coll_ring_take(L, &x);
  return 1;
}

/* comm:alltoall(t): rank r sends t[j+1] to j and gets {from 0, from 1, ...}. */
static int c_alltoall(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "alltoall", MPB_COLL_ALLTOALL);
  MPB_TRACE_SPAN(L, x.st, MPB_TR_COLL, x.kind, x.root, x.seq, x.c->id);
  check_list(L, &x, 2);
  lua_settop(L, 2);
  int n = x.c->size, me = x.c->rank;
  for (int k = 1; k < n; k++) {
    int r = (me + k) % n;
    lua_geti(L, 2, r + 1);
    mpb_coll_send_vals(L, &x, r, 3, 1, NULL);
    lua_pop(L, 1);
  }
  lua_createtable(L, n, 0);
  lua_geti(L, 2, me + 1);
  mpb_coll_push_own(L, &x, -1, 1);
  lua_rawseti(L, 3, me + 1);
  lua_pop(L, 1);
  for (int k = 1; k < n; k++) {
    int r = (me - k + n) % n;
    mpb_coll_recv_val(L, &x, r);
    lua_rawseti(L, 3, r + 1);
  }
  return 1;
}

void mpb_coll_move_methods(lua_State *L, int mpt) {
  mpb_comm_setboth(L, mpt, "gather", c_gather);
  mpb_comm_setboth(L, mpt, "allgather", c_allgather);
  mpb_comm_setboth(L, mpt, "scatter", c_scatter);
  mpb_comm_setboth(L, mpt, "alltoall", c_alltoall);
}
