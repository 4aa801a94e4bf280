/* SPDX-License-Identifier: MIT */
/*
** Neighbourhood collectives of topologies (Cartesian, cart.c; graphs,
** graph.c and dist_graph.c), and attaching a topology to a communicator.
** One engine for both kinds: a topology gives, for this rank, its out-slots
** (destinations) and in-slots (sources); a value goes to each destination,
** one comes from each source. Collectives over a communicator of the
** topology's size (topology rank = communicator rank).
**
**   t:neighbor_allgather(v [, comm])   {v of in-slot 1, ...}; false where
**                                      there is no neighbour (Cart edges)
**   t:neighbor_alltoall(list [, comm]) sends list[k] to out-slot k; returns
**                                      what each source sent this way
**   t:attach(comm), comm:with_topology(t)   a new communicator (collective,
**                                      like comm:dup) carrying t
**   c:neighbor_allgather(v), c:neighbor_alltoall(list), c:topology()
** Cart: out- and in-slots are both t:neighbors()'s {lo1, hi1, lo2, hi2, ...};
** what a rank sends in its slot (a, up) arrives in its neighbour's slot
** (a, down). Graph: out-slots are t:neighbors(), in-slots t:sources() (MPI
** dist graph semantics). Messages from one sender are taken in the order it
** sent them, and in-slots are filled in that order, so a rank that is the
** neighbour in two slots (a periodic axis of 2, an edge listed twice) is
** right; a self-loop is copied locally.
*/
#include <string.h>

#include "coll/coll.h"
#include "topo/topo.h"
#include "p2p/p2p.h"

/* This rank's neighbourhood in a topology. */
typedef struct {
  int nout, nin;
  const int *dest, *src; /* ranks; -1: none */
  const int *order;      /* the order in-slots are filled */
  const int *selfout;    /* in-slot j with src[j] == me: the out-slot it copies */
} nbhd;

static int is_topology(lua_State *L, int idx) {
  return mpb_cart_test(L, idx) || mpb_graph_test(L, idx);
}

/* The neighbourhood of comm rank me in the topology at tidx; scratch on the stack. */
static nbhd neighbourhood(lua_State *L, int tidx, int me, int argc, const char *fname) {
  nbhd h;
  mpb_cart *ct = mpb_cart_test(L, tidx);
  if (ct) {
    int ns = 2 * ct->ndim;
    int *a = lua_newuserdatauv(L, sizeof(int) * 3 * (size_t)ns, 0);
    int *nb = a, *order = a + ns, *self = a + 2 * ns;
    for (int s = 0; s < ns; s++) nb[s] = mpb_cart_shift(ct, me, s / 2, s % 2 ? 1 : -1);
    /* a sender's order over its slots (a, down), (a, up) lands in (a, up), (a, down) here */
    for (int ax = 0; ax < ct->ndim; ax++) {
      order[2 * ax] = 2 * ax + 1;
      order[2 * ax + 1] = 2 * ax;
      self[2 * ax + 1] = 2 * ax;
      self[2 * ax] = 2 * ax + 1;
    }
    h.nout = h.nin = ns;
    h.dest = h.src = nb;
    h.order = order;
    h.selfout = self;
    return h;
  }
  mpb_graph *g = mpb_graph_test(L, tidx);
  if (g->me >= 0 && g->me != me)
    mpb_lay_argerror(L, argc, fname, "this is rank %d's distributed graph, but this rank is %d "
                     "of the communicator", g->me, me);
  h.nout = (int)(g->ooff[me + 1] - g->ooff[me]);
  h.nin = (int)(g->ioff[me + 1] - g->ioff[me]);
  h.dest = g->oto + g->ooff[me];
  h.src = g->ifrom + g->ioff[me];
  h.order = NULL;
  int *self = lua_newuserdatauv(L, sizeof(int) * ((size_t)h.nin + 1), 0);
  /* the i-th self in-slot copies the i-th self out-slot (both in this rank's order) */
  int k = 0;
  for (int j = 0; j < h.nin; j++) {
    self[j] = -1;
    if (h.src[j] != me) continue;
    while (k < h.nout && h.dest[k] != me) k++;
    self[j] = k++;
  }
  h.selfout = self;
  return h;
}

static int topo_nranks(lua_State *L, int tidx) {
  mpb_cart *ct = mpb_cart_test(L, tidx);
  return ct ? ct->nranks : mpb_graph_test(L, tidx)->nranks;
}

/* The communicator at cidx (nil: mp.world), checked against the topology at tidx. */
static mpb_comm *comm_for(lua_State *L, int tidx, int cidx, const char *fname) {
  mpb_state *st = mpb_get(L);
  if (lua_isnil(L, cidx)) {
    mpb_comm_pushworld(L);
    lua_replace(L, cidx);
  }
  mpb_comm *c = mpb_comm_check(L, st, cidx, fname);
  int n = topo_nranks(L, tidx);
  if (c->size != n)
    mpb_lay_argerror(L, cidx, fname, "the communicator has %d ranks, the topology %d", c->size, n);
  return c;
}

/* Stack: 1 topology, 2 value or list, 3 communicator (nil: mp.world); the
** list is reported as argument listarg. */
static int exchange(lua_State *L, int all2all, const char *fname, int listarg) {
  lua_settop(L, 3);
  mpb_comm *c = comm_for(L, 1, 3, fname);
  nbhd h = neighbourhood(L, 1, c->rank, 3, fname);
  if (all2all && (!lua_istable(L, 2) || luaL_len(L, 2) != h.nout))
    mpb_lay_argerror(L, listarg, fname, "a list of %d values (one per destination slot) expected, got "
                     "%s", h.nout, lua_istable(L, 2) ? "another length" : luaL_typename(L, 2));
  mpb_coll x = mpb_coll_on(L, mpb_get(L), c, fname,
                           all2all ? MPB_COLL_NALLTOALL : MPB_COLL_NALLGATHER);
  int me = c->rank, peers = 0; /* distinct other ranks it sends to */
  for (int k = 0; k < h.nout; k++) {
    int seen = h.dest[k] < 0 || h.dest[k] == me;
    for (int j = 0; j < k && !seen; j++) seen = h.dest[j] == h.dest[k];
    peers += !seen;
  }
  MPB_TRACE_SPAN(L, x.st, MPB_TR_DIST, x.kind, peers, x.seq, x.c->id);
  for (int k = 0; k < h.nout; k++) {
    if (h.dest[k] < 0 || h.dest[k] == me) continue;
    if (all2all) lua_geti(L, 2, k + 1);
    else lua_pushvalue(L, 2);
    mpb_coll_send_vals(L, &x, h.dest[k], lua_gettop(L), 1, NULL);
    lua_pop(L, 1);
  }
  lua_createtable(L, h.nin, 0);
  int out = lua_gettop(L);
  for (int i = 0; i < h.nin; i++) {
    int j = h.order ? h.order[i] : i;
    if (h.src[j] < 0) lua_pushboolean(L, 0);
    else if (h.src[j] != me) mpb_coll_recv_val(L, &x, h.src[j]);
    else if (all2all) lua_geti(L, 2, h.selfout[j] + 1);
    else lua_pushvalue(L, 2);
    lua_rawseti(L, out, j + 1);
  }
  return 1;
}

static int check_topo(lua_State *L, const char *fname) {
  if (!is_topology(L, 1))
    mpb_lay_argerror(L, 1, fname, "topology (mp.cart, mp.graph) expected, got %s",
                     luaL_typename(L, 1));
  return 1;
}

static int nallgather(lua_State *L) {
  check_topo(L, "neighbor_allgather");
  return exchange(L, 0, mpb_cart_test(L, 1) ? "Cart.neighbor_allgather"
                                            : "Graph.neighbor_allgather", 2);
}
static int nalltoall(lua_State *L) {
  check_topo(L, "neighbor_alltoall");
  return exchange(L, 1, mpb_cart_test(L, 1) ? "Cart.neighbor_alltoall"
                                            : "Graph.neighbor_alltoall", 2);
}

/* ------------------------------------------------------------ attach */
/* FNV-1a over a topology's definition: every rank attaching the same
** topology computes the same number. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211u;
  return h;
}

static uint64_t fingerprint(lua_State *L, int tidx, int *kind) {
  uint64_t h = 14695981039346656037u;
  mpb_cart *ct = mpb_cart_test(L, tidx);
  if (ct) {
    *kind = 1;
    return fnv(h, ct, sizeof *ct);
  }
  mpb_graph *g = mpb_graph_test(L, tidx);
  *kind = g->me >= 0 ? 3 : 2;
  if (g->me >= 0) return 0; /* each rank holds its own part */
  h = fnv(h, &g->nranks, sizeof g->nranks);
  h = fnv(h, g->ooff, sizeof(int64_t) * ((size_t)g->nranks + 1));
  h = fnv(h, g->oto, sizeof(int) * (size_t)g->nout);
  return fnv(h, g->ow, sizeof(double) * (size_t)g->nout);
}

/* Stack: 1 topology, 2 communicator. A new communicator (its own message
** space, as comm:dup) carrying the topology; collective over comm. */
static int attach_at(lua_State *L, const char *fname) {
  static const char *const kinds[] = {"?", "Cartesian topology", "graph", "distributed graph"};
  lua_settop(L, 2);
  mpb_state *st = mpb_get(L);
  mpb_comm *c = comm_for(L, 1, 2, fname);
  if (mpb_graph_test(L, 1) && mpb_graph_test(L, 1)->me >= 0 && mpb_graph_test(L, 1)->me != c->rank)
    mpb_lay_argerror(L, 1, fname, "this is rank %d's distributed graph, but this rank is %d of "
                     "the communicator", mpb_graph_test(L, 1)->me, c->rank);
  mpb_coll x = mpb_coll_on(L, st, c, fname, MPB_COLL_ATTACH);
  int kind;
  uint64_t mine[3] = {mpb_comm_next_id(L, st), 0, fingerprint(L, 1, &kind)};
  mine[1] = (uint64_t)kind;
  uint64_t *all = lua_newuserdatauv(L, sizeof mine * (size_t)c->size, 0);
  mpb_coll_allgather_raw(L, &x, mine, sizeof mine, all);
  uint64_t id = 0;
  for (int r = 0; r < c->size; r++) {
    if (all[3 * r + 1] != mine[1] || all[3 * r + 2] != mine[2])
      mpb_lay_argerror(L, 1, fname, "rank %d of the communicator attaches %s %s, this rank "
                       "a %s", r, all[3 * r + 1] != mine[1] ? "a" : "another",
                       kinds[all[3 * r + 1] & 3], kinds[kind]);
    if (all[3 * r] > id) id = all[3 * r];
  }
  mpb_comm_used_id(st, (uint32_t)id);
  mpb_comm *d = mpb_comm_new(L, st, c->size, (uint32_t)id);
  memcpy(d->ranks, c->ranks, sizeof(int) * (size_t)c->size);
  mpb_comm_index(st, d);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  return 1;
}

static int t_attach(lua_State *L) {
  check_topo(L, "attach");
  const char *fn = mpb_cart_test(L, 1) ? "Cart.attach" : "Graph.attach";
  if (lua_isnoneornil(L, 2))
    mpb_lay_argerror(L, 2, fn, "communicator expected, got %s", luaL_typename(L, 2));
  return attach_at(L, fn);
}

/* comm:with_topology(t) */
static int c_with(lua_State *L) {
  mpb_comm_check(L, mpb_get(L), 1, "Comm.with_topology");
  if (!is_topology(L, 2))
    mpb_lay_argerror(L, 1, "Comm.with_topology", "topology (mp.cart, mp.graph) expected, got %s",
                     luaL_typename(L, 2));
  lua_settop(L, 2);
  int n = topo_nranks(L, 2), size = ((mpb_comm *)lua_touserdata(L, 1))->size;
  if (n != size)
    mpb_lay_argerror(L, 1, "Comm.with_topology", "the topology has %d ranks, the communicator "
                     "%d", n, size);
  lua_insert(L, 1);
  return attach_at(L, "Comm.with_topology");
}

/* The topology attached to the communicator at 1, pushed (nil: none). */
static int c_topology(lua_State *L) {
  mpb_comm_check(L, mpb_get(L), 1, "Comm.topology");
  lua_getiuservalue(L, 1, 1);
  return 1;
}

/* c:neighbor_X(v): t:neighbor_X(v, c) with c's topology. */
static int on_comm(lua_State *L, int all2all, const char *fname) {
  mpb_comm_check(L, mpb_get(L), 1, fname);
  lua_settop(L, 2);
  if (lua_getiuservalue(L, 1, 1) == LUA_TNIL)
    mpb_lay_argerror(L, 0, fname, "the communicator has no topology (attach one with "
                     "comm:with_topology(t))");
  lua_insert(L, 1); /* t, c, v */
  lua_insert(L, 2); /* t, v, c */
  return exchange(L, all2all, fname, 1);
}

static int c_nallgather(lua_State *L) { return on_comm(L, 0, "Comm.neighbor_allgather"); }
static int c_nalltoall(lua_State *L) { return on_comm(L, 1, "Comm.neighbor_alltoall"); }

void mpb_topo_neighbor_methods(lua_State *L, int methods) {
  lua_pushcfunction(L, nallgather);
  lua_setfield(L, methods, "neighbor_allgather");
  lua_pushcfunction(L, nalltoall);
  lua_setfield(L, methods, "neighbor_alltoall");
  lua_pushcfunction(L, t_attach);
  lua_setfield(L, methods, "attach");
}

void mpb_open_neighbor(lua_State *L) {
  static const luaL_Reg methods[] = {{"with_topology", c_with}, {"topology", c_topology},
                                     {"neighbor_allgather", c_nallgather},
                                     {"neighbor_alltoall", c_nalltoall}, {NULL, NULL}};
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_COMM_METHODS);
  luaL_setfuncs(L, methods, 0);
  lua_pop(L, 1);
}
