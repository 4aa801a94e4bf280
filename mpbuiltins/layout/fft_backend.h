/* SPDX-License-Identifier: MIT */
/*
** The local transforms of mp.fft come from a plug-in: a Lua C module that
** sets this table in the registry when it is loaded. mplua's library holds
** the distributed part (layouts, transposes, the order of the stages) and
** links no FFT library; the FFTW plug-in (mpbuiltins/fftw/, the module
** "mplua.fftw") is the only code that links FFTW, which is GPL-2+, and it is
** built only when FFTW is found. No Lua calls, no MPI in this interface.
**
** A plan is FFTW's guru interface: rank transform dimensions and howmany
** loop dimensions, each an extent and the strides (in elements) of the input
** and the output. Real to complex: the last transform dimension has n real
** inputs and n/2 + 1 complex outputs; complex to real the reverse.
*/
#ifndef MPB_FFT_BACKEND_H
#define MPB_FFT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#define MPB_FFT_BACKEND_KEY "mplua.fft_backend" /* a light userdata in the registry */
#define MPB_FFT_BACKEND_VERSION 1

enum { MPB_FFT_C2C, MPB_FFT_R2C, MPB_FFT_C2R };
enum { MPB_FFT_ESTIMATE, MPB_FFT_MEASURE, MPB_FFT_PATIENT }; /* planning effort */

typedef struct mpb_fft_dim {
  int64_t n, is, os;            /* extent, input stride, output stride */
} mpb_fft_dim;

typedef struct mpb_fft_backend {
  int version;                  /* MPB_FFT_BACKEND_VERSION */
  const char *name;             /* "FFTW 3.3.10" */
  /* A plan of kind, in single (float) or double precision, sign -1 forward
  ** or +1 backward (C2C only), on the arrays in and out (the same pointer:
  ** in place); planning may write them (effort above estimate). NULL on
  ** failure, with a message in err. */
  void *(*plan)(int kind, int single, int sign, int rank, const mpb_fft_dim *dims,
                int howmany_rank, const mpb_fft_dim *howmany, void *in, void *out, int effort,
                char *err, size_t errlen);
  /* Run a plan on other arrays of the same layout and in-placeness whose
  ** alignment (below) is that of the arrays it was made with. */
  void (*execute)(void *plan, void *in, void *out);
  void (*destroy)(void *plan);
  /* What the plan needs of an array's address to run on it (FFTW's
  ** alignment_of: 0 when SIMD-aligned). */
  int (*alignment_of)(const void *p, int single);
} mpb_fft_backend;

#endif
