/* SPDX-License-Identifier: MIT */
/*
** Walking strided n-dimensional arrays in C (array_iter.c): the one loop nest
** behind element-wise math, copies, reductions and packing. No Lua calls, no
** MPI.
**
** An iteration has a shape and up to MPB_ITER_MAXOP operands, each a base
** pointer, an element size and one stride per dimension (in elements; 0
** repeats the same element, which is how scalars and broadcast dimensions
** work). Before running, dimensions of extent 1 are dropped and neighbours
** that every operand walks contiguously are merged, so a contiguous array is
** one run whatever its shape, and an interior view of a 2-D block is one run
** per column. The run function sees one run at a time: the innermost
** dimension, with its length and per-operand strides.
*/
#ifndef MPB_ARRAY_ITER_H
#define MPB_ARRAY_ITER_H

#include <stddef.h>
#include <stdint.h>

#include "array/array.h"

#define MPB_ITER_MAXOP 20

/* One run: n elements; operand k's first element is at p[k], its next ones
** st[k] elements further each. Returns 0, or a nonzero code that stops the
** walk (mpb_iter_run returns it). */
typedef int (*mpb_run_fn)(void *ctx, char *const *p, const int64_t *st, int64_t n);

typedef struct mpb_iter {
  int nop, ndim;
  int64_t dims[MPB_ARRAY_MAXDIM];
  char *p[MPB_ITER_MAXOP];
  size_t es[MPB_ITER_MAXOP];
  int64_t st[MPB_ITER_MAXOP][MPB_ARRAY_MAXDIM];
} mpb_iter;

/* An iteration over shape dims (ndim 1..MPB_ARRAY_MAXDIM), no operands yet. */
void mpb_iter_init(mpb_iter *it, int ndim, const int64_t *dims);
/* Add array a, broadcast to the iteration's shape: each of a's dimensions is
** 1 or the iteration's extent, and a has at most the iteration's ndim (the
** caller checked with mpb_broadcast). Returns the operand number. */
int mpb_iter_add(mpb_iter *it, const mpb_array *a);
/* Add an operand by its first element, element size and strides (in
** elements, one per dimension of the iteration): a box of an array, with
** no array header to build. */
int mpb_iter_addp(mpb_iter *it, void *data, size_t es, const int64_t *strides);
/* Add one element repeated everywhere (a scalar): stride 0 in every dim. */
int mpb_iter_addscalar(mpb_iter *it, void *elem, size_t es);
/* Simplify (drop extent-1 dims, merge contiguous neighbours) and call fn on
** every run, in column-major order of the shape. Returns 0 or fn's code. */
int mpb_iter_run(mpb_iter *it, mpb_run_fn fn, void *ctx);

/* The broadcast shape of two shapes (Julia's and NumPy's rule, column-major:
** a missing trailing dimension counts as 1; extents must be equal or one of
** them 1). Returns the result's ndim, or -1 if they do not broadcast. */
int mpb_broadcast(int na, const int64_t *da, int nb, const int64_t *db, int64_t *out);

/* Whether shape (na, da) broadcasts to exactly (nd, d). */
int mpb_broadcasts_to(int na, const int64_t *da, int nd, const int64_t *d);

/* How the memory of two arrays relates: MPB_DISJOINT, MPB_SAME (the very
** same elements in the same order: element-wise work in place is safe) or
** MPB_OVERLAP (anything else sharing bytes: copy an input first). */
enum { MPB_DISJOINT, MPB_SAME, MPB_OVERLAP };
int mpb_array_overlap(const mpb_array *a, const mpb_array *b);

/* The run function that copies elements of one size: operand 0 is the
** destination, operand 1 the source (a stride-0 source fills); ctx points to
** the element size (a size_t: 1, 4, 8 or 16). */
int mpb_run_copy(void *ctx, char *const *p, const int64_t *st, int64_t n);
/* Two copies of one shape in one pass, operand 0 from 1 and 2 from 3 (ctx
** as mpb_run_copy's; the destinations must not overlap the other's source):
** strided ones visit the rows they share once, as a C programmer packs a
** block's two edge columns in one loop (a sixth faster than two loops). */
int mpb_run_copy2(void *ctx, char *const *p, const int64_t *st, int64_t n);

#endif
