/* SPDX-License-Identifier: MIT */
/*
** layout_box.c: transpose geometry (layout_box.h), interval intersections.
*/
#include <string.h>

#include "layout/layout_box.h"

int mpb_layout_match(const mpb_layout *from, const mpb_layout *to, int *perm, int *bad) {
  *bad = -1;
  if (from->ndim != to->ndim) return MPB_LAYOUT_EMATCH;
  for (int k = 0; k < from->ndim; k++) {
    int j = mpb_layout_find(to, from->name[k]);
    if (j < 0 || to->extent[j] != from->extent[k]) {
      *bad = k;
      return MPB_LAYOUT_EMATCH;
    }
    perm[k] = j;
  }
  if (from->nranks != to->nranks) return MPB_LAYOUT_ENRANKS;
  return MPB_LAYOUT_OK;
}

int64_t mpb_box_meet(int nd, const int64_t *alo, const int64_t *alen, const int64_t *blo,
                     const int64_t *blen, int64_t *lo, int64_t *len) {
  int64_t n = 1;
  for (int k = 0; k < nd; k++) {
    int64_t l = alo[k] > blo[k] ? alo[k] : blo[k];
    int64_t ae = alo[k] + alen[k], be = blo[k] + blen[k];
    int64_t e = ae < be ? ae : be;
    lo[k] = l;
    len[k] = e > l ? e - l : 0;
    n *= len[k];
  }
  return n;
}

/* Rank r's block of `to`, expressed in from's dimension order. */
static void to_block(const mpb_layout *to, const int *perm, int nd, int r, int64_t *lo,
                     int64_t *len) {
  int64_t tlo[MPB_LAYOUT_MAXDIM], tlen[MPB_LAYOUT_MAXDIM];
  mpb_layout_range(to, r, tlo, tlen);
  for (int k = 0; k < nd; k++) {
    lo[k] = tlo[perm[k]];
    len[k] = tlen[perm[k]];
  }
}

int mpb_transpose_boxes(const mpb_layout *from, const mpb_layout *to, const int *perm, int me,
                        int recv, mpb_box *out) {
  int P = from->nranks, nd = from->ndim, n = 0;
  int64_t mlo[MPB_LAYOUT_MAXDIM], mlen[MPB_LAYOUT_MAXDIM]; /* my block */
  if (recv) to_block(to, perm, nd, me, mlo, mlen);
  else mpb_layout_range(from, me, mlo, mlen);
  for (int s = 0; s < P; s++) {
    int peer = recv ? (me - s + P) % P : (me + s) % P;
    int64_t plo[MPB_LAYOUT_MAXDIM], plen[MPB_LAYOUT_MAXDIM];
    if (recv) mpb_layout_range(from, peer, plo, plen);
    else to_block(to, perm, nd, peer, plo, plen);
    mpb_box *b = &out[n];
    memset(b, 0, sizeof *b);
    b->peer = peer;
    b->n = mpb_box_meet(nd, mlo, mlen, plo, plen, b->lo, b->len);
    if (b->n > 0) n++;
  }
  return n;
}
