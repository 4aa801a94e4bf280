/* SPDX-License-Identifier: MIT */
/*
** General graph topologies as values (README "Graph topologies"), seed 004:
** which rank sends to which, with optional weights, made before and without
** any communicator, like mp.cart. Ranks are 0-based.
**
**   mp.graph(adj [, opts])   adj[r] (r = 0..n-1, so adj[0] too): the list
**                 of r's destinations, each a rank or {to = r, w = x};
**                 n = opts.nranks, default the largest key + 1
**   mp.graph(n, edges)       edges: a list of {from, to [, w]}
**   t:neighbors([r])         destinations of r (out-edges, in r's order)
**   t:sources([r])           sources of r (in-edges): by source rank, a
**                            source's edges in the order it lists them
**   t:degree([r])            out-degree, in-degree
**   t:weights([r])           out-weights, in-weights (lists parallel to
**                            neighbors and sources; 1 where none was given)
**   t:distance(r1, r2)       hops along out-edges (BFS); with weights, the
**                            weighted shortest path (Dijkstra); nil: no path
**   t.nranks, t.nedges, t.weighted, t.distributed, t.rank, tostring(t)
**   t:neighbor_allgather, t:neighbor_alltoall, t:attach   (neighbor.c)
** An edge r -> r (a self-loop) and an edge listed twice are allowed, as in
** MPI_Dist_graph_create: they are slots like any other. A distributed graph
** (dist_graph.c) knows only its own rank's lists: queries on other ranks
** and distances are errors.
*/
#include <math.h>
#include <string.h>

#include "topo/topo.h"

#define GRAPH_MT "mp.Graph"

mpb_graph *mpb_graph_test(lua_State *L, int arg) { return luaL_testudata(L, arg, GRAPH_MT); }

static mpb_graph *check(lua_State *L, int arg, const char *fname) {
  mpb_graph *t = mpb_graph_test(L, arg);
  if (!t) mpb_lay_argerror(L, arg, fname, "graph topology expected, got %s", luaL_typename(L, arg));
  return t;
}

/* One allocation: the struct, then offsets, ranks and weights. */
mpb_graph *mpb_graph_push(lua_State *L, int n, int64_t nout, int64_t nin) {
  size_t sz = sizeof(mpb_graph) + 2 * sizeof(int64_t) * ((size_t)n + 1) +
              (sizeof(double) + sizeof(int)) * (size_t)(nout + nin);
  mpb_graph *t = lua_newuserdatauv(L, sz, 0);
  memset(t, 0, sz);
  t->nranks = n;
  t->me = -1;
  t->nout = nout;
  t->nin = nin;
  t->ooff = (int64_t *)(t + 1);
  t->ioff = t->ooff + n + 1;
  t->ow = (double *)(t->ioff + n + 1);
  t->iw = t->ow + nout;
  t->oto = (int *)(t->iw + nin);
  t->ifrom = t->oto + nout;
  luaL_setmetatable(L, GRAPH_MT);
  return t;
}

/* ------------------------------------------------------------- parsing */
static int rank_at(lua_State *L, int idx, int n, int arg, const char *fname, const char *what) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok) mpb_lay_argerror(L, arg, fname, "%s must be a rank, got %s", what, luaL_typename(L, idx));
  if (v < 0 || v >= n)
    mpb_lay_argerror(L, arg, fname, "%s: rank %I out of range 0..%d", what, (LUAI_UACINT)v, n - 1);
  return (int)v;
}

static double weight_at(lua_State *L, int idx, int arg, const char *fname) {
  int ok;
  double w = lua_tonumberx(L, idx, &ok);
  if (!ok || !isfinite(w) || w < 0)
    mpb_lay_argerror(L, arg, fname, "a weight must be a finite number >= 0, got %s",
                     ok ? lua_tostring(L, idx) : luaL_typename(L, idx));
  return w;
}

/* The length of the list at idx (read once), at most MAX_EDGES. */
#define MAX_EDGES ((lua_Integer)1 << 28)

static int64_t list_len(lua_State *L, int idx, int arg, const char *fname, const char *what) {
  lua_Integer m = luaL_len(L, idx);
  if (m < 0 || m > MAX_EDGES)
    mpb_lay_argerror(L, arg, fname, "a list of %I %s is %s (at most %I)", (LUAI_UACINT)m, what,
                     m < 0 ? "impossible" : "too long", (LUAI_UACINT)MAX_EDGES);
  return (int64_t)m;
}

void mpb_graph_dests(lua_State *L, int idx, int n, mpb_dests *d, int *weighted, int arg,
                     const char *fname) {
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx))
    mpb_lay_argerror(L, arg, fname, "a list of destinations expected, got %s",
                     luaL_typename(L, idx));
  d->n = list_len(L, idx, arg, fname, "destinations");
  int64_t *u = lua_newuserdatauv(L, sizeof(int64_t) + (sizeof(double) + sizeof(int)) *
                                 (size_t)d->n, 0);
  u[0] = d->n; /* the userdata says its length (graph() keeps several) */
  d->w = (double *)(u + 1);
  d->to = (int *)(d->w + d->n);
  for (int64_t k = 0; k < d->n; k++) {
    lua_geti(L, idx, k + 1);
    double x = 1;
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "to");
      d->to[k] = rank_at(L, -1, n, arg, fname, "destination");
      if (lua_getfield(L, -2, "w") != LUA_TNIL) {
        x = weight_at(L, -1, arg, fname);
        *weighted = 1;
      }
      lua_pop(L, 2);
    } else {
      d->to[k] = rank_at(L, -1, n, arg, fname, "destination");
    }
    lua_pop(L, 1);
    d->w[k] = x;
  }
}

/* In-lists from the out-lists: by source rank, then the source's order. */
static void make_in(mpb_graph *t) {
  int n = t->nranks;
  for (int64_t e = 0; e < t->nout; e++) t->ioff[t->oto[e] + 1]++;
  for (int r = 0; r < n; r++) t->ioff[r + 1] += t->ioff[r];
  /* ioff[d] is d's fill cursor: at the end it is d's end, shifted back after */
  for (int s = 0; s < n; s++)
    for (int64_t e = t->ooff[s]; e < t->ooff[s + 1]; e++) {
      int d = t->oto[e];
      int64_t at = t->ioff[d]++;
      t->ifrom[at] = s;
      t->iw[at] = t->ow[e];
    }
  for (int r = n; r > 0; r--) t->ioff[r] = t->ioff[r - 1]; /* shift back */
  t->ioff[0] = 0;
}

/* mp.graph(adj [, opts]) | mp.graph(n, edges) */
static int graph(lua_State *L) {
  const char *fn = "graph";
  int weighted = 0;
  if (lua_type(L, 1) == LUA_TNUMBER) {
    lua_Integer nn = luaL_checkinteger(L, 1);
    if (nn < 1 || nn > INT32_MAX)
      mpb_lay_argerror(L, 1, fn, "number of ranks %I out of range 1..%d", (LUAI_UACINT)nn, INT32_MAX);
    int n = (int)nn;
    if (!lua_istable(L, 2))
      mpb_lay_argerror(L, 2, fn, "a list of edges {from, to [, w]} expected, got %s",
                       luaL_typename(L, 2));
    /* each edge read once into C (a proxy answers once), then placed */
    int64_t m = list_len(L, 2, 2, fn, "edges");
    double *ew = lua_newuserdatauv(L, (sizeof(double) + 2 * sizeof(int)) * (size_t)m + 1, 0);
    int *from = (int *)(ew + m), *to = from + m;
    for (int64_t k = 0; k < m; k++) {
      if (lua_geti(L, 2, k + 1) != LUA_TTABLE)
        mpb_lay_argerror(L, 2, fn, "edge %I: {from, to [, w]} expected, got %s",
                         (LUAI_UACINT)(k + 1), luaL_typename(L, -1));
      lua_geti(L, -1, 1);
      from[k] = rank_at(L, -1, n, 2, fn, "edge source");
      lua_geti(L, -2, 2);
      to[k] = rank_at(L, -1, n, 2, fn, "edge destination");
      ew[k] = 1;
      if (lua_geti(L, -3, 3) != LUA_TNIL) {
        ew[k] = weight_at(L, -1, 2, fn);
        weighted = 1;
      }
      lua_pop(L, 4);
    }
    mpb_graph *t = mpb_graph_push(L, n, m, m);
    int gi = lua_gettop(L);
    /* count per source, then place each edge in its source's list, in order */
    for (int64_t k = 0; k < m; k++) t->ooff[from[k] + 1]++;
    for (int r = 0; r < n; r++) t->ooff[r + 1] += t->ooff[r];
    for (int64_t k = 0; k < m; k++) {
      int s = from[k];
      int64_t at = t->ioff[s]++; /* ioff: a fill counter until make_in */
      t->oto[t->ooff[s] + at] = to[k];
      t->ow[t->ooff[s] + at] = ew[k];
    }
    memset(t->ioff, 0, sizeof(int64_t) * ((size_t)n + 1));
    t->weighted = weighted;
    make_in(t);
    lua_settop(L, gi);
    return 1;
  }
  if (!lua_istable(L, 1))
    mpb_lay_argerror(L, 1, fn, "an adjacency table {[0] = {...}, ...} or a number of ranks "
                     "expected, got %s", luaL_typename(L, 1));
  if (!lua_isnoneornil(L, 2) && !lua_istable(L, 2))
    mpb_lay_argerror(L, 2, fn, "options table expected, got %s", luaL_typename(L, 2));
  lua_Integer n = -1;
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    int ok;
    lua_Integer k = lua_tointegerx(L, -2, &ok);
    if (!ok || k < 0 || k >= INT32_MAX)
      mpb_lay_argerror(L, 1, fn, "adjacency keys are ranks 0..n-1, got %s",
                       lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : luaL_typename(L, -2));
    if (k + 1 > n) n = k + 1;
    lua_pop(L, 1);
  }
  if (lua_istable(L, 2) && lua_getfield(L, 2, "nranks") != LUA_TNIL) {
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok || v < 1 || v > INT32_MAX) mpb_lay_argerror(L, 2, fn, "nranks must be a positive integer");
    if (v < n) mpb_lay_argerror(L, 1, fn, "rank %I has a list but nranks is %I", (LUAI_UACINT)(n - 1),
                                (LUAI_UACINT)v);
    n = v;
  }
  lua_settop(L, 2);
  if (n < 1) mpb_lay_argerror(L, 1, fn, "an empty graph has no ranks (give opts.nranks)");
  /* each rank's list read once into C (kept in lists[r + 1]), then copied */
  lua_newtable(L); /* 3 */
  int64_t m = 0;
  for (lua_Integer r = 0; r < n; r++) {
    if (lua_geti(L, 1, r) != LUA_TNIL) {
      mpb_dests d;
      mpb_graph_dests(L, -1, (int)n, &d, &weighted, 1, fn);
      m += d.n;
      if (m > MAX_EDGES)
        mpb_lay_argerror(L, 1, fn, "more than %I edges", (LUAI_UACINT)MAX_EDGES);
      lua_rawseti(L, 3, r + 1);
    }
    lua_pop(L, 1);
  }
  mpb_graph *t = mpb_graph_push(L, (int)n, m, m);
  for (lua_Integer r = 0; r < n; r++) {
    int64_t at = t->ooff[r];
    if (lua_rawgeti(L, 3, r + 1) != LUA_TNIL) {
      const int64_t *u = lua_touserdata(L, -1);
      int64_t k = u[0];
      const double *w = (const double *)(u + 1);
      memcpy(t->ow + at, w, sizeof(double) * (size_t)k);
      memcpy(t->oto + at, w + k, sizeof(int) * (size_t)k);
      at += k;
    }
    lua_pop(L, 1);
    t->ooff[r + 1] = at;
  }
  t->weighted = weighted;
  make_in(t);
  return 1;
}

/* ------------------------------------------------------------- queries */
static int rankarg(lua_State *L, const mpb_graph *t, int arg, const char *fname) {
  int r;
  if (lua_isnoneornil(L, arg)) {
    r = t->me >= 0 ? t->me : mpb_get(L)->rank;
    if (r >= t->nranks)
      mpb_lay_argerror(L, arg, fname, "this rank (%d) is not in the graph's %d ranks: pass a "
                       "rank", r, t->nranks);
  } else {
    r = rank_at(L, arg, t->nranks, arg, fname, "rank");
  }
  if (t->me >= 0 && r != t->me)
    mpb_lay_argerror(L, arg, fname, "a distributed graph knows only rank %d's neighbourhood, "
                     "not rank %d's", t->me, r);
  return r;
}

static void push_ints(lua_State *L, const int *v, int64_t n) {
  lua_createtable(L, (int)n, 0);
  for (int64_t i = 0; i < n; i++) {
    lua_pushinteger(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* A weight or a distance: an integer when it is a whole number (MPI's weights are). */
static void push_num(lua_State *L, double v) {
  lua_Integer i;
  if (v == floor(v) && lua_numbertointeger(v, &i)) lua_pushinteger(L, i);
  else lua_pushnumber(L, v);
}

static void push_nums(lua_State *L, const double *v, int64_t n) {
  lua_createtable(L, (int)n, 0);
  for (int64_t i = 0; i < n; i++) {
    push_num(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

static int neighbors(lua_State *L) {
  mpb_graph *t = check(L, 1, "Graph.neighbors");
  int r = rankarg(L, t, 2, "Graph.neighbors");
  push_ints(L, t->oto + t->ooff[r], t->ooff[r + 1] - t->ooff[r]);
  return 1;
}

static int sources(lua_State *L) {
  mpb_graph *t = check(L, 1, "Graph.sources");
  int r = rankarg(L, t, 2, "Graph.sources");
  push_ints(L, t->ifrom + t->ioff[r], t->ioff[r + 1] - t->ioff[r]);
  return 1;
}

static int degree(lua_State *L) {
  mpb_graph *t = check(L, 1, "Graph.degree");
  int r = rankarg(L, t, 2, "Graph.degree");
  lua_pushinteger(L, t->ooff[r + 1] - t->ooff[r]);
  lua_pushinteger(L, t->ioff[r + 1] - t->ioff[r]);
  return 2;
}

static int weights(lua_State *L) {
  mpb_graph *t = check(L, 1, "Graph.weights");
  int r = rankarg(L, t, 2, "Graph.weights");
  push_nums(L, t->ow + t->ooff[r], t->ooff[r + 1] - t->ooff[r]);
  push_nums(L, t->iw + t->ioff[r], t->ioff[r + 1] - t->ioff[r]);
  return 2;
}

/* Hops (BFS) or, weighted, Dijkstra in O(n^2 + m): no heap, n is a job's ranks. */
static int distance(lua_State *L) {
  const char *fn = "Graph.distance";
  mpb_graph *t = check(L, 1, fn);
  if (t->me >= 0)
    mpb_lay_argerror(L, 1, fn, "a distributed graph knows only rank %d's neighbourhood", t->me);
  int a = rank_at(L, 2, t->nranks, 2, fn, "rank"), b = rank_at(L, 3, t->nranks, 3, fn, "rank");
  int n = t->nranks;
  double *d = lua_newuserdatauv(L, sizeof(double) * (size_t)n + (size_t)n, 0);
  char *done = (char *)(d + n);
  for (int i = 0; i < n; i++) d[i] = HUGE_VAL, done[i] = 0;
  d[a] = 0;
  for (;;) {
    int u = -1;
    for (int i = 0; i < n; i++)
      if (!done[i] && d[i] < HUGE_VAL && (u < 0 || d[i] < d[u])) u = i;
    if (u < 0 || u == b) break;
    done[u] = 1;
    for (int64_t e = t->ooff[u]; e < t->ooff[u + 1]; e++) {
      double nd = d[u] + (t->weighted ? t->ow[e] : 1);
      if (nd < d[t->oto[e]]) d[t->oto[e]] = nd;
    }
  }
  if (d[b] == HUGE_VAL) lua_pushnil(L);
  else push_num(L, d[b]);
  return 1;
}

static int tostr(lua_State *L) {
  mpb_graph *t = check(L, 1, "Graph.__tostring");
  const char *w = t->weighted ? ", weighted" : "";
  if (t->me >= 0)
    lua_pushfstring(L, "mp.Graph distributed, rank %d of %d (%d out, %d in%s)", t->me, t->nranks,
                    (int)t->nout, (int)t->nin, w);
  else
    lua_pushfstring(L, "mp.Graph %d rank%s, %I edge%s%s", t->nranks, t->nranks == 1 ? "" : "s",
                    (LUAI_UACINT)t->nout, t->nout == 1 ? "" : "s", w);
  return 1;
}

static int index_(lua_State *L) {
  mpb_graph *t = check(L, 1, "Graph.__index");
  const char *k = lua_tostring(L, 2);
  if (!k) return 0;
  if (strcmp(k, "nranks") == 0) lua_pushinteger(L, t->nranks);
  else if (strcmp(k, "nedges") == 0 && t->me < 0) lua_pushinteger(L, t->nout);
  else if (strcmp(k, "weighted") == 0) lua_pushboolean(L, t->weighted);
  else if (strcmp(k, "distributed") == 0) lua_pushboolean(L, t->me >= 0);
  else if (strcmp(k, "rank") == 0 && t->me >= 0) lua_pushinteger(L, t->me);
  else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

void mpb_open_graph(lua_State *L) {
  static const luaL_Reg methods[] = {{"neighbors", neighbors}, {"sources", sources},
                                     {"degree", degree}, {"weights", weights},
                                     {"distance", distance}, {NULL, NULL}};
  int mpt = lua_gettop(L);
  static const luaL_Reg meta[] = {{"__tostring", tostr}, {NULL, NULL}};
  mpb_class_begin(L, GRAPH_MT, methods);
  mpb_topo_neighbor_methods(L, lua_gettop(L));
  mpb_class_end(L, index_, meta);
  lua_pushcfunction(L, graph);
  lua_setfield(L, mpt, "graph");
}
