/*
** Collectives that move data rather than combine it: gather, allgather,
** scatter, alltoall. Direct messages, staggered so that no rank is
** everyone's first peer.
*/
#include "coll/coll_int.h"
#include "wire/wire.h"

/* comm:gather(v, root=0): at root, {v0, v1, ...} (index rank+1); nil elsewhere. */
static int c_gather(lua_State *L) {
  ctx x = mpb_coll_begin(L, "gather", K_GATHER);
  int root = lua_isnoneornil(L, 3) ? 0 : mpb_comm_checkrank(L, x.st, x.c, 3, "gather");
  lua_settop(L, 2);
  if (x.c->rank != root) {
    mpb_coll_send_vals(L, &x, root, 2, 1);
    return 0;
  }
  lua_createtable(L, x.c->size, 0);
  for (int r = 0; r < x.c->size; r++) {
    if (r == root) lua_pushvalue(L, 2);
    else mpb_coll_recv_val(L, &x, r);
    lua_rawseti(L, 3, r + 1);
  }
  return 1;
}

/* comm:allgather(v): {v0, v1, ...} on every rank (each sends to each). */
static int c_allgather(lua_State *L) {
  ctx x = mpb_coll_begin(L, "allgather", K_ALLGATHER);
  lua_settop(L, 2);
  int n = x.c->size, me = x.c->rank;
  if (n > 1) {
    mpb_wbuf *b = mpb_encode_msg(L, 2, 1, x.fname, 1, sizeof(mpb_uhdr));
    for (int k = 1; k < n; k++) /* staggered so that nobody is everyone's first */
      mpb_comm_send(L, x.st, x.c, (me + k) % n, MPB_CH_COLL, K_ALLGATHER, b, 0);
    lua_pop(L, 1);
  }
  lua_createtable(L, n, 0);
  for (int k = 0; k < n; k++) {
    int r = (me - k + n) % n;
    if (r == me) lua_pushvalue(L, 2);
    else mpb_coll_recv_val(L, &x, r);
    lua_rawseti(L, 3, r + 1);
  }
  return 1;
}

/* comm:scatter(t, root=0): rank r gets t[r+1] of root's table. */
static int c_scatter(lua_State *L) {
  ctx x = mpb_coll_begin(L, "scatter", K_SCATTER);
  int root = lua_isnoneornil(L, 3) ? 0 : mpb_comm_checkrank(L, x.st, x.c, 3, "scatter");
  lua_settop(L, 2);
  if (x.c->rank != root) {
    mpb_coll_recv_val(L, &x, root);
    return 1;
  }
  luaL_argexpected(L, lua_istable(L, 2), 2, "table");
  for (int r = 0; r < x.c->size; r++) {
    if (r == root) continue;
    lua_geti(L, 2, r + 1);
    mpb_coll_send_vals(L, &x, r, 3, 1);
    lua_pop(L, 1);
  }
  lua_geti(L, 2, root + 1);
  return 1;
}

/* comm:alltoall(t): rank r sends t[j+1] to j and gets {from 0, from 1, ...}. */
static int c_alltoall(lua_State *L) {
  ctx x = mpb_coll_begin(L, "alltoall", K_ALLTOALL);
  luaL_argexpected(L, lua_istable(L, 2), 2, "table");
  lua_settop(L, 2);
  int n = x.c->size, me = x.c->rank;
  for (int k = 1; k < n; k++) {
    int r = (me + k) % n;
    lua_geti(L, 2, r + 1);
    mpb_coll_send_vals(L, &x, r, 3, 1);
    lua_pop(L, 1);
  }
  lua_createtable(L, n, 0);
  lua_geti(L, 2, me + 1);
  lua_rawseti(L, 3, me + 1);
  for (int k = 1; k < n; k++) {
    int r = (me - k + n) % n;
    mpb_coll_recv_val(L, &x, r);
    lua_rawseti(L, 3, r + 1);
  }
  return 1;
}

void mpb_coll_move_methods(lua_State *L, int mpt) {
  static const luaL_Reg funcs[] = {{"gather", c_gather},   {"allgather", c_allgather},
                                   {"scatter", c_scatter}, {"alltoall", c_alltoall},
                                   {NULL, NULL}};
  for (const luaL_Reg *f = funcs; f->name; f++) mpb_comm_setboth(L, mpt, f->name, f->func);
}
