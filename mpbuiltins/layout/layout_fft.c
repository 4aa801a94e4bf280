/* SPDX-License-Identifier: MIT */
/*
** layout_fft.c: the chain of layouts of a distributed FFT (layout_fft.h).
*/
#include <string.h>

#include "layout/layout_fft.h"

/* l with extents ext and splits axis (same grid, names, memory order):
** even when l is and every split extent divides, else balanced. */
static int relayout(const mpb_layout *l, const int64_t *ext, const int *axis, mpb_layout *out) {
  const char *names[MPB_LAYOUT_MAXDIM];
  int balanced = l->balanced;
  for (int k = 0; k < l->ndim; k++) {
    names[k] = l->name[k];
    if (axis[k] >= 0 && ext[k] % l->grid[axis[k]] != 0) balanced = 1;
  }
  return mpb_layout_init(out, l->ndim, ext, names, l->naxes, l->grid, axis, l->order, balanced);
}

/* Whole on every rank: not split, or split over a grid axis of extent 1. */
static int whole(const mpb_layout *l, int k) { return l->axis[k] < 0 || l->grid[l->axis[k]] == 1; }

/* Hand the split of dimension d over to dimension e (whole in l). */
static int hand_over(const mpb_layout *l, int d, int e, mpb_layout *out) {
  int axis[MPB_LAYOUT_MAXDIM];
  memcpy(axis, l->axis, sizeof axis);
  axis[e] = axis[d];
  axis[d] = -1;
  return relayout(l, l->extent, axis, out);
}

/* The dimension that takes over d's split: whole in l and not still to
** transform; among them the last in memory order of `prefer` (the stage just
** done), else the last in memory order. any: a dimension still to transform
** will do too (before the first stage). -1: none. */
static int partner(const mpb_layout *l, const int *todo, const int *prefer, int any) {
  int best = -1, pbest = -1;
  for (int j = 0; j < l->ndim; j++) {
    int k = l->order[j];
    if (!whole(l, k) || (todo[k] && !any)) continue;
    if (!todo[k] || best < 0 || todo[best]) best = k;
    if (prefer && prefer[k]) pbest = k;
  }
  return pbest >= 0 ? pbest : best;
}

int mpb_fft_chain_make(const mpb_layout *in, int ndims, const int *dims, int half,
                       mpb_fft_chain *c, int *bad) {
  int todo[MPB_LAYOUT_MAXDIM] = {0}, left = ndims;
  memset(c, 0, sizeof *c);
  *bad = -1;
  if (ndims < 1 || ndims > in->ndim) return MPB_LAYOUT_EFFTDIM;
  for (int i = 0; i < ndims; i++) {
    int d = dims[i];
    if (d < 0 || d >= in->ndim || todo[d]) return *bad = d, MPB_LAYOUT_EFFTDIM;
    if (in->extent[d] == 0) return *bad = d, MPB_LAYOUT_EFFTEMPTY;
    todo[d] = 1;
  }
  if (half >= 0 && (half >= in->ndim || !todo[half])) return *bad = half, MPB_LAYOUT_EFFTDIM;
  mpb_layout l = *in;
  /* the first stage needs something whole: the halved dimension, or any */
  int first = half >= 0 ? half : -1;
  if (first < 0) {
    for (int i = 0; i < ndims && first < 0; i++)
      if (whole(in, dims[i])) first = dims[i];
    if (first < 0) first = dims[0];
  }
  if (!whole(&l, first)) {
    int e = partner(&l, todo, NULL, 0);
    if (e < 0) e = partner(&l, todo, NULL, 1);
    if (e < 0) return *bad = first, MPB_LAYOUT_EFFTLOCAL;
    int rc = hand_over(in, first, e, &l);
    if (rc < 0) return rc;
    c->pre = 1;
  }
  while (left > 0) {
    mpb_fft_stage *s = &c->st[c->nstage++];
    int done[MPB_LAYOUT_MAXDIM] = {0};
    s->in = l;
    s->half = -1;
    for (int i = 0; i < ndims; i++) {
      int d = dims[i];
      if (!todo[d] || !whole(&l, d) || d == half) continue;
      s->dims[s->ndims++] = d;
    }
    if (half >= 0 && todo[half]) s->dims[s->ndims++] = s->half = half; /* last: halved */
    for (int i = 0; i < s->ndims; i++) todo[s->dims[i]] = 0, done[s->dims[i]] = 1;
    left -= s->ndims;
    s->out = l;
    if (s->half >= 0) {
      int64_t ext[MPB_LAYOUT_MAXDIM];
      memcpy(ext, l.extent, sizeof ext);
      ext[half] = ext[half] / 2 + 1;
      int rc = relayout(&l, ext, l.axis, &s->out);
      if (rc < 0) return rc;
    }
    if (left == 0) break;
    int d = -1; /* the next to make whole: the first still to do, in the order named */
    for (int i = 0; i < ndims && d < 0; i++)
      if (todo[dims[i]]) d = dims[i];
    int e = partner(&s->out, todo, done, 0);
    if (e < 0) return *bad = d, MPB_LAYOUT_EFFTLOCAL;
    int rc = hand_over(&s->out, d, e, &l);
    if (rc < 0) return rc;
  }
  return MPB_LAYOUT_OK;
}
