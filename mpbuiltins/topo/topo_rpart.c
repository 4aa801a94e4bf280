/* SPDX-License-Identifier: MIT */
/*
** Placing slots into domains (topo_reorder_int.h): recursive bisection of
** the node list with Kernighan-Lin pair swaps, and greedy filling. Costs for
** m slots: O(m * c) to grow a side or fill a group of c slots, O(m) per
** Kernighan-Lin step (a pass stops 64 steps after its best prefix).
*/
#include <math.h>
#include <string.h>

#include "topo/topo_reorder_int.h"

#define TOPL 8        /* candidates per side in a Kernighan-Lin step */
#define KL_PASSES 16
#define KL_PATIENCE 64 /* moves past the best prefix before a pass gives up */

/* ------------------------------------------------------------ bisection */

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

/* ---------------------------------------------------------- k-way fill */
/* The other start: groups lo .. hi-1 filled one at a time, the largest
** first (ties: lower id), each from the heaviest free slot, growing by the
** free slot most connected to it (ties: heavier, then lower index). Sees
** every group at once, where a bisection cannot know that a side will be
** cut again (a heavy pair for a node of two, beside two nodes of one). */
static void fill(work *w, const int *S, int m, int lo, int hi, const int *cap, int *grp) {
  const graph *g = w->g;
  char *done = w->locked; /* by group - lo */
  for (int x = 0; x < m; x++) w->loc[S[x]] = x;
  for (int x = 0; x < m; x++) {
    w->side[x] = 0;
    double d = 0;
    for (int64_t k = g->start[S[x]]; k < g->start[S[x] + 1]; k++)
      if (w->loc[g->adj[k]] >= 0) d += g->w[k];
    w->deg[x] = d;
  }
  memset(done, 0, (size_t)(hi - lo));
  for (int round = lo; round < hi; round++) {
    int gr = -1;
    for (int q = lo; q < hi; q++)
      if (!done[q - lo] && (gr < 0 || cap[q] > cap[gr])) gr = q;
    done[gr - lo] = 1;
    for (int x = 0; x < m; x++) w->conn[x] = 0;
    for (int c = 0; c < cap[gr]; c++) {
      int bx = -1;
      for (int x = 0; x < m; x++)
        if (!w->side[x] && (bx < 0 || w->conn[x] > w->conn[bx] ||
                            (w->conn[x] == w->conn[bx] && w->deg[x] > w->deg[bx])))
          bx = x;
      w->side[bx] = 1;
      grp[S[bx]] = gr;
      for (int64_t k = g->start[S[bx]]; k < g->start[S[bx] + 1]; k++) {
        int y = w->loc[g->adj[k]];
        if (y >= 0) w->conn[y] += g->w[k];
      }
    }
  }
  for (int x = 0; x < m; x++) w->loc[S[x]] = -1;
}

/* mpb_rpart_place: modes 0 (bisections), 1 (fill), 2 (nodes given). */
void mpb_rpart_place(work *w, const places *pl, int *S, int *nodeof, int *domof, int mode) {
  int n = w->g->n;
  for (int i = 0; i < n; i++) S[i] = i;
  if (mode == 0) partition(w, S, n, 0, pl->nnode, pl->node_cap, pl->node_of, nodeof);
  else if (mode == 1) fill(w, S, n, 0, pl->nnode, pl->node_cap, nodeof);
  if (mode) { /* S by node, ascending inside each */
    int *at = w->tmp;
    for (int k = 0, o = 0; k < pl->nnode; k++) at[k] = o, o += pl->node_cap[k];
    for (int i = 0; i < n; i++) S[at[nodeof[i]]++] = i;
  }
  for (int off = 0, k = 0; k < pl->nnode; k++) {
    int m = pl->node_cap[k];
    if (mode == 1) fill(w, S + off, m, pl->dom_lo[k], pl->dom_lo[k + 1], pl->dom_cap, domof);
    else partition(w, S + off, m, pl->dom_lo[k], pl->dom_lo[k + 1], pl->dom_cap, pl->dom_of, domof);
    off += m;
  }
}
