/*
** Neighbourhood collectives of a Cartesian topology (cart.c), collectives of
** a communicator of the topology's size (default mp.world; topology rank =
** communicator rank). Slots are t:neighbors()'s: {lo1, hi1, lo2, hi2, ...},
** one step down and up along each axis.
**
**   t:neighbor_allgather(v [, comm])   {v of lo1, v of hi1, ...}; false where
**                                      there is no neighbour
**   t:neighbor_alltoall(list [, comm]) sends list[s] to the neighbour in slot
**                                      s; returns what each neighbour sent
**                                      this way (false where none)
** What a rank sends in its slot (a, up) arrives in its neighbour's slot
** (a, down). Messages from one sender are taken in the order it sent them,
** so a neighbour in two slots (two ranks along a periodic axis) is right.
*/
#include "coll/coll.h"
#include "layout/laylib.h"
#include "p2p/p2p.h"

static mpb_cart *check(lua_State *L, const char *fname) {
  mpb_cart *t = mpb_cart_test(L, 1);
  if (!t) mpb_lay_argerror(L, 1, fname, "Cartesian topology expected, got %s",
                           luaL_typename(L, 1));
  return t;
}

/* The communicator at 3 (or mp.world), checked against t; returns the call. */
static mpb_coll begin(lua_State *L, const mpb_cart *t, const char *fname, int kind) {
  mpb_state *st = mpb_get(L);
  lua_settop(L, 3);
  if (lua_isnil(L, 3)) {
    mpb_comm_pushworld(L);
    lua_replace(L, 3);
  }
  mpb_comm *c = mpb_comm_check(L, st, 3, fname);
  if (c->size != t->nranks)
    mpb_lay_argerror(L, 3, fname, "the communicator has %d ranks, the topology %d", c->size,
                     t->nranks);
  return mpb_coll_on(L, st, c, fname, kind);
}

/* alltoall: the value for slot s is list[s] (at 2); allgather: the value at 2. */
static int exchange(lua_State *L, int all2all, const char *fname) {
  mpb_cart *t = check(L, fname);
  mpb_coll x = begin(L, t, fname, all2all ? MPB_COLL_NALLTOALL : MPB_COLL_NALLGATHER);
  int ns = 2 * t->ndim, me = x.c->rank;
  if (all2all && (!lua_istable(L, 2) || luaL_len(L, 2) != ns))
    mpb_lay_argerror(L, 2, fname, "a list of %d values (one per neighbour slot) expected", ns);
  int nb[2 * MPB_LAYOUT_MAXDIM], peers = 0;
  for (int s = 0; s < ns; s++) {
    nb[s] = mpb_cart_shift(t, me, s / 2, s % 2 ? 1 : -1);
    int seen = nb[s] < 0 || nb[s] == me;
    for (int k = 0; k < s && !seen; k++) seen = nb[k] == nb[s];
    peers += !seen;
  }
  MPB_TRACE_SPAN(L, x.st, MPB_TR_DIST, x.kind, peers, x.seq, x.c->id);
  for (int s = 0; s < ns; s++) {
    if (nb[s] < 0 || nb[s] == me) continue;
    if (all2all) lua_geti(L, 2, s + 1);
    else lua_pushvalue(L, 2);
    mpb_coll_send_vals(L, &x, nb[s], lua_gettop(L), 1, NULL);
    lua_pop(L, 1);
  }
  lua_createtable(L, ns, 0);
  int out = lua_gettop(L);
  /* a sender's order over its slots (a, down), (a, up) lands in (a, up), (a, down) here */
  for (int a = 0; a < t->ndim; a++)
    for (int k = 0; k < 2; k++) {
      int s = 2 * a + 1 - k, from = 2 * a + k; /* my slot; the sender's slot */
      if (nb[s] < 0) lua_pushboolean(L, 0);
      else if (nb[s] != me) mpb_coll_recv_val(L, &x, nb[s]);
      else if (all2all) lua_geti(L, 2, from + 1);
      else lua_pushvalue(L, 2);
      lua_rawseti(L, out, s + 1);
    }
  return 1;
}

static int nallgather(lua_State *L) { return exchange(L, 0, "Cart.neighbor_allgather"); }
static int nalltoall(lua_State *L) { return exchange(L, 1, "Cart.neighbor_alltoall"); }

void mpb_cart_neighbor_methods(lua_State *L, int methods) {
  lua_pushcfunction(L, nallgather);
  lua_setfield(L, methods, "neighbor_allgather");
  lua_pushcfunction(L, nalltoall);
  lua_setfield(L, methods, "neighbor_alltoall");
}
