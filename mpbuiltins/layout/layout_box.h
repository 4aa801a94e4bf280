/* SPDX-License-Identifier: MIT */
/*
** Transpose geometry (layout_box.c): which part of its block each rank sends
** to each other rank when an array moves from one layout to another. Plain
** C: no Lua, no MPI, so any rank computes its whole plan alone.
**
** Every local block of a layout is a box (one index range per dimension),
** so what rank p sends to rank q is the intersection of p's block in the
** source layout and q's block in the destination layout, one interval
** intersection per dimension: O(nranks * ndim) per rank, whatever the two
** layouts are (orthogonal split sets, a change of grid, of balance, of
** memory order). Dimensions are matched by name, so the two layouts may
** list them in different orders (their local memory orders).
*/
#ifndef MPB_LAYOUT_BOX_H
#define MPB_LAYOUT_BOX_H

#include <stdint.h>

#include "layout/layout_calc.h"

/* A box of global indices, in the source layout's dimension order. */
typedef struct mpb_box {
  int peer;                          /* the rank it goes to or comes from */
  int64_t lo[MPB_LAYOUT_MAXDIM];     /* first global index (0-based) */
  int64_t len[MPB_LAYOUT_MAXDIM];
  int64_t n;                         /* elements */
} mpb_box;

/* Match to's dimensions to from's by name: perm[k] is the dimension of to
** called like dimension k of from. Returns 0, MPB_LAYOUT_EMATCH (then *bad is
** the first dimension of from with no equal in to: other name or extent; or
** -1 when the numbers of dimensions differ) or MPB_LAYOUT_ENRANKS. */
int mpb_layout_match(const mpb_layout *from, const mpb_layout *to, int *perm, int *bad);

/* The intersection of two boxes (lo, len per dimension, nd of them) into
** (lo, len); returns its element count (0: empty). */
int64_t mpb_box_meet(int nd, const int64_t *alo, const int64_t *alen, const int64_t *blo,
                     const int64_t *blen, int64_t *lo, int64_t *len);

/* The non-empty boxes rank me sends (recv 0: its block of from meets each
** rank's block of to) or receives (recv 1: each rank's block of from meets
** its block of to), in schedule order: me first (the part that stays), then
** me+1, me+2, ... when sending and me-1, me-2, ... when receiving (MPI's
** pairwise order: at step s rank r sends to r+s while r+s receives from r).
** perm from mpb_layout_match. out has room for from->nranks boxes; returns
** how many were written. */
int mpb_transpose_boxes(const mpb_layout *from, const mpb_layout *to, const int *perm, int me,
                        int recv, mpb_box *out);

#endif
