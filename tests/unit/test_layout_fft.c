/* SPDX-License-Identifier: MIT */
/*
** The chains of layouts of distributed FFTs (layout_fft.h): pencils, slabs,
** one rank, real-to-complex with the halved dimension whole or split, a
** subset of the dimensions, and the errors.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "layout/layout_calc.h"
#include "layout/layout_fft.h"

static const char *const xyz[3] = {"x", "y", "z"};

static mpb_layout make(const int64_t *ext, int naxes, const int *grid, const int *axis,
                       int balanced) {
  mpb_layout l;
  cr_assert_eq(mpb_layout_init(&l, 3, ext, xyz, naxes, grid, axis, NULL, balanced), 0);
  return l;
}

/* "x@1 y z@2": the splits of a layout, to compare chains by eye. */
static const char *splits(const mpb_layout *l, char *buf) {
  char *p = buf;
  for (int k = 0; k < l->ndim; k++) {
    p += sprintf(p, "%s%s", k ? " " : "", l->name[k]);
    if (l->axis[k] >= 0) p += sprintf(p, "@%d", l->axis[k] + 1);
  }
  return buf;
}

Test(layout_fft, pencil) {
  int64_t ext[3] = {8, 6, 4};
  int grid[2] = {2, 2}, axis[3] = {-1, 0, 1}, dims[3] = {0, 1, 2}, bad;
  mpb_layout l = make(ext, 2, grid, axis, 0);
  mpb_fft_chain c;
  char b[64];
  cr_assert_eq(mpb_fft_chain_make(&l, 3, dims, -1, &c, &bad), 0);
  cr_assert_eq(c.pre, 0);
  cr_assert_eq(c.nstage, 3);
  cr_assert_str_eq(splits(&c.st[0].in, b), "x y@1 z@2");
  cr_assert_str_eq(splits(&c.st[1].in, b), "x@1 y z@2");
  cr_assert_str_eq(splits(&c.st[2].in, b), "x@1 y@2 z");
  for (int s = 0; s < 3; s++) cr_assert(c.st[s].ndims == 1 && c.st[s].dims[0] == s);
  cr_assert_eq(c.st[1].in.balanced, 0); /* 8 and 6 divide over 2: even */
}

Test(layout_fft, slab_and_one_rank) {
  int64_t ext[3] = {6, 5, 7};
  int grid[1] = {3}, axis[3] = {-1, -1, 0}, dims[3] = {0, 1, 2}, bad;
  mpb_layout l = make(ext, 1, grid, axis, 1);
  mpb_fft_chain c;
  char b[64];
  cr_assert_eq(mpb_fft_chain_make(&l, 3, dims, -1, &c, &bad), 0);
  cr_assert_eq(c.nstage, 2);
  cr_assert_eq(c.st[0].ndims, 2); /* x and y together: one 2-D local transform */
  cr_assert_str_eq(splits(&c.st[1].in, b), "x y@1 z"); /* the last of the stage takes it */
  cr_assert(c.st[1].in.balanced);                      /* 5 over 3 */
  int one[2] = {1, 1}, ax2[3] = {-1, 0, 1};
  mpb_layout u = make(ext, 2, one, ax2, 0); /* split over axes of extent 1: all whole */
  cr_assert_eq(mpb_fft_chain_make(&u, 3, dims, -1, &c, &bad), 0);
  cr_assert(c.nstage == 1 && c.pre == 0 && c.st[0].ndims == 3);
}

Test(layout_fft, real_to_complex) {
  int64_t ext[3] = {8, 5, 6};
  int grid[2] = {2, 2}, axis[3] = {-1, 0, 1}, dims[3] = {0, 1, 2}, bad;
  mpb_layout l = make(ext, 2, grid, axis, 1);
  mpb_fft_chain c;
  char b[64];
  /* halved z is split: a transpose of the real data first */
  cr_assert_eq(mpb_fft_chain_make(&l, 3, dims, 2, &c, &bad), 0);
  cr_assert_eq(c.pre, 1);
  cr_assert_str_eq(splits(&c.st[0].in, b), "x@2 y@1 z");
  cr_assert(c.st[0].half == 2 && c.st[0].dims[c.st[0].ndims - 1] == 2);
  cr_assert_eq(c.st[0].out.extent[2], 4); /* 6 / 2 + 1 */
  cr_assert_eq(c.st[0].in.extent[2], 6);
  /* halved x is whole: no transpose before, and x goes first */
  int order[3] = {1, 2, 0};
  cr_assert_eq(mpb_fft_chain_make(&l, 3, order, 0, &c, &bad), 0);
  cr_assert_eq(c.pre, 0);
  cr_assert(c.st[0].ndims == 1 && c.st[0].half == 0);
  cr_assert_eq(c.st[0].out.extent[0], 5);
  cr_assert_eq(c.st[2].out.extent[0], 5);
  for (int s = 1; s < c.nstage; s++) cr_assert_eq(c.st[s].half, -1);
}

Test(layout_fft, subsets_and_errors) {
  int64_t ext[3] = {4, 4, 4};
  int grid[2] = {2, 2}, axis[3] = {0, 1, -1}, bad;
  mpb_layout l = make(ext, 2, grid, axis, 0);
  mpb_fft_chain c;
  char b[64];
  int zx[2] = {2, 0};
  cr_assert_eq(mpb_fft_chain_make(&l, 2, zx, -1, &c, &bad), 0);
  cr_assert_str_eq(splits(&c.st[1].in, b), "x y@2 z@1");
  /* x and y both split, both to transform, z whole and to transform: fine (z
  ** takes a split once done); all three split: nothing can take a split */
  int all[3] = {0, 1, 2}, ax3[3] = {0, 1, 2}, g3[3] = {2, 2, 2};
  mpb_layout f = make(ext, 3, g3, ax3, 0);
  cr_assert_eq(mpb_fft_chain_make(&f, 3, all, -1, &c, &bad), MPB_LAYOUT_EFFTLOCAL);
  cr_assert_eq(bad, 0);
  int twice[2] = {0, 0};
  cr_assert_eq(mpb_fft_chain_make(&l, 2, twice, -1, &c, &bad), MPB_LAYOUT_EFFTDIM);
  cr_assert_eq(mpb_fft_chain_make(&l, 0, all, -1, &c, &bad), MPB_LAYOUT_EFFTDIM);
  cr_assert_eq(mpb_fft_chain_make(&l, 2, zx, 1, &c, &bad), MPB_LAYOUT_EFFTDIM); /* half not among */
  int64_t e0[3] = {4, 0, 4};
  mpb_layout z = make(e0, 2, grid, axis, 0);
  cr_assert_eq(mpb_fft_chain_make(&z, 3, all, -1, &c, &bad), MPB_LAYOUT_EFFTEMPTY);
  cr_assert_eq(bad, 1);
}
