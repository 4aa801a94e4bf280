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
** Method: routed counts, then the weights. Each rank makes one item per
** distinct destination (source, destination, number of edges) and the
** items travel to their destinations in ceil(log2 n) rounds: in round k
** every rank sends rank me + 2^k the items whose distance to their
** destination, (dst - me) mod n, has bit k set, and takes the items of rank
** me - 2^k (one message each way per round, possibly of no items). The
** same messages carry whether any rank gave weights, ORed on the way (after
** the rounds every rank has heard from every rank, as in a dissemination
** barrier). Then, if weights were given, each rank sends each destination
** the weights of its edges there, and each rank takes them from its sources,
** known now. Chosen over NBX (an Issend per destination and an
** MPI_Ibarrier) because mplua's collectives never use MPI collectives: an
** Ibarrier an abort interrupts can be neither completed nor cancelled (see
** coll/coll.h), while these are ordinary collective messages that the abort
** protocol drains and the one wait watches; and every message comes from a
** rank known in advance, as tagged collective messages are found. The
** cost: ceil(log2 n) messages per rank, carrying O(E log n / n) items per
** rank on average for E edges in all (an item crosses at most log2 n
** ranks), no memory of the size of the communicator; the weights add one
** message per distinct neighbour.
*/
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "topo/topo.h"

/* An item on its way: src's edges to dst, count of them. */
typedef struct {
  int32_t src, dst;
  int64_t count;
} item;

/* A scratch array of n items, freed with the stack. */
static item *items(lua_State *L, int64_t n) {
  luaL_checkstack(L, 2, "mp.dist_graph");
  return lua_newuserdatauv(L, sizeof(item) * (size_t)(n > 0 ? n : 1), 0);
}

static int by_rank(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int by_src(const void *a, const void *b) {
  const item *x = a, *y = b;
  return (x->src > y->src) - (x->src < y->src);
}

/* This rank's items: one per distinct destination of to[0..m). */
static item *own_items(lua_State *L, int me, const int *to, int64_t m, int64_t *nown) {
  int *sorted = lua_newuserdatauv(L, sizeof(int) * (size_t)(m > 0 ? m : 1), 0);
  if (m > 0) memcpy(sorted, to, sizeof(int) * (size_t)m);
  qsort(sorted, (size_t)m, sizeof(int), by_rank);
  item *it = items(L, m);
  int64_t k = 0;
  for (int64_t e = 0; e < m; e++) {
    if (k > 0 && it[k - 1].dst == sorted[e]) it[k - 1].count++;
    else it[k++] = (item){me, sorted[e], 1};
  }
  *nown = k;
  return it;
}

/* Route the items held (*held of them at *at) to their destinations; on
** return *at holds the items whose destination is this rank, and *weighted
** is whether any member gave weights. A round's message is a head (the
** flag, the number of items) and, when there are items, a second message
** with them, taken straight into a buffer sized by the head (nothing can
** raise while a message is held). */
static void route(lua_State *L, mpb_coll *x, item **at, int64_t *held, int *weighted) {
  int n = x->c->size, me = x->c->rank;
  int64_t flag = *weighted;
  for (int64_t bit = 1; bit < n; bit <<= 1) {
    int to = (int)((me + bit) % n), from = (int)((me - bit + n) % n);
    item *h = *at;
    int64_t head[2] = {flag, 0}, stay = 0;
    for (int64_t i = 0; i < *held; i++)
      if ((h[i].dst - me + n) % n & bit) head[1]++;
    item *out = items(L, head[1]);
    for (int64_t i = 0, go = 0; i < *held; i++)
      if ((h[i].dst - me + n) % n & bit) out[go++] = h[i];
      else h[stay++] = h[i];
    mpb_coll_send_raw(L, x, to, head, sizeof head);
    if (head[1] > 0) mpb_coll_send_raw(L, x, to, out, sizeof(item) * (size_t)head[1]);
    lua_pop(L, 1);
    int64_t theirs[2];
    mpb_coll_take_raw(L, x, from, theirs, sizeof theirs);
    if (theirs[1] < 0 || theirs[1] > INT32_MAX)
      luaL_error(L, "mp.%s: " MPB_RANKFMT " malformed message from rank %d", x->fname,
                 x->st->rank, x->st->size, from);
    item *grown = items(L, stay + theirs[1]);
    if (stay > 0) memcpy(grown, h, sizeof(item) * (size_t)stay);
    if (theirs[1] > 0)
      mpb_coll_take_raw(L, x, from, grown + stay, sizeof(item) * (size_t)theirs[1]);
    flag |= theirs[0] != 0;
    *at = grown;
    *held = stay + theirs[1];
  }
  *weighted = flag != 0;
}

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
  /* scratch: the list (read once), then the items (freed with the stack) */
  mpb_dests list;
  mpb_graph_dests(L, 1, n, &list, &weighted, 1, fn);
  int64_t m = list.n, nsrc;
  int *to = list.to;
  double *w = list.w;
  item *src = own_items(L, me, to, m, &nsrc);

  mpb_coll x = mpb_coll_on(L, st, c, fn, MPB_COLL_SPARSE);
  route(L, &x, &src, &nsrc, &weighted);
  for (int64_t i = 0; i < nsrc; i++)
    if (src[i].dst != me || src[i].src < 0 || src[i].src >= n || src[i].count < 1)
      luaL_error(L, "mp.%s: " MPB_RANKFMT " malformed message (an edge from rank %d to rank %d)",
                 fn, st->rank, st->size, (int)src[i].src, (int)src[i].dst);
  qsort(src, (size_t)nsrc, sizeof(item), by_src);
  int64_t nin = 0;
  for (int64_t i = 0; i < nsrc; i++) nin += src[i].count;
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
  for (int64_t i = 0; i < nsrc; i++)
    for (int64_t k = src[i].count; k > 0; k--) {
      t->ifrom[at] = src[i].src;
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
    for (int64_t i = 0; i < nsrc; i++) {
      int64_t k = src[i].count;
      if (src[i].src != me) mpb_coll_take_raw(L, &x, src[i].src, t->iw + at, sizeof(double) * (size_t)k);
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
