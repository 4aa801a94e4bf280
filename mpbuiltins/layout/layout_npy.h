/* SPDX-License-Identifier: MIT */
/*
** NumPy's .npy header (layout_npy.c), what mp.save writes in front of a
** distributed array and mp.load reads: plain C, no Lua, no MPI.
**
** Format 1.0: the magic "\x93NUMPY", major 1, minor 0, a little-endian u16
** header length, then the header: a Python dict literal
**     {'descr': '<f8', 'fortran_order': True, 'shape': (8, 6), }
** padded with spaces and ended by '\n' so that the data starts at a
** multiple of 64 bytes (format 2.0: a u32 length, for headers of 64 KiB or
** more). The data follows, raw: little-endian elements, column-major
** (fortran_order True) as mp.Array stores them. A C-order file of shape
** (a, b, c) holds the same bytes as a Fortran-order one of shape (c, b, a).
*/
#ifndef MPB_LAYOUT_NPY_H
#define MPB_LAYOUT_NPY_H

#include <stddef.h>
#include <stdint.h>

#define MPB_NPY_MAXDIM 8

typedef struct mpb_npy {
  int dtype;                        /* mpb_dtype numbering: 0 f64 .. 6 c128 */
  int fortran;                      /* fortran_order */
  int ndim;
  int64_t dims[MPB_NPY_MAXDIM];     /* as written in the header */
  size_t offset;                    /* where the data starts */
} mpb_npy;

/* The '<f8' of a dtype (mpb_dtype numbers), or NULL. */
const char *mpb_npy_descr(int dtype);
/* Write the magic, lengths and header of a Fortran-order array into buf;
** returns the data offset (a multiple of 64), or 0 when buf is too small. */
size_t mpb_npy_header(int dtype, int ndim, const int64_t *dims, char *buf, size_t size);
/* Parse the first len bytes of a file into *h. Returns 0, or a message
** (static text) naming what is wrong; *need: the bytes a complete header
** needs when len is short (then the message says so). */
const char *mpb_npy_parse(const char *buf, size_t len, mpb_npy *h, size_t *need);

#endif
