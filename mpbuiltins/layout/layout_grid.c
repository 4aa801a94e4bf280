/* SPDX-License-Identifier: MIT */
/*
** layout_grid.c: process grid factorisation by branch and bound over the
** divisors of the rank count (layout_grid.h). A number below 2^31 has at
** most 1536 divisors, and the bound (AM-GM on what remains) cuts the search
** to a few thousand nodes for the grids people use.
*/
#include <math.h>
#include <string.h>

#include "layout/layout_calc.h"
#include "layout/layout_grid.h"

double mpb_grid_cost(int nd, const int *dims, const int64_t *weight) {
  double c = 0;
  for (int k = 0; k < nd; k++) c += (double)dims[k] / (weight ? (double)weight[k] : 1.0);
  return c;
}

typedef struct {
  int nd, nfree, cap;         /* cap: keep dims[k] <= weight[k] */
  int divide;                 /* keep weight[k] % dims[k] == 0 (even splits) */
  int free_[MPB_LAYOUT_MAXDIM];  /* the free axes, in order */
  double w[MPB_LAYOUT_MAXDIM];
  int cur[MPB_LAYOUT_MAXDIM], best[MPB_LAYOUT_MAXDIM];
  double best_cost;
  int found;
  const int64_t *weight;
  int ndiv;
  int div[1600];              /* divisors of the free product, largest first */
} search;

/* Costs equal up to rounding (weights make them sums of fractions). */
static int same_cost(double a, double b) { return fabs(a - b) <= 1e-12 * (fabs(a) + fabs(b)); }

static int lex_greater(const int *a, const int *b, int nd) {
  for (int k = 0; k < nd; k++)
    if (a[k] != b[k]) return a[k] > b[k];
  return 0;
}

/* Assign free axis i onward; rem is what their product must be. */
static void dfs(search *s, int i, int rem, double cost) {
  if (s->found && cost > s->best_cost && !same_cost(cost, s->best_cost)) return;
  int m = s->nfree - i;
  if (m == 0) {
    if (rem != 1) return;
    if (!s->found || (cost < s->best_cost && !same_cost(cost, s->best_cost)) ||
        (same_cost(cost, s->best_cost) && lex_greater(s->cur, s->best, s->nd))) {
      memcpy(s->best, s->cur, sizeof s->best);
      s->best_cost = cost;
      s->found = 1;
    }
    return;
  }
  if (s->found) { /* AM-GM: the remaining terms sum to at least m * (rem / prod w)^(1/m) */
    double pw = 1;
    for (int j = i; j < s->nfree; j++) pw *= s->w[s->free_[j]];
    double lb = m * pow((double)rem / pw, 1.0 / m);
    if (cost + lb > s->best_cost * (1 + 1e-9) + 1e-12) return;
  }
  int k = s->free_[i];
  if (m == 1) {
    if (s->cap && s->weight[k] > 0 && rem > s->weight[k]) return;
    if (s->divide && s->weight[k] % rem) return;
    s->cur[k] = rem;
    dfs(s, i + 1, 1, cost + rem / s->w[k]);
    return;
  }
  for (int j = 0; j < s->ndiv; j++) { /* larger first: finds the lexicographic best early */
    int d = s->div[j];
    if (d > rem || rem % d) continue;
    if (s->cap && s->weight[k] > 0 && d > s->weight[k]) continue;
    if (s->divide && s->weight[k] % d) continue;
    s->cur[k] = d;
    dfs(s, i + 1, rem / d, cost + d / s->w[k]);
  }
}

/* divide: only grids whose extents divide the weights (even layouts). */
static int factor(int nranks, int nd, const int64_t *weight, int *dims, int divide) {
  if (nranks < 1 || nd < 1 || nd > MPB_LAYOUT_MAXDIM) return MPB_LAYOUT_EGRID;
  search s;
  memset(&s, 0, sizeof s);
  s.nd = nd;
  s.weight = weight;
  s.divide = divide;
  int rem = nranks;
  for (int k = 0; k < nd; k++) {
    /* an even split of a zero extent is every block empty: any axis divides it */
    if (weight && weight[k] < (divide ? 0 : 1)) return MPB_LAYOUT_EWEIGHT;
    s.w[k] = weight && weight[k] > 0 ? (double)weight[k] : 1.0;
    if (dims[k] < 0) return MPB_LAYOUT_EGRID;
    if (dims[k] > 0) {
      if (rem % dims[k]) return MPB_LAYOUT_EFIXED;
      rem /= dims[k];
      s.cur[k] = dims[k];
    } else {
      s.free_[s.nfree++] = k;
    }
  }
  if (s.nfree == 0) return rem == 1 ? MPB_LAYOUT_OK : MPB_LAYOUT_EFIXED;
  double fixed = 0;
  for (int k = 0; k < nd; k++)
    if (dims[k] > 0) fixed += dims[k] / s.w[k];
  /* the divisors of rem (at most 1536 below 2^31), by trial division */
  int hi = 0, lo[800], up[800], nlo = 0, nup = 0;
  for (int64_t i = 1; i * i <= rem; i++) {
    if (rem % i) continue;
    lo[nlo++] = (int)i;
    if (i * i != rem) up[nup++] = (int)(rem / i);
  }
  for (int j = 0; j < nup; j++) s.div[hi++] = up[j];
  for (int j = nlo - 1; j >= 0; j--) s.div[hi++] = lo[j];
  s.ndiv = hi;
  s.cap = weight != NULL;
  dfs(&s, 0, rem, fixed);
  if (!s.found && !divide) { /* no grid fits inside the extents: allow empty blocks */
    s.cap = 0;
    dfs(&s, 0, rem, fixed);
  }
  if (!s.found) return MPB_LAYOUT_EUNEVEN;
  memcpy(dims, s.best, (size_t)nd * sizeof *dims);
  return MPB_LAYOUT_OK;
}

int mpb_grid_factor(int nranks, int nd, const int64_t *weight, int *dims) {
  return factor(nranks, nd, weight, dims, 0);
}

int mpb_grid_factor_even(int nranks, int nd, const int64_t *extent, int *dims) {
  if (!extent) return MPB_LAYOUT_EWEIGHT;
  return factor(nranks, nd, extent, dims, 1);
}
