/*
** Reordering: slots of a traffic pattern onto processes on nodes and NUMA
** domains (layout_reorder.h has the contract and the method). Costs for n
** slots and e distinct pairs that talk: O(e log e) to build the graph, then
** per bisection of m slots O(m * c) to grow a side of c slots and O(m) per
** Kernighan-Lin step (a pass stops 64 steps after its best prefix).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout_reorder.h"

#define TOPL 8        /* candidates per side in a Kernighan-Lin step */
#define KL_PASSES 16
#define KL_PATIENCE 64 /* moves past the best prefix before a pass gives up */

/* ------------------------------------------------------------ the graph */
/* Symmetric traffic without self loops: row i lists adj[start[i] ..
** start[i+1]) with w = bytes both ways between i and adj. */
typedef struct {
  int n;
  int64_t *start;
  int *adj;
  double *w;
  double total;
} graph;

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
/* Dense ids for the processes' nodes and (node, NUMA) domains, both sorted
** by value, so that the domains of a node are a contiguous range. */
typedef struct {
  int nnode, ndom;
  int *node_of, *dom_of;  /* [n] per process */
  int *dom_lo;            /* [nnode + 1]: node k's domains are dom_lo[k] .. dom_lo[k+1]-1 */
  int *node_cap, *dom_cap;
} places;

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
  if (!k || !pl->node_of || !pl->dom_of || !pl->dom_lo || !pl->node_cap || !pl->dom_cap) {
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
    if (newdom) pl->ndom++;
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
static void cost(const graph *g, const places *pl, const int *proc, mpb_reorder_cost *c) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < g->n; i++)
    for (int64_t k = g->start[i]; k < g->start[i + 1]; k++) {
      int j = g->adj[k];
      if (j < i) continue;
      int pi = proc ? proc[i] : i, pj = proc ? proc[j] : j;
      if (pl->node_of[pi] != pl->node_of[pj]) c->cross_node += g->w[k];
      else if (pl->dom_of[pi] != pl->dom_of[pj]) c->cross_numa += g->w[k];
      c->total += g->w[k];
    }
}

/* ------------------------------------------------------------ bisection */
typedef struct {
  const graph *g;
  double eps;
  int *loc;        /* [n] slot -> index in the current set, -1 outside */
  int *pref;       /* [n] side the identity puts slot i's process on (0, 1, -1) */
  char *side, *best_side, *locked;  /* [n] by local index */
  double *D, *conn, *deg, *wu;      /* [n] by local index */
  int *moves, *tmp;                 /* [n] */
} work;

/* Move local vertex x to the other side, keeping D (external minus
** internal bytes of every vertex of the set) right. */
static void flip(work *w, const int *S, int x) {
  const graph *g = w->g;
  w->side[x] ^= 1;
  w->D[x] = -w->D[x];
  int v = S[x];
  for (int64_t k = g->start[v]; k < g->start[v + 1]; k++) {
    int y = w->loc[g->adj[k]];
    if (y < 0 || y == x) continue;
    w->D[y] += w->side[y] == w->side[x] ? -2 * g->w[k] : 2 * g->w[k];
  }
}

static double cut_of(work *w, const int *S, int m) {
  const graph *g = w->g;
  double cut = 0;
  for (int x = 0; x < m; x++)
    for (int64_t k = g->start[S[x]]; k < g->start[S[x] + 1]; k++) {
      int y = w->loc[g->adj[k]];
      if (y > x && w->side[y] != w->side[x]) cut += g->w[k];
    }
  return cut;
}

/* The (up to) TOPL unlocked vertices of side s with the largest D, best
** first (ties: lower index); returns how many. */
static int top(work *w, int m, int s, int *out) {
  int c = 0;
  for (int x = 0; x < m; x++) {
    if (w->side[x] != s || w->locked[x]) continue;
    if (c == TOPL && w->D[x] <= w->D[out[c - 1]]) continue;
    int i = c < TOPL ? c++ : c - 1;
    while (i > 0 && w->D[out[i - 1]] < w->D[x]) {
      out[i] = out[i - 1];
      i--;
    }
    out[i] = x;
  }
  return c;
}

/* Kernighan-Lin passes on the sides in w->side; returns the cut. */
static double kl(work *w, const int *S, int m, int c1) {
  const graph *g = w->g;
  for (int x = 0; x < m; x++) {
    double d = 0;
    for (int64_t k = g->start[S[x]]; k < g->start[S[x] + 1]; k++) {
      int y = w->loc[g->adj[k]];
      if (y >= 0 && y != x) d += w->side[y] != w->side[x] ? g->w[k] : -g->w[k];
    }
    w->D[x] = d;
  }
  int steps = c1 < m - c1 ? c1 : m - c1;
  for (int pass = 0; pass < KL_PASSES && steps > 0; pass++) {
    memset(w->locked, 0, (size_t)m);
    int nmov = 0, bestk = 0;
    double cum = 0, best = 0;
    for (int s = 0; s < steps; s++) {
      int ta[TOPL], tb[TOPL];
      int na = top(w, m, 0, ta), nb = top(w, m, 1, tb);
      if (!na || !nb) break;
      int ba = -1, bb = -1;
      double bg = -INFINITY;
      for (int i = 0; i < na; i++) {
        int a = ta[i];
        for (int64_t k = g->start[S[a]]; k < g->start[S[a] + 1]; k++) {
          int y = w->loc[g->adj[k]];
          if (y >= 0) w->wu[y] = g->w[k];
        }
        for (int j = 0; j < nb; j++) {
          double gain = w->D[a] + w->D[tb[j]] - 2 * w->wu[tb[j]];
          if (gain > bg) bg = gain, ba = a, bb = tb[j];
        }
        for (int64_t k = g->start[S[a]]; k < g->start[S[a] + 1]; k++) {
          int y = w->loc[g->adj[k]];
          if (y >= 0) w->wu[y] = 0;
        }
      }
      flip(w, S, ba);
      flip(w, S, bb);
      w->locked[ba] = w->locked[bb] = 1;
      w->moves[nmov++] = ba;
      w->moves[nmov++] = bb;
      cum += bg;
      if (cum > best + w->eps) best = cum, bestk = nmov;
      else if (nmov - bestk > 2 * KL_PATIENCE) break;
    }
    while (nmov > bestk) flip(w, S, w->moves[--nmov]);
    if (bestk == 0) break;
  }
  return cut_of(w, S, m);
}

/* Greedy graph growing: side 0 takes c1 slots, each time the one whose
** move adds the least to the cut (ties: lower index). */
static void grow(work *w, const int *S, int m, int c1) {
  const graph *g = w->g;
  for (int x = 0; x < m; x++) {
    w->side[x] = 1;
    w->conn[x] = 0;
    double d = 0;
    for (int64_t k = g->start[S[x]]; k < g->start[S[x] + 1]; k++) {
      int y = w->loc[g->adj[k]];
      if (y >= 0 && y != x) d += g->w[k];
    }
    w->deg[x] = d;
  }
  for (int c = 0; c < c1; c++) {
    int bx = -1;
    double bg = -INFINITY;
    for (int x = 0; x < m; x++) {
      if (w->side[x] != 1) continue;
      double gain = 2 * w->conn[x] - w->deg[x];
      if (gain > bg) bg = gain, bx = x;
    }
    w->side[bx] = 0;
    for (int64_t k = g->start[S[bx]]; k < g->start[S[bx] + 1]; k++) {
      int y = w->loc[g->adj[k]];
      if (y >= 0) w->conn[y] += g->w[k];
    }
  }
}

/* Cut the ascending slots S[0..m) into c1 slots (side 0) and the rest:
** from the identity's cut and from a grown one, each refined by
** Kernighan-Lin, the better (ties: the identity's). S is rewritten: side 0
** first, each side ascending. */
static void bisect(work *w, int *S, int m, int c1) {
  for (int x = 0; x < m; x++) w->loc[S[x]] = x;
  int n0 = 0, n1 = 0;
  for (int x = 0; x < m; x++) {
    int p = w->pref[S[x]];
    w->side[x] = 2;
    if (p == 0 && n0 < c1) w->side[x] = 0, n0++;
    else if (p == 1 && n1 < m - c1) w->side[x] = 1, n1++;
  }
  for (int x = 0; x < m; x++)
    if (w->side[x] == 2) w->side[x] = n0 < c1 ? (n0++, 0) : (n1++, 1);
  double cut_id = kl(w, S, m, c1);
  memcpy(w->best_side, w->side, (size_t)m);
  grow(w, S, m, c1);
  double cut_gr = kl(w, S, m, c1);
  if (!(cut_gr < cut_id - w->eps)) memcpy(w->side, w->best_side, (size_t)m);
  int a = 0, b = c1;
  for (int x = 0; x < m; x++) w->tmp[w->side[x] ? b++ : a++] = S[x];
  for (int x = 0; x < m; x++) {
    w->loc[S[x]] = -1;
    S[x] = w->tmp[x];
  }
}

/* Assign the ascending slots S[0..m) to the groups lo .. hi-1 (capacities
** cap[], adding up to m): grp[slot] = group. gof[p]: the group of process p. */
static void partition(work *w, int *S, int m, int lo, int hi, const int *cap, const int *gof,
                      int *grp) {
  if (hi - lo == 1) {
    for (int x = 0; x < m; x++) grp[S[x]] = lo;
    return;
  }
  int mid = lo + (hi - lo) / 2, c1 = 0;
  for (int k = lo; k < mid; k++) c1 += cap[k];
  for (int x = 0; x < m; x++) {
    int q = gof[S[x]];
    w->pref[S[x]] = q >= lo && q < mid ? 0 : q >= mid && q < hi ? 1 : -1;
  }
  if (c1 > 0 && c1 < m) bisect(w, S, m, c1);
  partition(w, S, c1, lo, mid, cap, gof, grp);
  partition(w, S + c1, m - c1, mid, hi, cap, gof, grp);
}

/* --------------------------------------------------------------- the map */
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
  cost(&g, &pl, proc, c);
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
  memset(&w, 0, sizeof w);
  int rc = graph_build(t, &g);
  if (rc < 0) return rc;
  if (places_make(n, node, numa, &pl) < 0) {
    graph_free(&g);
    return -1;
  }
  size_t sz = (size_t)(n ? n : 1);
  int *S = malloc(sizeof(int) * sz), *nodeof = malloc(sizeof(int) * sz),
      *domof = malloc(sizeof(int) * sz), *next = malloc(sizeof(int) * sz);
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
  if (!S || !nodeof || !domof || !next || !taken || !w.loc || !w.pref || !w.side ||
      !w.best_side || !w.locked || !w.D || !w.conn || !w.deg || !w.wu || !w.moves || !w.tmp)
    goto done;
  for (int i = 0; i < n; i++) S[i] = i, w.loc[i] = -1;
  /* slots into nodes, then each node's slots into its NUMA domains */
  partition(&w, S, n, 0, pl.nnode, pl.node_cap, pl.node_of, nodeof);
  for (int off = 0, k = 0; k < pl.nnode; k++) {
    int m = pl.node_cap[k];
    partition(&w, S + off, m, pl.dom_lo[k], pl.dom_lo[k + 1], pl.dom_cap, pl.dom_of, domof);
    off += m;
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
  cost(&g, &pl, NULL, &cb);
  cost(&g, &pl, proc, &ca);
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
  free(S), free(nodeof), free(domof), free(next), free(taken);
  free(w.loc), free(w.pref), free(w.side), free(w.best_side), free(w.locked);
  free(w.D), free(w.conn), free(w.deg), free(w.wu), free(w.moves), free(w.tmp);
  graph_free(&g);
  places_free(&pl);
  return rc;
}
