/* SPDX-License-Identifier: MIT */
/*
** Element-wise reduction kernels on raw typed-array elements (array_ops.c):
** the C loops of the collectives' named ops. No Lua, no MPI.
*/
#ifndef MPB_ARRAY_OPS_H
#define MPB_ARRAY_OPS_H

#include <stdint.h>

/* Reduction ops, by their Lua names "sum", "prod", ... */
enum { MPB_RED_SUM, MPB_RED_PROD, MPB_RED_MIN, MPB_RED_MAX, MPB_RED_LAND, MPB_RED_LOR,
       MPB_RED_BAND, MPB_RED_BOR, MPB_NRED };
/* Op code from its name, or -1. */
int mpb_red_from_name(const char *s);
const char *mpb_red_name(int op);
/* out[i] = a[i] op b[i], i < n (out may be a or b). Returns -1 when op is not
** defined for dtype (band/bor on floats), else 0. min and max propagate NaN;
** integer sum and prod wrap. */
int mpb_red_apply(int op, int dtype, void *out, const void *a, const void *b, int64_t n);

#endif
