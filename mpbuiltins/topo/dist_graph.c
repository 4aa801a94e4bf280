/* SPDX-License-Identifier: MIT */
/*
** Distributed graph topologies (README "Graph topologies"): each rank names
** only whom it sends to, and learns who sends to it (in-neighbour
** discovery, the sparse dynamic exchange).
**
**   mp.dist_graph(dests [, opts])   collective over opts.comm (default
**       mp.world): dests is this rank's list of destinations (ranks of the
**       communicator, or {to = r, w = x}). Returns an mp.Graph that knows
**       this rank's neighbourhood: t:neighbors(), t:sources(), t:degree(),
**       t:weights() are what mp.graph with every rank's edges gives for this
**       rank (sources by rank, a source's edges in its order; weighted when
**       any rank gave a weight, 1 where none was given).
**
** Method: an allgather of count rows. Each rank sends every member one row
** of n + 1 integers (how many edges it has to each rank, and whether it gave
** weights), so every rank reads its sources and their multiplicities from
** the column of its own rank; then, if weights were given, each rank sends
** each destination the weights of its edges there, and each rank takes them
** from its known sources. Chosen over NBX (an Issend per destination and an
** MPI_Ibarrier) because mplua's collectives never use MPI collectives: an
** Ibarrier an abort interrupts can be neither completed nor cancelled (see
** coll/coll.h), while these are ordinary collective messages that the abort
** protocol drains and the one wait watches. Chosen over a reduce-scatter of
** counts followed by receives from any source because tagged messages are
** found by sender, and knowing the senders makes the result's order
** deterministic without sorting. The cost: O(n) messages of O(n) bytes per
** rank (n^2 integers in all per rank: 1.6 kB at 20 ranks, 4 MB at 1000),
** one round; the weights add one message per distinct neighbour.
*/
#include <string.h>

#include "coll/coll.h"
#include "topo/topo.h"

static int dist_graph(lua_State *L) {
  const char *fn = "dist_graph";
  mpb_state *st = mpb_get(L);
  lua_settop(L, 2);
  if (!lua_isnil(L, 2) && !lua_istable(L, 2))
    mpb_lay_argerror(L, 2, fn, "options table expected, got %s", luaL_typename(L, 2));
  if (lua_istable(L, 2)) lua_getfield(L, 2, "comm");
  else lua_pushnil(L);
  if (lua_isnil(L, 3)) {
    lua_pop(L, 1);
    mpb_comm_pushworld(L);
  }
  mpb_comm *c = mpb_comm_check(L, st, 3, fn);
  int n = c->size, me = c->rank, weighted = 0;
  /* scratch: the list (read once), then a row and every row (freed with the stack) */
  mpb_dests list;
  mpb_graph_dests(L, 1, n, &list, &weighted, 1, fn);
  int64_t m = list.n;
  int *to = list.to;
  double *w = list.w;
  size_t rowlen = (size_t)n + 1;
  int64_t *row = lua_newuserdatauv(L, sizeof(int64_t) * rowlen * ((size_t)n + 1), 0);
  int64_t *all = row + rowlen;
  memset(row, 0, sizeof(int64_t) * rowlen);
  for (int64_t e = 0; e < m; e++) row[to[e]]++;
  row[n] = weighted;

  mpb_coll x = mpb_coll_on(L, st, c, fn, MPB_COLL_SPARSE);
  mpb_coll_allgather_raw(L, &x, row, sizeof(int64_t) * rowlen, all);
  int64_t nin = 0;
  for (int s = 0; s < n; s++) {
    nin += all[(size_t)s * rowlen + (size_t)me];
    if (all[(size_t)s * rowlen + (size_t)n]) weighted = 1;
  }
  mpb_graph *t = mpb_graph_push(L, n, m, nin);
  int gi = lua_gettop(L);
  t->me = me;
  t->weighted = weighted;
  for (int r = 0; r <= n; r++) {
    t->ooff[r] = r <= me ? 0 : m;
    t->ioff[r] = r <= me ? 0 : nin;
  }
  memcpy(t->oto, to, sizeof(int) * (size_t)m);
  memcpy(t->ow, w, sizeof(double) * (size_t)m);
  int64_t at = 0;
  for (int s = 0; s < n; s++)
    for (int64_t k = all[(size_t)s * rowlen + (size_t)me]; k > 0; k--) {
      t->ifrom[at] = s;
      t->iw[at++] = 1;
    }
  if (weighted) {
    /* to each destination (first appearance order) its edges' weights, in order */
    double *buf = lua_newuserdatauv(L, sizeof(double) * (size_t)m + 1, 0);
    for (int64_t e = 0; e < m; e++) {
      int d = to[e], first = 1;
      for (int64_t f = 0; f < e && first; f++) first = to[f] != d;
      if (!first) continue;
      size_t k = 0;
      for (int64_t f = e; f < m; f++)
        if (to[f] == d) buf[k++] = w[f];
      if (d == me) { /* a self-loop: its in-slots are at this rank's place among sources */
        int64_t i = 0;
        while (t->ifrom[i] != me) i++;
        memcpy(t->iw + i, buf, sizeof(double) * k);
      } else {
        mpb_coll_send_raw(L, &x, d, buf, sizeof(double) * k);
      }
    }
    at = 0;
    for (int s = 0; s < n; s++) {
      int64_t k = all[(size_t)s * rowlen + (size_t)me];
      if (k && s != me) mpb_coll_take_raw(L, &x, s, t->iw + at, sizeof(double) * (size_t)k);
      at += k;
    }
  }
  lua_settop(L, gi);
  return 1;
}

void mpb_open_dist_graph(lua_State *L) {
  lua_pushcfunction(L, dist_graph);
  lua_setfield(L, -2, "dist_graph");
}
