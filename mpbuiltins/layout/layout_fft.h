/* SPDX-License-Identifier: MIT */
/*
** The layouts of a distributed FFT (layout_fft.c): which dimensions are
** transformed where, and the transposes between. Plain C: no Lua, no MPI,
** no FFT library (the plan is arithmetic on layouts, the same on every rank).
**
** A local FFT needs its dimension whole on every rank (not split, or split
** over a grid axis of extent 1: at 1 rank every dimension is whole, and the
** chain is one local transform of them all). The chain starts from
** the input layout, transforms every dimension to transform that is whole
** there (one stage: one multi-dimensional local transform), then hands the
** split of the next dimension to transform over to a dimension that is whole
** and done with (the last in memory order among those the stage just
** transformed, else any whole dimension not to transform), so that it becomes
** whole in turn: a transpose, then the next stage. A pencil decomposition of
** (x, y@1, z@2) gives (x) -> (x@1, y, z@2) -> (x@1, y@2, z); a slab (x, y,
** z@1) gives (x, y) -> (x, y@1, z). Dimensions keep their memory order.
**
** Real to complex (half >= 0): the halved dimension (extent n becomes
** n/2 + 1, FFTW's and NumPy's convention) is transformed first, last of its
** stage's dimensions (FFTW halves the last dimension of a multi-dimensional
** real transform); when it is split in the input layout, a transpose of the
** real data makes it whole first. Splits stay even where the extents divide
** (and the input layout is even), else the layouts are balanced.
*/
#ifndef MPB_LAYOUT_FFT_H
#define MPB_LAYOUT_FFT_H

#include "layout/layout_calc.h"

typedef struct mpb_fft_stage {
  mpb_layout in;                    /* where it transforms: its dims whole on every rank */
  mpb_layout out;                   /* after: the same splits, the halved extent n/2 + 1 */
  int ndims, dims[MPB_LAYOUT_MAXDIM]; /* transformed here (the halved one last) */
  int half;                         /* the halved dimension if this stage has it, else -1 */
} mpb_fft_stage;

typedef struct mpb_fft_chain {
  int pre;                          /* 1: a transpose from the input to st[0].in first */
  int nstage;                       /* 1..ndim; transposes st[s].out -> st[s+1].in between */
  mpb_fft_stage st[MPB_LAYOUT_MAXDIM];
} mpb_fft_chain;

/* The chain transforming dims[0..ndims) of layout in (distinct dimension
** indices, in the order they are named; half: the halved dimension, one of
** them, for real to complex, -1 for complex to complex). Returns 0 or
** MPB_LAYOUT_EFFTDIM, _EFFTEMPTY, _EFFTLOCAL (*bad: the dimension concerned). */
int mpb_fft_chain_make(const mpb_layout *in, int ndims, const int *dims, int half,
                       mpb_fft_chain *c, int *bad);

#endif
