/* SPDX-License-Identifier: MIT */
/*
** What the two files of mp.fft share: the plan ("mp.FFT": fft.c makes it and
** reports it) and its program of operations, which fft_run.c runs, blocking
** or as an "mp.FFTRequest".
**
** A direction (forward, backward) is a list of operations: a local
** transform of a stage (a backend plan) or a transpose between two stages
** (an mp.Transpose of the plan, forward or back). Each reads one place and
** writes another: the two work buffers of the plan (aligned, each as large
** as the largest block of the chain), or the caller's input and output. The
** places are chosen once, when the plan is made: a forward pencil transform
** runs  in -> B0 (x), B0 -> B1 (transpose), B1 -> B1 (y, in place),
** B1 -> B0 (transpose), B0 -> out (z), so the caller's input is only read
** and its output only written, and the local plans were made for exactly
** those places (a caller's array that is strided or not aligned as FFTW
** needs is staged through the free buffer).
*/
#ifndef MPB_FFT_INT_H
#define MPB_FFT_INT_H

#include "array/array.h"
#include "layout/fft_backend.h"
#include "layout/laylib.h"
#include "layout/layout_fft.h"

#define MPB_FFT_MT "mp.FFT"
#define MPB_FFTREQ_MT "mp.FFTRequest"

enum { FFT_B0, FFT_B1, FFT_IN, FFT_OUT };   /* places */
enum { FFT_OP_LOCAL, FFT_OP_TRANSPOSE };

typedef struct fft_op {
  int what, src, dst;              /* FFT_OP_*, places */
  int sdtype, ddtype, nd;          /* the blocks read and written on this rank */
  int64_t sdims[MPB_LAYOUT_MAXDIM], ddims[MPB_LAYOUT_MAXDIM];
  /* a local transform */
  int kind, stage;                 /* MPB_FFT_C2C, _R2C, _C2R; the stage */
  void *plan;                      /* NULL: this rank's block is empty */
  /* a transpose */
  int t, back;                     /* the plan's transpose t (1-based), run back or forward */
} fft_op;

/* user values: 1 communicator, 2 input layout, 3 output layout, 4 the
** transposes (a list), 5 the stages' layouts (a list of {in, out}) */
typedef struct fft_plan {
  const mpb_fft_backend *be;
  int single, r2c, me, nranks, ntrans;
  int ndims, dims[MPB_LAYOUT_MAXDIM];  /* transformed, in the order named */
  mpb_fft_chain ch;
  int nop[2];
  fft_op op[2][2 * MPB_LAYOUT_MAXDIM + 1]; /* [0] forward, [1] backward */
  void *buf[2];
  size_t bufbytes;
  int effort;
} fft_plan;

/* fft_run.c: the methods forward, backward, iforward, ibackward (and the
** request's) into the methods table at idx; the request's metatable. */
void mpb_fft_run_methods(lua_State *L, int idx);

#endif
