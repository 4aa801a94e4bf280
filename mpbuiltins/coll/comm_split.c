/* SPDX-License-Identifier: MIT */
/*
** Collectives that make communicators: comm:split(color, key) and
** comm:dup(). The new communicator's id is agreed on, not derived: every
** member proposes the next id it has not used in this task, all take the
** largest proposal among the members, and each moves past it. A rank's ids
** only grow within a task, so two communicators a rank belongs to never
** share an id, and messages of one can never be taken for the other's.
*/
#include <string.h>

#include "coll/coll.h"
#include "p2p/comm_ranks.h"

/* comm:split(color, key): members with the same color (an integer; nil: in
** none, the result is nil) form a new communicator, ordered by key (default:
** the rank here) then rank. Collective over comm. */
static int c_split(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "Comm.split", MPB_COLL_SPLIT);
  MPB_TRACE_SPAN(L, x.st, MPB_TR_COLL, x.kind, x.root, x.seq, x.c->id);
  mpb_state *st = x.st;
  mpb_comm *c = x.c;
  int64_t mine[4] = {0, 0, c->rank, mpb_comm_next_id(L, st)};
  if (!lua_isnoneornil(L, 2)) {
    int ok;
    mine[0] = 1;
    mine[1] = lua_tointegerx(L, 2, &ok);
    if (!ok) luaL_error(L, "bad argument #1 to 'mp.Comm.split' (" MPB_RANKFMT " color must be an "
                        "integer or nil, got %s)", st->rank, st->size, luaL_typename(L, 2));
  }
  if (!lua_isnoneornil(L, 3)) {
    int ok;
    mine[2] = lua_tointegerx(L, 3, &ok);
    if (!ok) luaL_error(L, "bad argument #2 to 'mp.Comm.split' (" MPB_RANKFMT " key must be an "
                        "integer, got %s)", st->rank, st->size, luaL_typename(L, 3));
  }
  int64_t *all = lua_newuserdatauv(L, sizeof mine * (size_t)c->size, 0);
  mpb_coll_allgather_raw(L, &x, mine, sizeof mine, all);
  if (!mine[0]) {
    lua_pushnil(L);
    return 1;
  }
  /* the members' (key, parent rank) pairs, written over the front of all[] */
  int n = 0;
  int64_t id = 0;
  for (int r = 0; r < c->size; r++)
    if (all[4 * r] && all[4 * r + 1] == mine[1]) {
      if (all[4 * r + 3] > id) id = all[4 * r + 3];
      int64_t key = all[4 * r + 2];
      all[2 * n] = key;
      all[2 * n + 1] = r;
      n++;
    }
  mpb_ranks_by_key(all, n);
  mpb_comm_used_id(st, (uint32_t)id);
  mpb_comm *d = mpb_comm_new(L, st, n, (uint32_t)id);
  for (int k = 0; k < n; k++) d->ranks[k] = c->ranks[(int)all[2 * k + 1]];
  mpb_comm_index(st, d);
  return 1;
}

/* comm:dup(): the same members, a message space of their own. */
static int c_dup(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "Comm.dup", MPB_COLL_DUP);
  MPB_TRACE_SPAN(L, x.st, MPB_TR_COLL, x.kind, x.root, x.seq, x.c->id);
  mpb_state *st = x.st;
  mpb_comm *c = x.c;
  uint32_t mine = mpb_comm_next_id(L, st), id = 0;
  uint32_t *all = lua_newuserdatauv(L, sizeof mine * (size_t)c->size, 0);
  mpb_coll_allgather_raw(L, &x, &mine, sizeof mine, all);
  for (int r = 0; r < c->size; r++)
    if (all[r] > id) id = all[r];
  mpb_comm_used_id(st, id);
  mpb_comm *d = mpb_comm_new(L, st, c->size, id);
  memcpy(d->ranks, c->ranks, sizeof(int) * (size_t)c->size);
  mpb_comm_index(st, d);
  return 1;
}

void mpb_coll_comm_methods(lua_State *L, int mpt) {
  (void)mpt;
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_COMM_METHODS);
  lua_pushcfunction(L, c_split);
  lua_setfield(L, -2, "split");
  lua_pushcfunction(L, c_dup);
  lua_setfield(L, -2, "dup");
  lua_pop(L, 1);
}
