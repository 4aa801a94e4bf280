/* SPDX-License-Identifier: MIT */
/*
** Reordering: slots of a traffic pattern onto processes on nodes and NUMA
** domains (topo_reorder.h has the contract and the method). Costs for n
** slots and e distinct pairs that talk: O(e log e) to build the graph, the
** placements (topo_rpart.c), and per polishing pass the sum over slots of
** the sizes of the domains their neighbours are in, times the degrees.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo_reorder_int.h"

/* ------------------------------------------------------------ the graph */

typedef struct { int j; double w; } entry;

static int by_j(const void *a, const void *b) {
  int x = ((const entry *)a)->j, y = ((const entry *)b)->j;
  return (x > y) - (x < y);
}

static void graph_free(graph *g) {
  free(g->start);
  free(g->adj);
  free(g->w);
  memset(g, 0, sizeof *g);
}

static int graph_build(const mpb_reorder_traffic *t, graph *g) {
  memset(g, 0, sizeof *g);
  int n = t->n;
  g->n = n;
  for (int64_t e = 0; e < t->nedge; e++) {
    int i = t->from[e], j = t->to[e];
    double b = t->bytes ? t->bytes[e] : 1.0;
    if (i < 0 || i >= n || j < 0 || j >= n || !(b >= 0) || !isfinite(b)) return -2;
  }
  g->start = calloc((size_t)n + 1, sizeof *g->start);
  int64_t *fill = calloc((size_t)n + 1, sizeof *fill);
  if (!g->start || !fill) {
    free(fill);
    graph_free(g);
    return -1;
  }
  for (int64_t e = 0; e < t->nedge; e++) {
    int i = t->from[e], j = t->to[e];
    if (i == j || (t->bytes && t->bytes[e] == 0)) continue;
    g->start[i + 1]++;
    g->start[j + 1]++;
  }
  for (int i = 0; i < n; i++) g->start[i + 1] += g->start[i];
  int64_t nnz = g->start[n];
  entry *ent = malloc(sizeof *ent * (size_t)(nnz ? nnz : 1));
  if (!ent) {
    free(fill);
    graph_free(g);
    return -1;
  }
  memcpy(fill, g->start, sizeof *fill * (size_t)(n + 1));
  for (int64_t e = 0; e < t->nedge; e++) {
    int i = t->from[e], j = t->to[e];
    double b = t->bytes ? t->bytes[e] : 1.0;
    if (i == j || b == 0) continue;
    ent[fill[i]++] = (entry){j, b};
    ent[fill[j]++] = (entry){i, b};
  }
  free(fill);
  /* sort each row and merge repeats, compacting in place */
  int64_t out = 0;
  for (int i = 0; i < n; i++) {
    int64_t a = g->start[i], b = g->start[i + 1];
    qsort(ent + a, (size_t)(b - a), sizeof *ent, by_j);
    g->start[i] = out;
    for (int64_t k = a; k < b; k++) {
      if (out > g->start[i] && ent[out - 1].j == ent[k].j) ent[out - 1].w += ent[k].w;
      else ent[out++] = ent[k];
    }
  }
  g->start[n] = out;
  g->adj = malloc(sizeof *g->adj * (size_t)(out ? out : 1));
  g->w = malloc(sizeof *g->w * (size_t)(out ? out : 1));
  if (!g->adj || !g->w) {
    free(ent);
    graph_free(g);
    return -1;
  }
  for (int64_t k = 0; k < out; k++) {
    g->adj[k] = ent[k].j;
    g->w[k] = ent[k].w;
  }
  free(ent);
  for (int i = 0; i < n; i++)
    for (int64_t k = g->start[i]; k < g->start[i + 1]; k++)
      if (g->adj[k] > i) g->total += g->w[k];
  return 0;
}

/* ------------------------------------------------------------ the places */

typedef struct { int a, b, p; } key3;

static int by_key(const void *x, const void *y) {
  const key3 *u = x, *v = y;
  if (u->a != v->a) return (u->a > v->a) - (u->a < v->a);
  if (u->b != v->b) return (u->b > v->b) - (u->b < v->b);
  return (u->p > v->p) - (u->p < v->p);
}

static void places_free(places *pl) {
  free(pl->node_of);
  free(pl->dom_of);
  free(pl->dom_lo);
  free(pl->node_cap);
  free(pl->dom_cap);
  free(pl->dnode);
  memset(pl, 0, sizeof *pl);
}

static int places_make(int n, const int *node, const int *numa, places *pl) {
  memset(pl, 0, sizeof *pl);
  key3 *k = malloc(sizeof *k * (size_t)(n ? n : 1));
  pl->node_of = malloc(sizeof(int) * (size_t)(n ? n : 1));
  pl->dom_of = malloc(sizeof(int) * (size_t)(n ? n : 1));
  pl->dom_lo = calloc((size_t)n + 2, sizeof(int));
  pl->node_cap = calloc((size_t)n + 1, sizeof(int));
  pl->dom_cap = calloc((size_t)n + 1, sizeof(int));
  pl->dnode = calloc((size_t)n + 1, sizeof(int));
  if (!k || !pl->node_of || !pl->dom_of || !pl->dom_lo || !pl->node_cap || !pl->dom_cap ||
      !pl->dnode) {
    free(k);
    places_free(pl);
    return -1;
  }
  for (int p = 0; p < n; p++) k[p] = (key3){node[p], numa ? numa[p] : 0, p};
  qsort(k, (size_t)n, sizeof *k, by_key);
  for (int i = 0; i < n; i++) {
    int newnode = i == 0 || k[i].a != k[i - 1].a;
    int newdom = newnode || k[i].b != k[i - 1].b;
    if (newnode) pl->dom_lo[pl->nnode++] = pl->ndom;
    if (newdom) pl->dnode[pl->ndom++] = pl->nnode - 1;
    pl->node_of[k[i].p] = pl->nnode - 1;
    pl->dom_of[k[i].p] = pl->ndom - 1;
    pl->node_cap[pl->nnode - 1]++;
    pl->dom_cap[pl->ndom - 1]++;
  }
  pl->dom_lo[pl->nnode] = pl->ndom;
  free(k);
  return 0;
}

/* ------------------------------------------------------------- the cost */
/* Slot i in domain dom[i] (proc NULL), or in the domain of process proc[i]
** (dom[p]: process p's). */
static void cost(const graph *g, const places *pl, const int *dom, const int *proc,
                 mpb_reorder_cost *c) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < g->n; i++)
    for (int64_t k = g->start[i]; k < g->start[i + 1]; k++) {
      int j = g->adj[k];
      if (j < i) continue;
      int di = dom[proc ? proc[i] : i], dj = dom[proc ? proc[j] : j];
      if (pl->dnode[di] != pl->dnode[dj]) c->cross_node += g->w[k];
      else if (di != dj) c->cross_numa += g->w[k];
      c->total += g->w[k];
    }
}

/* ------------------------------------------------------------- polish */
/* Pair swaps across domains over the whole machine at once (the bisections
** see one cut at a time): slot u and a slot v of a domain where u has a
** neighbour trade places when that lowers the bytes crossing nodes, or
** keeps them and lowers those crossing NUMA domains. Passes until none
** helps (at most POLISH_PASSES). */
#define POLISH_PASSES 8

static int level(const int *dnode, int a, int b) {
  return a == b ? 0 : dnode[a] == dnode[b] ? 1 : 2;
}

/* The change in (bytes crossing nodes, crossing NUMA) if u goes to domain
** to (its neighbour skip excepted). */
static void delta(const graph *g, const int *dnode, const int *domof, int u,
                  int to, int skip, double *dn, double *dm) {
  int from = domof[u];
  for (int64_t k = g->start[u]; k < g->start[u + 1]; k++) {
    int x = g->adj[k];
    if (x == skip) continue;
    int lb = level(dnode, from, domof[x]), la = level(dnode, to, domof[x]);
    if (lb == la) continue;
    *dn += g->w[k] * ((la == 2) - (lb == 2));
    *dm += g->w[k] * ((la == 1) - (lb == 1));
  }
}

/* (dn, dm) lower than (bn, bm) by more than eps, node bytes first. */
static int lower(double dn, double dm, double bn, double bm, double eps) {
  return dn < bn - eps || (dn <= bn + eps && dm < bm - eps);
}

/* Bytes from each slot to each node and each domain, kept as slots move,
** so that a swap is rated in O(1); NULL tables (too large: many nodes of
** few ranks) rate it from the adjacency (delta). */
typedef struct {
  int nn, nd;
  double *cn, *cd; /* [n][nn], [n][nd] */
} conns;

static void conns_move(const graph *g, const places *pl, conns *c, int u, int from, int to) {
  for (int64_t k = g->start[u]; k < g->start[u + 1]; k++) {
    size_t x = (size_t)g->adj[k];
    c->cd[x * c->nd + from] -= g->w[k], c->cd[x * c->nd + to] += g->w[k];
    c->cn[x * c->nn + pl->dnode[from]] -= g->w[k], c->cn[x * c->nn + pl->dnode[to]] += g->w[k];
  }
}

/* The change in (bytes crossing nodes, crossing NUMA) if u (domain a) and
** v (domain b) trade places; w: bytes between them. */
static void swap_gain(const places *pl, const conns *c, int u, int a, int v, int b, double w,
                      double *dn, double *dm) {
  int na = pl->dnode[a], nb = pl->dnode[b];
  const double *cnu = c->cn + (size_t)u * c->nn, *cnv = c->cn + (size_t)v * c->nn;
  const double *cdu = c->cd + (size_t)u * c->nd, *cdv = c->cd + (size_t)v * c->nd;
  /* crossing nodes: deg - to own node; crossing domains: to own node - to own domain */
  *dn = (cnu[na] - cnu[nb]) + (cnv[nb] - cnv[na]) + (na != nb ? 2 * w : 0);
  *dm = (cnu[nb] - cdu[b] - cnu[na] + cdu[a]) + (cnv[na] - cdv[a] - cnv[nb] + cdv[b]) +
        (na == nb ? 2 * w : 0);
}

static int polish(const graph *g, const places *pl, int *domof, double eps) {
  int n = g->n, nd = pl->ndom;
  size_t sn = (size_t)(n ? n : 1), sd = (size_t)nd + 1;
  const int *dnode = pl->dnode;
  int *off = calloc(sd, sizeof(int)),
      *cur = malloc(sizeof(int) * sd), *stamp = malloc(sizeof(int) * sd),
      *mem = malloc(sizeof(int) * sn), *pos = malloc(sizeof(int) * sn);
  double *wv = calloc(sn, sizeof(double));
  conns c = {pl->nnode, nd, NULL, NULL};
  int rc = -1;
  if (!off || !cur || !stamp || !mem || !pos || !wv) goto done;
  if ((double)n * (pl->nnode + nd) <= (double)(1 << 22)) { /* 32 MiB at most */
    c.cn = calloc(sn * (size_t)pl->nnode, sizeof(double));
    c.cd = calloc(sn * (size_t)nd, sizeof(double));
    if (!c.cn || !c.cd) goto done;
    for (int x = 0; x < n; x++)
      for (int64_t k = g->start[x]; k < g->start[x + 1]; k++) {
        int d = domof[g->adj[k]];
        c.cd[(size_t)x * nd + d] += g->w[k];
        c.cn[(size_t)x * c.nn + dnode[d]] += g->w[k];
      }
  }
  for (int i = 0; i < n; i++) off[domof[i] + 1]++;
  for (int d = 0; d < nd; d++) off[d + 1] += off[d], stamp[d] = -1;
  memcpy(cur, off, sizeof(int) * sd);
  for (int i = 0; i < n; i++) pos[i] = cur[domof[i]]++, mem[pos[i]] = i;
  for (int pass = 0; pass < POLISH_PASSES; pass++) {
    int swaps = 0;
    for (int u = 0; u < n; u++) {
      int a = domof[u], bv = -1, bd = -1;
      double bn = 0, bm = 0;
      for (int64_t k = g->start[u]; k < g->start[u + 1]; k++) wv[g->adj[k]] = g->w[k];
      for (int64_t k = g->start[u]; k < g->start[u + 1]; k++) {
        int d = domof[g->adj[k]];
        if (d == a || stamp[d] == u) continue;
        stamp[d] = u;
        for (int j = off[d]; j < off[d + 1]; j++) {
          int v = mem[j];
          double dn = 0, dm = 0;
          if (c.cn) {
            swap_gain(pl, &c, u, a, v, d, wv[v], &dn, &dm);
          } else {
            delta(g, dnode, domof, u, d, v, &dn, &dm);
            delta(g, dnode, domof, v, a, u, &dn, &dm);
          }
          if (lower(dn, dm, bn, bm, eps)) bn = dn, bm = dm, bv = v, bd = d;
        }
      }
      for (int64_t k = g->start[u]; k < g->start[u + 1]; k++) wv[g->adj[k]] = 0;
      if (bv < 0) continue;
      int pu = pos[u], pv = pos[bv];
      mem[pu] = bv, mem[pv] = u, pos[u] = pv, pos[bv] = pu;
      domof[u] = bd, domof[bv] = a;
      if (c.cn) conns_move(g, pl, &c, u, a, bd), conns_move(g, pl, &c, bv, bd, a);
      swaps++;
    }
    if (!swaps) break;
  }
  rc = 0;
done:
  free(off), free(cur), free(stamp), free(mem), free(pos), free(wv), free(c.cn), free(c.cd);
  return rc;
}

/* --------------------------------------------------------------- the map */
/* Copy t->hint into nodeof if it gives every node as many slots as it has
** processes; 0 if there is none or it does not. */
static int hint_fits(const mpb_reorder_traffic *t, const places *pl, int *nodeof) {
  if (!t->hint) return 0;
  int *cnt = calloc((size_t)pl->nnode, sizeof(int)), ok = cnt != NULL;
  for (int i = 0; ok && i < t->n; i++) {
    int k = t->hint[i];
    ok = k >= 0 && k < pl->nnode && ++cnt[k] <= pl->node_cap[k];
    if (ok) nodeof[i] = k;
  }
  free(cnt);
  return ok;
}

int mpb_reorder_cost_of(const mpb_reorder_traffic *t, const int *node, const int *numa,
                        const int *proc, mpb_reorder_cost *c) {
  graph g;
  places pl;
  int rc = graph_build(t, &g);
  if (rc < 0) return rc;
  if (places_make(t->n, node, numa, &pl) < 0) {
    graph_free(&g);
    return -1;
  }
  cost(&g, &pl, pl.dom_of, proc, c);
  graph_free(&g);
  places_free(&pl);
  return 0;
}

int mpb_reorder_map(const mpb_reorder_traffic *t, const int *node, const int *numa, int *proc,
                    mpb_reorder_cost *before, mpb_reorder_cost *after) {
  int n = t->n;
  graph g;
  places pl;
  work w;
  if (n <= 0) return n < 0 ? -2 : 0;
  memset(&w, 0, sizeof w);
  int rc = graph_build(t, &g);
  if (rc < 0) return rc;
  if (places_make(n, node, numa, &pl) < 0) {
    graph_free(&g);
    return -1;
  }
  size_t sz = (size_t)(n ? n : 1);
  int *S = malloc(sizeof(int) * sz), *nodeof = malloc(sizeof(int) * sz),
      *domof = malloc(sizeof(int) * sz), *next = malloc(sizeof(int) * sz),
      *dom2 = malloc(sizeof(int) * sz);
  char *taken = calloc(sz, 1);
  w.g = &g;
  w.eps = 1e-12 * g.total;
  w.loc = malloc(sizeof(int) * sz);
  w.pref = malloc(sizeof(int) * sz);
  w.side = malloc(sz), w.best_side = malloc(sz), w.locked = malloc(sz);
  w.D = malloc(sizeof(double) * sz), w.conn = malloc(sizeof(double) * sz);
  w.deg = malloc(sizeof(double) * sz), w.wu = calloc(sz, sizeof(double));
  w.moves = malloc(sizeof(int) * sz), w.tmp = malloc(sizeof(int) * sz);
  rc = -1;
  if (!S || !nodeof || !domof || !next || !dom2 || !taken || !w.loc || !w.pref || !w.side ||
      !w.best_side || !w.locked || !w.D || !w.conn || !w.deg || !w.wu || !w.moves || !w.tmp)
    goto done;
  for (int i = 0; i < n; i++) w.loc[i] = -1;
  /* two or three starts, each polished; the best kept (ties: the earlier,
  ** the bisections' first: they lean to the identity) */
  mpb_reorder_cost c1, c2;
  mpb_rpart_place(&w, &pl, S, nodeof, domof, 0);
  if (polish(&g, &pl, domof, w.eps) < 0) goto done;
  cost(&g, &pl, domof, NULL, &c1);
  for (int mode = 1; mode <= 2; mode++) {
    if (mode == 2 && !hint_fits(t, &pl, nodeof)) continue;
    mpb_rpart_place(&w, &pl, S, nodeof, dom2, mode);
    if (polish(&g, &pl, dom2, w.eps) < 0) goto done;
    cost(&g, &pl, dom2, NULL, &c2);
    if (c2.cross_node < c1.cross_node - w.eps ||
        (!(c2.cross_node > c1.cross_node + w.eps) && c2.cross_numa < c1.cross_numa - w.eps)) {
      memcpy(domof, dom2, sizeof(int) * sz);
      c1 = c2;
    }
  }
  /* inside a domain: a slot keeps its own process if it is there; the
  ** others take the free processes in order */
  for (int i = 0; i < n; i++) proc[i] = -1;
  for (int i = 0; i < n; i++)
    if (pl.dom_of[i] == domof[i]) proc[i] = i, taken[i] = 1;
  for (int d = 0; d < pl.ndom; d++) next[d] = 0;
  for (int i = 0; i < n; i++) {
    if (proc[i] >= 0) continue;
    int d = domof[i], p = next[d];
    while (p < n && (taken[p] || pl.dom_of[p] != d)) p++;
    proc[i] = p;
    taken[p] = 1;
    next[d] = p + 1;
  }
  mpb_reorder_cost cb, ca;
  cost(&g, &pl, pl.dom_of, NULL, &cb);
  cost(&g, &pl, pl.dom_of, proc, &ca);
  int better = ca.cross_node < cb.cross_node - w.eps ||
               (!(ca.cross_node > cb.cross_node + w.eps) && ca.cross_numa < cb.cross_numa - w.eps);
  if (!better) {
    for (int i = 0; i < n; i++) proc[i] = i;
    ca = cb;
  }
  if (before) *before = cb;
  if (after) *after = ca;
  rc = better;
done:
  free(S), free(nodeof), free(domof), free(next), free(dom2), free(taken);
  free(w.loc), free(w.pref), free(w.side), free(w.best_side), free(w.locked);
  free(w.D), free(w.conn), free(w.deg), free(w.wu), free(w.moves), free(w.tmp);
  graph_free(&g);
  places_free(&pl);
  return rc;
}
