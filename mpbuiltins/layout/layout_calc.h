/* SPDX-License-Identifier: MIT */
/*
** Layout arithmetic (layout_calc.c): how a global array with named
** dimensions is split over a process grid. Plain C: no Lua, no MPI. The Lua
** binding and the transposes (part B) are built on it.
**
** A layout is a value: the global shape (column-major, like mp.Array), a
** name per dimension, a process grid (extents per axis), which grid axis
** splits which dimension (at most one axis per dimension, one dimension per
** axis), how (even: every block the same size, the extent must divide;
** balanced: block i of P over N is [floor(N*i/P), floor(N*(i+1)/P)), sizes
** differ by at most one, as mp.mapper's blocks), and the order in which the
** dimensions are stored locally (PencilArrays' permutation, Gysela's
** reordered layouts).
**
** Conventions: everything here is 0-based with half-open ranges; ranks are
** numbered column-major over the grid (the first axis varies fastest), as
** elements of an mp.Array. The Lua binding will show 1-based indices.
*/
#ifndef MPB_LAYOUT_CALC_H
#define MPB_LAYOUT_CALC_H

#include <stddef.h>
#include <stdint.h>

#include "layout/layout_error.h"

#define MPB_LAYOUT_MAXDIM 8
#define MPB_LAYOUT_NAMELEN 16

typedef struct mpb_layout {
  int ndim;                                        /* 1..MPB_LAYOUT_MAXDIM */
  int64_t extent[MPB_LAYOUT_MAXDIM];               /* global shape */
  char name[MPB_LAYOUT_MAXDIM][MPB_LAYOUT_NAMELEN];
  int axis[MPB_LAYOUT_MAXDIM];                     /* grid axis splitting dim k, or -1 */
  int order[MPB_LAYOUT_MAXDIM];                    /* order[j]: the dim stored j-th locally */
  int balanced;                                    /* 0: even splits, 1: balanced */
  int naxes;                                       /* grid axes, 1..MPB_LAYOUT_MAXDIM */
  int grid[MPB_LAYOUT_MAXDIM];                     /* grid extents */
  int nranks;                                      /* product of grid */
} mpb_layout;

/* ---- one dimension */

/* Block i (0 <= i < P) of an extent N split over P: its first index and
** length. Even: N / P each (the caller checked that P divides N). */
void mpb_block(int64_t N, int P, int i, int balanced, int64_t *lo, int64_t *len);
/* The block of N over P that holds index g (0 <= g < N). */
int mpb_block_owner(int64_t N, int P, int balanced, int64_t g);

/* ---- layouts */

/* Make a layout. names: NULL for "d1", "d2", ...; axis[k]: the grid axis
** splitting dim k or -1 (NULL: none split); order: NULL for the global order.
** Every grid axis of extent above 1 must split a dimension (no replication).
** Returns 0 or an MPB_LAYOUT_E* code; *l is unusable after an error. */
int mpb_layout_init(mpb_layout *l, int ndim, const int64_t *extent, const char *const *names,
                    int naxes, const int *grid, const int *axis, const int *order, int balanced);
/* The dimension called name, or -1. */
int mpb_layout_find(const mpb_layout *l, const char *name);

/* Grid coordinates of a rank / the rank at coordinates (column-major). */
int mpb_layout_coords(const mpb_layout *l, int rank, int *coords);
int mpb_layout_rank(const mpb_layout *l, const int *coords);

/* The global index range rank holds: lo[k], len[k] per dimension k, in the
** global order. Returns 0 or MPB_LAYOUT_ERANK. */
int mpb_layout_range(const mpb_layout *l, int rank, int64_t *lo, int64_t *len);
/* The local array's shape on rank, in memory order (shape[j] is the length
** of dim order[j]). Returns the element count or MPB_LAYOUT_ERANK. */
int64_t mpb_layout_local_shape(const mpb_layout *l, int rank, int64_t *shape);
/* The rank owning global index g (one per dimension, global order) and, if
** lidx is not NULL, the index there (memory order). Returns the rank or
** MPB_LAYOUT_EINDEX. */
int mpb_layout_owner(const mpb_layout *l, const int64_t *g, int64_t *lidx);

/* Print l as "f64[sp=2, r=4, vpar=8@1, mu=4@2]": the dimensions in memory
** order, each split one followed by @ and its grid axis (1-based); dtype may
** be NULL. With with_grid, " over 8x2" follows, and " balanced" for a
** balanced layout. snprintf's contract: returns the length it needed. */
int mpb_layout_format(const mpb_layout *l, const char *dtype, int with_grid, char *buf,
                      size_t size);

#endif
