/* SPDX-License-Identifier: MIT */
/*
** layout_calc.c: layout arithmetic (layout_calc.h). Every answer is a few
** integer operations per dimension, so any rank can ask about any other
** without communication; that is what lets a transpose plan be made locally.
*/
#include <stdio.h>
#include <string.h>

#include "layout/layout_calc.h"

/* ---------------------------------------------------------------- one dimension */

/* floor(N * i / P) without overflowing: N = q*P + r gives q*i + r*i/P, and
** r*i < P*P fits in 64 bits for any int P. */
static int64_t bstart(int64_t N, int P, int i) {
  int64_t q = N / P, r = N % P;
  return q * i + r * i / P;
}

void mpb_block(int64_t N, int P, int i, int balanced, int64_t *lo, int64_t *len) {
  if (!balanced) {
    *lo = N / P * i;
    *len = N / P;
    return;
  }
  *lo = bstart(N, P, i);
  *len = bstart(N, P, i + 1) - *lo;
}

int mpb_block_owner(int64_t N, int P, int balanced, int64_t g) {
  if (!balanced) return (int)(g / (N / P));
  /* the last block starting at or before g: estimate, then step to it */
  int r = (int)((double)g * P / (double)N);
  if (r >= P) r = P - 1;
  if (r < 0) r = 0;
  while (r > 0 && bstart(N, P, r) > g) r--;
  while (r + 1 < P && bstart(N, P, r + 1) <= g) r++;
  return r;
}

/* ---------------------------------------------------------------- layouts */

static int valid_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n >= MPB_LAYOUT_NAMELEN || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return 0;
  }
  return 1;
}

int mpb_layout_init(mpb_layout *l, int ndim, const int64_t *extent, const char *const *names,
                    int naxes, const int *grid, const int *axis, const int *order, int balanced) {
  memset(l, 0, sizeof *l);
  if (ndim < 1 || ndim > MPB_LAYOUT_MAXDIM) return MPB_LAYOUT_ENDIM;
  if (naxes < 1 || naxes > MPB_LAYOUT_MAXDIM) return MPB_LAYOUT_EGRID;
  l->ndim = ndim;
  l->naxes = naxes;
  l->balanced = balanced != 0;
  int64_t nranks = 1;
  for (int a = 0; a < naxes; a++) {
    if (grid[a] < 1) return MPB_LAYOUT_EGRID;
    l->grid[a] = grid[a];
    nranks *= grid[a];
    if (nranks > INT32_MAX) return MPB_LAYOUT_EGRID;
  }
  l->nranks = (int)nranks;
  int used[MPB_LAYOUT_MAXDIM] = {0}, seen[MPB_LAYOUT_MAXDIM] = {0};
  for (int k = 0; k < ndim; k++) {
    if (extent[k] < 0) return MPB_LAYOUT_EEXTENT;
    l->extent[k] = extent[k];
    if (names) {
      if (!valid_name(names[k])) return MPB_LAYOUT_ENAME;
      strcpy(l->name[k], names[k]);
    } else {
      snprintf(l->name[k], MPB_LAYOUT_NAMELEN, "d%d", k + 1);
    }
    for (int j = 0; j < k; j++)
      if (strcmp(l->name[j], l->name[k]) == 0) return MPB_LAYOUT_ENAME;
    int a = axis ? axis[k] : -1;
    if (a < -1 || a >= naxes) return MPB_LAYOUT_EAXIS;
    if (a >= 0) {
      if (used[a]++) return MPB_LAYOUT_EAXISTWICE;
      if (!l->balanced && extent[k] % l->grid[a] != 0) return MPB_LAYOUT_EUNEVEN;
    }
    l->axis[k] = a;
    int o = order ? order[k] : k;
    if (o < 0 || o >= ndim || seen[o]++) return MPB_LAYOUT_EORDER;
    l->order[k] = o;
  }
  for (int a = 0; a < naxes; a++)
    if (!used[a] && l->grid[a] > 1) return MPB_LAYOUT_EIDLEAXIS;
  return MPB_LAYOUT_OK;
}

int mpb_layout_find(const mpb_layout *l, const char *name) {
  for (int k = 0; k < l->ndim; k++)
    if (strcmp(l->name[k], name) == 0) return k;
  return -1;
}

int mpb_layout_coords(const mpb_layout *l, int rank, int *coords) {
  if (rank < 0 || rank >= l->nranks) return MPB_LAYOUT_ERANK;
  for (int a = 0; a < l->naxes; a++) {
    coords[a] = rank % l->grid[a];
    rank /= l->grid[a];
  }
  return MPB_LAYOUT_OK;
}

int mpb_layout_rank(const mpb_layout *l, const int *coords) {
  int rank = 0;
  for (int a = l->naxes - 1; a >= 0; a--) {
    if (coords[a] < 0 || coords[a] >= l->grid[a]) return MPB_LAYOUT_ERANK;
    rank = rank * l->grid[a] + coords[a];
  }
  return rank;
}

int mpb_layout_range(const mpb_layout *l, int rank, int64_t *lo, int64_t *len) {
  int c[MPB_LAYOUT_MAXDIM];
  if (mpb_layout_coords(l, rank, c) < 0) return MPB_LAYOUT_ERANK;
  for (int k = 0; k < l->ndim; k++) {
    int a = l->axis[k];
    if (a < 0) {
      lo[k] = 0;
      len[k] = l->extent[k];
    } else {
      mpb_block(l->extent[k], l->grid[a], c[a], l->balanced, &lo[k], &len[k]);
    }
  }
  return MPB_LAYOUT_OK;
}

int64_t mpb_layout_local_shape(const mpb_layout *l, int rank, int64_t *shape) {
  int64_t lo[MPB_LAYOUT_MAXDIM], len[MPB_LAYOUT_MAXDIM], n = 1;
  if (mpb_layout_range(l, rank, lo, len) < 0) return MPB_LAYOUT_ERANK;
  for (int j = 0; j < l->ndim; j++) {
    shape[j] = len[l->order[j]];
    n *= shape[j];
  }
  return n;
}

int mpb_layout_owner(const mpb_layout *l, const int64_t *g, int64_t *lidx) {
  int c[MPB_LAYOUT_MAXDIM] = {0};
  int64_t local[MPB_LAYOUT_MAXDIM];
  for (int k = 0; k < l->ndim; k++) {
    if (g[k] < 0 || g[k] >= l->extent[k]) return MPB_LAYOUT_EINDEX;
    int a = l->axis[k];
    local[k] = g[k];
    if (a >= 0) {
      int64_t lo, len;
      c[a] = mpb_block_owner(l->extent[k], l->grid[a], l->balanced, g[k]);
      mpb_block(l->extent[k], l->grid[a], c[a], l->balanced, &lo, &len);
      local[k] = g[k] - lo;
    }
  }
  if (lidx)
    for (int j = 0; j < l->ndim; j++) lidx[j] = local[l->order[j]];
  return mpb_layout_rank(l, c);
}

/* snprintf into buf at *at, keeping the total length needed. */
static void put(char *buf, size_t size, size_t *at, const char *fmt, long long v, const char *s) {
  char tmp[64];
  int n = s ? snprintf(tmp, sizeof tmp, fmt, s) : snprintf(tmp, sizeof tmp, fmt, v);
  for (int i = 0; i < n; i++, (*at)++)
    if (*at + 1 < size) buf[*at] = tmp[i];
  if (size) buf[*at < size ? *at : size - 1] = '\0';
}

int mpb_layout_format(const mpb_layout *l, const char *dtype, int with_grid, char *buf,
                      size_t size) {
  size_t at = 0;
  if (size) buf[0] = '\0';
  if (dtype) put(buf, size, &at, "%s", 0, dtype);
  put(buf, size, &at, "[", 0, NULL);
  for (int j = 0; j < l->ndim; j++) {
    int k = l->order[j];
    put(buf, size, &at, j ? ", %s" : "%s", 0, l->name[k]);
    put(buf, size, &at, "=%lld", (long long)l->extent[k], NULL);
    if (l->axis[k] >= 0) put(buf, size, &at, "@%lld", l->axis[k] + 1, NULL);
  }
  put(buf, size, &at, "]", 0, NULL);
  if (with_grid) {
    for (int a = 0; a < l->naxes; a++) put(buf, size, &at, a ? "x%lld" : " over %lld", l->grid[a], NULL);
    if (l->balanced) put(buf, size, &at, " balanced", 0, NULL);
  }
  return (int)at;
}
