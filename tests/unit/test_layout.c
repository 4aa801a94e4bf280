/* SPDX-License-Identifier: MIT */
/*
** test_layout.c: the layout core (mpbuiltins/layout/): 1-D blocks, layouts at
** every rank count 1-20 with extents that do not divide, the seed's Gysela
** layouts, errors, printing, and grid factorisation against MPI_Dims_create
** (MPICH 4.0.2's answers, stored below: unit tests do not use MPI).
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "layout/layout_calc.h"
#include "layout/layout_grid.h"

/* ---------------------------------------------------------------- errors */

Test(layout, error_names) {
  cr_assert_str_eq(mpb_layout_err_name(MPB_LAYOUT_OK), "MPB_LAYOUT_OK");
  cr_assert_str_eq(mpb_layout_err_name(MPB_LAYOUT_EUNEVEN), "MPB_LAYOUT_EUNEVEN");
  cr_assert_str_eq(mpb_layout_err_name(12345), "MPB_LAYOUT_UNKNOWN");
  cr_assert(strstr(mpb_layout_strerror(MPB_LAYOUT_EUNEVEN), "balanced"));
  cr_assert_str_eq(mpb_layout_strerror(1), "unknown error");
  cr_assert(MPB_LAYOUT_ENDIM < 0 && MPB_LAYOUT_EWEIGHT < 0);
}

/* ---------------------------------------------------------------- blocks */

/* Blocks tile [0, N) in order; balanced sizes differ by at most 1; the owner
** of each index is the block that holds it. */
static void check_blocks(int64_t N, int P, int balanced) {
  int64_t next = 0, mn = N + 1, mx = -1;
  for (int i = 0; i < P; i++) {
    int64_t lo, len;
    mpb_block(N, P, i, balanced, &lo, &len);
    cr_assert_eq(lo, next, "N=%lld P=%d block %d starts at %lld", (long long)N, P, i, (long long)lo);
    cr_assert_geq(len, 0);
    next = lo + len;
    if (len < mn) mn = len;
    if (len > mx) mx = len;
    for (int64_t g = lo; g < lo + len && N < 100000; g++)
      cr_assert_eq(mpb_block_owner(N, P, balanced, g), i, "N=%lld P=%d g=%lld", (long long)N, P,
                   (long long)g);
  }
  cr_assert_eq(next, N);
  cr_assert_leq(mx - mn, 1);
}

Test(layout, blocks_every_count) {
  for (int P = 1; P <= 20; P++)
    for (int64_t N = 0; N <= 61; N++) {
      check_blocks(N, P, 1);
      if (N % P == 0) check_blocks(N, P, 0);
    }
}

Test(layout, blocks_large_extents) {
  /* N * P would overflow 64 bits: the arithmetic must not */
  int64_t N = ((int64_t)1 << 50) + 12345;
  int P = 2147483647;
  int64_t lo, len;
  mpb_block(N, P, P - 1, 1, &lo, &len);
  cr_assert_eq(lo + len, N);
  cr_assert_eq(mpb_block_owner(N, P, 1, N - 1), P - 1);
  cr_assert_eq(mpb_block_owner(N, P, 1, 0), 0);
  mpb_block(N, P, 1000, 1, &lo, &len);
  cr_assert_eq(mpb_block_owner(N, P, 1, lo), 1000);
  cr_assert_eq(mpb_block_owner(N, P, 1, lo + len - 1), 1000);
  check_blocks(N, 7, 1);
  check_blocks(10, 4, 1); /* 2, 3, 2, 3 (mp.mapper's blocks) */
  mpb_block(10, 4, 1, 1, &lo, &len);
  cr_assert(lo == 2 && len == 3);
}

/* ---------------------------------------------------------------- layouts */

/* Every rank's box tiles the domain: counts add up, every global index has
** one owner whose range holds it, and the local index is inside the local
** shape. */
static void check_layout(const mpb_layout *l) {
  int64_t total = 1, sum = 0;
  for (int k = 0; k < l->ndim; k++) total *= l->extent[k];
  for (int r = 0; r < l->nranks; r++) {
    int c[MPB_LAYOUT_MAXDIM];
    cr_assert_eq(mpb_layout_coords(l, r, c), 0);
    cr_assert_eq(mpb_layout_rank(l, c), r);
    int64_t shape[MPB_LAYOUT_MAXDIM];
    sum += mpb_layout_local_shape(l, r, shape);
  }
  cr_assert_eq(sum, total);
  int64_t g[MPB_LAYOUT_MAXDIM] = {0};
  for (int64_t i = 0; i < total; i++) {
    int64_t rem = i, lidx[MPB_LAYOUT_MAXDIM], lo[MPB_LAYOUT_MAXDIM], len[MPB_LAYOUT_MAXDIM];
    int64_t shape[MPB_LAYOUT_MAXDIM];
    for (int k = 0; k < l->ndim; k++) g[k] = rem % l->extent[k], rem /= l->extent[k];
    int r = mpb_layout_owner(l, g, lidx);
    cr_assert(r >= 0 && r < l->nranks);
    mpb_layout_range(l, r, lo, len);
    mpb_layout_local_shape(l, r, shape);
    for (int k = 0; k < l->ndim; k++) cr_assert(g[k] >= lo[k] && g[k] < lo[k] + len[k]);
    for (int j = 0; j < l->ndim; j++) {
      int k = l->order[j];
      cr_assert_eq(lidx[j], g[k] - lo[k]);
      cr_assert(lidx[j] < shape[j]);
    }
  }
}

Test(layout, every_rank_count_balanced) {
  const int64_t ext2[2] = {17, 10}, ext3[3] = {7, 5, 9};
  for (int P = 1; P <= 20; P++) {
    mpb_layout l;
    int grid[3] = {0, 0, 0}, axis[3] = {0, 1, 2};
    cr_assert_eq(mpb_grid_factor(P, 2, NULL, grid), 0);
    cr_assert_eq(mpb_layout_init(&l, 2, ext2, NULL, 2, grid, axis, NULL, 1), 0, "P=%d", P);
    check_layout(&l);
    /* one dimension split, the other whole */
    int g1[1] = {P}, ax1[2] = {-1, 0};
    cr_assert_eq(mpb_layout_init(&l, 2, ext2, NULL, 1, g1, ax1, NULL, 1), 0);
    check_layout(&l);
    /* 3-D over a 3-D grid, stored in another order */
    int g3[3] = {0, 0, 0}, order[3] = {2, 0, 1};
    cr_assert_eq(mpb_grid_factor(P, 3, NULL, g3), 0);
    cr_assert_eq(mpb_layout_init(&l, 3, ext3, NULL, 3, g3, axis, order, 1), 0, "P=%d", P);
    check_layout(&l);
    /* even: only where it divides */
    int64_t ev[2] = {(int64_t)grid[0] * 3, (int64_t)grid[1] * 2};
    cr_assert_eq(mpb_layout_init(&l, 2, ev, NULL, 2, grid, axis, NULL, 0), 0);
    check_layout(&l);
    if (grid[0] > 1) {
      ev[0] += 1;
      cr_assert_eq(mpb_layout_init(&l, 2, ev, NULL, 2, grid, axis, NULL, 0), MPB_LAYOUT_EUNEVEN);
    }
  }
}

Test(layout, more_ranks_than_points) {
  mpb_layout l;
  int64_t ext[1] = {3};
  int grid[1] = {5}, axis[1] = {0};
  cr_assert_eq(mpb_layout_init(&l, 1, ext, NULL, 1, grid, axis, NULL, 1), 0);
  check_layout(&l);
  int64_t shape[1];
  int empty = 0;
  for (int r = 0; r < 5; r++) empty += mpb_layout_local_shape(&l, r, shape) == 0;
  cr_assert_eq(empty, 2);
}

/* Seed 002: (sp=2, r=4, theta=16, vpar=8, mu=4). */
static const char *const gysela_names[5] = {"sp", "r", "theta", "vpar", "mu"};
static const int64_t gysela_ext[5] = {2, 4, 16, 8, 4};

Test(layout, gysela_16_ranks) {
  mpb_layout pol, col;
  /* poloidal: vpar over axis 1 (8), mu over axis 2 (2); stored (sp, vpar, mu, r, theta) */
  int pg[2] = {8, 2}, pax[5] = {-1, -1, -1, 0, 1}, pord[5] = {0, 3, 4, 1, 2};
  cr_assert_eq(mpb_layout_init(&pol, 5, gysela_ext, gysela_names, 2, pg, pax, pord, 0), 0);
  /* collisional: r over axis 1 (4), theta over axis 2 (4) */
  int cg[2] = {4, 4}, cax[5] = {-1, 0, 1, -1, -1};
  cr_assert_eq(mpb_layout_init(&col, 5, gysela_ext, gysela_names, 2, cg, cax, NULL, 0), 0);
  for (int r = 0; r < 16; r++) {
    int64_t s[5];
    cr_assert_eq(mpb_layout_local_shape(&pol, r, s), 2 * 1 * 2 * 4 * 16);
    cr_assert(s[0] == 2 && s[1] == 1 && s[2] == 2 && s[3] == 4 && s[4] == 16);
    cr_assert_eq(mpb_layout_local_shape(&col, r, s), 2 * 1 * 4 * 8 * 4);
    cr_assert(s[0] == 2 && s[1] == 1 && s[2] == 4 && s[3] == 8 && s[4] == 4);
  }
  check_layout(&pol);
  check_layout(&col);
  char buf[128];
  mpb_layout_format(&pol, "f64", 0, buf, sizeof buf);
  cr_assert_str_eq(buf, "f64[sp=2, vpar=8@1, mu=4@2, r=4, theta=16]");
  mpb_layout_format(&col, "f64", 1, buf, sizeof buf);
  cr_assert_str_eq(buf, "f64[sp=2, r=4@1, theta=16@2, vpar=8, mu=4] over 4x4");
  cr_assert_eq(mpb_layout_find(&pol, "theta"), 2);
  cr_assert_eq(mpb_layout_find(&pol, "nope"), -1);
  /* the owner of (sp, r, theta, vpar, mu) = (1, 3, 9, 5, 2) (0-based) */
  int64_t g[5] = {1, 3, 9, 5, 2}, li[5];
  int r = mpb_layout_owner(&col, g, li);
  int c[2];
  mpb_layout_coords(&col, r, c);
  cr_assert(c[0] == 3 && c[1] == 2, "theta 9 of 16 over 4 is block 2");
  cr_assert(li[0] == 1 && li[1] == 0 && li[2] == 1 && li[3] == 5 && li[4] == 2);
}

Test(layout, gysela_unpermuted_prints_like_the_issue) {
  mpb_layout l;
  int g[2] = {8, 2}, ax[5] = {-1, -1, -1, 0, 1};
  cr_assert_eq(mpb_layout_init(&l, 5, gysela_ext, gysela_names, 2, g, ax, NULL, 0), 0);
  char buf[128];
  int n = mpb_layout_format(&l, "f64", 0, buf, sizeof buf);
  cr_assert_str_eq(buf, "f64[sp=2, r=4, theta=16, vpar=8@1, mu=4@2]");
  cr_assert_eq(n, (int)strlen(buf));
  /* snprintf's contract when the buffer is short */
  char small[10];
  cr_assert_eq(mpb_layout_format(&l, "f64", 0, small, sizeof small), n);
  cr_assert_str_eq(small, "f64[sp=2,");
  cr_assert_eq(mpb_layout_format(&l, NULL, 0, NULL, 0), n - 3);
  int gb[2] = {3, 2};
  cr_assert_eq(mpb_layout_init(&l, 5, gysela_ext, gysela_names, 2, gb, ax, NULL, 1), 0);
  mpb_layout_format(&l, NULL, 1, buf, sizeof buf);
  cr_assert_str_eq(buf, "[sp=2, r=4, theta=16, vpar=8@1, mu=4@2] over 3x2 balanced");
  check_layout(&l);
}

Test(layout, errors) {
  mpb_layout l;
  int64_t e[3] = {4, 4, 4};
  int g[2] = {2, 2}, ax[3] = {0, 1, -1};
  const char *bad[3] = {"a", "2b", "c"}, *dup[3] = {"a", "b", "a"}, *ok[3] = {"a", "b_2", "C"};
  cr_assert_eq(mpb_layout_init(&l, 0, e, NULL, 2, g, ax, NULL, 0), MPB_LAYOUT_ENDIM);
  cr_assert_eq(mpb_layout_init(&l, 9, e, NULL, 2, g, ax, NULL, 0), MPB_LAYOUT_ENDIM);
  cr_assert_eq(mpb_layout_init(&l, 3, e, bad, 2, g, ax, NULL, 0), MPB_LAYOUT_ENAME);
  cr_assert_eq(mpb_layout_init(&l, 3, e, dup, 2, g, ax, NULL, 0), MPB_LAYOUT_ENAME);
  cr_assert_eq(mpb_layout_init(&l, 3, e, ok, 2, g, ax, NULL, 0), 0);
  int64_t neg[3] = {4, -1, 4};
  cr_assert_eq(mpb_layout_init(&l, 3, neg, NULL, 2, g, ax, NULL, 0), MPB_LAYOUT_EEXTENT);
  int g0[2] = {2, 0};
  cr_assert_eq(mpb_layout_init(&l, 3, e, NULL, 2, g0, ax, NULL, 0), MPB_LAYOUT_EGRID);
  cr_assert_eq(mpb_layout_init(&l, 3, e, NULL, 0, g, ax, NULL, 0), MPB_LAYOUT_EGRID);
  int a3[3] = {0, 2, -1}, atw[3] = {0, 0, -1}, aid[3] = {0, -1, -1};
  cr_assert_eq(mpb_layout_init(&l, 3, e, NULL, 2, g, a3, NULL, 0), MPB_LAYOUT_EAXIS);
  cr_assert_eq(mpb_layout_init(&l, 3, e, NULL, 2, g, atw, NULL, 0), MPB_LAYOUT_EAXISTWICE);
  cr_assert_eq(mpb_layout_init(&l, 3, e, NULL, 2, g, aid, NULL, 0), MPB_LAYOUT_EIDLEAXIS);
  int g1[2] = {2, 1};
  cr_assert_eq(mpb_layout_init(&l, 3, e, NULL, 2, g1, aid, NULL, 0), 0, "an idle axis of extent 1 is fine");
  int o1[3] = {0, 0, 1}, o2[3] = {0, 1, 3};
  cr_assert_eq(mpb_layout_init(&l, 3, e, NULL, 2, g, ax, o1, 0), MPB_LAYOUT_EORDER);
  cr_assert_eq(mpb_layout_init(&l, 3, e, NULL, 2, g, ax, o2, 0), MPB_LAYOUT_EORDER);
  cr_assert_eq(mpb_layout_init(&l, 3, e, NULL, 2, g, ax, NULL, 0), 0);
  int64_t lo[3], len[3], gi[3] = {0, 4, 0};
  int c[2] = {2, 0};
  cr_assert_eq(mpb_layout_range(&l, 4, lo, len), MPB_LAYOUT_ERANK);
  cr_assert_eq(mpb_layout_range(&l, -1, lo, len), MPB_LAYOUT_ERANK);
  cr_assert_eq(mpb_layout_local_shape(&l, 4, lo), MPB_LAYOUT_ERANK);
  cr_assert_eq(mpb_layout_rank(&l, c), MPB_LAYOUT_ERANK);
  cr_assert_eq(mpb_layout_owner(&l, gi, NULL), MPB_LAYOUT_EINDEX);
  gi[1] = 3;
  cr_assert_eq(mpb_layout_owner(&l, gi, NULL), 2); /* coords (0, 1) */
}

/* ---------------------------------------------------------------- grid factorisation */

/* MPICH 4.0.2's MPI_Dims_create(P, nd, {0...}) for nd = 2, 3, 4, computed
** once with this program (mpicc, one rank):
**   for each P: int d[4] = {0}; MPI_Dims_create(P, nd, d); print d */
static const struct { int p; int d[3][4]; } mpich[] = {
  {1, {{1, 1, 0, 0}, {1, 1, 1, 0}, {1, 1, 1, 1}}},
  {2, {{2, 1, 0, 0}, {2, 1, 1, 0}, {2, 1, 1, 1}}},
  {3, {{3, 1, 0, 0}, {3, 1, 1, 0}, {3, 1, 1, 1}}},
  {4, {{2, 2, 0, 0}, {2, 2, 1, 0}, {2, 2, 1, 1}}},
  {5, {{5, 1, 0, 0}, {5, 1, 1, 0}, {5, 1, 1, 1}}},
  {6, {{3, 2, 0, 0}, {3, 2, 1, 0}, {3, 2, 1, 1}}},
  {7, {{7, 1, 0, 0}, {7, 1, 1, 0}, {7, 1, 1, 1}}},
  {8, {{4, 2, 0, 0}, {2, 2, 2, 0}, {2, 2, 2, 1}}},
  {9, {{3, 3, 0, 0}, {3, 3, 1, 0}, {3, 3, 1, 1}}},
  {10, {{5, 2, 0, 0}, {5, 2, 1, 0}, {5, 2, 1, 1}}},
  {11, {{11, 1, 0, 0}, {11, 1, 1, 0}, {11, 1, 1, 1}}},
  {12, {{4, 3, 0, 0}, {3, 2, 2, 0}, {3, 2, 2, 1}}},
  {13, {{13, 1, 0, 0}, {13, 1, 1, 0}, {13, 1, 1, 1}}},
  {14, {{7, 2, 0, 0}, {7, 2, 1, 0}, {7, 2, 1, 1}}},
  {15, {{5, 3, 0, 0}, {5, 3, 1, 0}, {5, 3, 1, 1}}},
  {16, {{4, 4, 0, 0}, {4, 2, 2, 0}, {2, 2, 2, 2}}},
  {17, {{17, 1, 0, 0}, {17, 1, 1, 0}, {17, 1, 1, 1}}},
  {18, {{6, 3, 0, 0}, {3, 3, 2, 0}, {3, 3, 2, 1}}},
  {19, {{19, 1, 0, 0}, {19, 1, 1, 0}, {19, 1, 1, 1}}},
  {20, {{5, 4, 0, 0}, {5, 2, 2, 0}, {5, 2, 2, 1}}},
  {21, {{7, 3, 0, 0}, {7, 3, 1, 0}, {7, 3, 1, 1}}},
  {22, {{11, 2, 0, 0}, {11, 2, 1, 0}, {11, 2, 1, 1}}},
  {23, {{23, 1, 0, 0}, {23, 1, 1, 0}, {23, 1, 1, 1}}},
  {24, {{6, 4, 0, 0}, {4, 3, 2, 0}, {3, 2, 2, 2}}},
  {25, {{5, 5, 0, 0}, {5, 5, 1, 0}, {5, 5, 1, 1}}},
  {26, {{13, 2, 0, 0}, {13, 2, 1, 0}, {13, 2, 1, 1}}},
  {27, {{9, 3, 0, 0}, {3, 3, 3, 0}, {3, 3, 3, 1}}},
  {28, {{7, 4, 0, 0}, {7, 2, 2, 0}, {7, 2, 2, 1}}},
  {29, {{29, 1, 0, 0}, {29, 1, 1, 0}, {29, 1, 1, 1}}},
  {30, {{6, 5, 0, 0}, {5, 3, 2, 0}, {5, 3, 2, 1}}},
  {31, {{31, 1, 0, 0}, {31, 1, 1, 0}, {31, 1, 1, 1}}},
  {32, {{8, 4, 0, 0}, {4, 4, 2, 0}, {4, 2, 2, 2}}},
  {33, {{11, 3, 0, 0}, {11, 3, 1, 0}, {11, 3, 1, 1}}},
  {34, {{17, 2, 0, 0}, {17, 2, 1, 0}, {17, 2, 1, 1}}},
  {35, {{7, 5, 0, 0}, {7, 5, 1, 0}, {7, 5, 1, 1}}},
  {36, {{6, 6, 0, 0}, {4, 3, 3, 0}, {3, 3, 2, 2}}},
  {37, {{37, 1, 0, 0}, {37, 1, 1, 0}, {37, 1, 1, 1}}},
  {38, {{19, 2, 0, 0}, {19, 2, 1, 0}, {19, 2, 1, 1}}},
  {39, {{13, 3, 0, 0}, {13, 3, 1, 0}, {13, 3, 1, 1}}},
  {40, {{8, 5, 0, 0}, {5, 4, 2, 0}, {5, 2, 2, 2}}},
  {41, {{41, 1, 0, 0}, {41, 1, 1, 0}, {41, 1, 1, 1}}},
  {42, {{7, 6, 0, 0}, {7, 3, 2, 0}, {7, 3, 2, 1}}},
  {43, {{43, 1, 0, 0}, {43, 1, 1, 0}, {43, 1, 1, 1}}},
  {44, {{11, 4, 0, 0}, {11, 2, 2, 0}, {11, 2, 2, 1}}},
  {45, {{9, 5, 0, 0}, {5, 3, 3, 0}, {5, 3, 3, 1}}},
  {46, {{23, 2, 0, 0}, {23, 2, 1, 0}, {23, 2, 1, 1}}},
  {47, {{47, 1, 0, 0}, {47, 1, 1, 0}, {47, 1, 1, 1}}},
  {48, {{8, 6, 0, 0}, {4, 4, 3, 0}, {4, 3, 2, 2}}},
  {49, {{7, 7, 0, 0}, {7, 7, 1, 0}, {7, 7, 1, 1}}},
  {50, {{10, 5, 0, 0}, {5, 5, 2, 0}, {5, 5, 2, 1}}},
  {51, {{17, 3, 0, 0}, {17, 3, 1, 0}, {17, 3, 1, 1}}},
  {52, {{13, 4, 0, 0}, {13, 2, 2, 0}, {13, 2, 2, 1}}},
  {53, {{53, 1, 0, 0}, {53, 1, 1, 0}, {53, 1, 1, 1}}},
  {54, {{9, 6, 0, 0}, {6, 3, 3, 0}, {3, 3, 3, 2}}},
  {55, {{11, 5, 0, 0}, {11, 5, 1, 0}, {11, 5, 1, 1}}},
  {56, {{8, 7, 0, 0}, {7, 4, 2, 0}, {7, 2, 2, 2}}},
  {57, {{19, 3, 0, 0}, {19, 3, 1, 0}, {19, 3, 1, 1}}},
  {58, {{29, 2, 0, 0}, {29, 2, 1, 0}, {29, 2, 1, 1}}},
  {59, {{59, 1, 0, 0}, {59, 1, 1, 0}, {59, 1, 1, 1}}},
  {60, {{10, 6, 0, 0}, {5, 4, 3, 0}, {5, 3, 2, 2}}},
  {61, {{61, 1, 0, 0}, {61, 1, 1, 0}, {61, 1, 1, 1}}},
  {62, {{31, 2, 0, 0}, {31, 2, 1, 0}, {31, 2, 1, 1}}},
  {63, {{9, 7, 0, 0}, {7, 3, 3, 0}, {7, 3, 3, 1}}},
  {64, {{8, 8, 0, 0}, {4, 4, 4, 0}, {4, 4, 2, 2}}},
  {72, {{9, 8, 0, 0}, {6, 4, 3, 0}, {4, 3, 3, 2}}},
  {96, {{12, 8, 0, 0}, {6, 4, 4, 0}, {4, 4, 3, 2}}},
  {100, {{10, 10, 0, 0}, {5, 5, 4, 0}, {5, 5, 2, 2}}},
  {120, {{12, 10, 0, 0}, {6, 5, 4, 0}, {5, 4, 3, 2}}},
  {128, {{16, 8, 0, 0}, {8, 4, 4, 0}, {4, 4, 4, 2}}},
  {144, {{12, 12, 0, 0}, {6, 6, 4, 0}, {4, 4, 3, 3}}},
  {180, {{15, 12, 0, 0}, {6, 6, 5, 0}, {5, 4, 3, 3}}},
  {210, {{15, 14, 0, 0}, {7, 6, 5, 0}, {7, 5, 3, 2}}},
  {256, {{16, 16, 0, 0}, {8, 8, 4, 0}, {4, 4, 4, 4}}},
  {360, {{20, 18, 0, 0}, {10, 6, 6, 0}, {6, 5, 4, 3}}},
  {512, {{32, 16, 0, 0}, {8, 8, 8, 0}, {8, 4, 4, 4}}},
  {720, {{30, 24, 0, 0}, {10, 9, 8, 0}, {6, 6, 5, 4}}},
  {1000, {{40, 25, 0, 0}, {10, 10, 10, 0}, {8, 5, 5, 5}}},
  {1024, {{32, 32, 0, 0}, {16, 8, 8, 0}, {8, 8, 4, 4}}},
  {2310, {{55, 42, 0, 0}, {15, 14, 11, 0}, {11, 7, 6, 5}}},
  {4096, {{64, 64, 0, 0}, {16, 16, 16, 0}, {8, 8, 8, 8}}},
};

/* The least cost over every factorisation, by brute force. */
static double brute(int P, int nd, const int64_t *w, int k, int rem, double cost, int cap) {
  if (k == nd - 1) {
    if (cap && w && rem > w[k]) return 1e300;
    return cost + rem / (w ? (double)w[k] : 1.0);
  }
  double best = 1e300;
  for (int d = 1; d <= rem; d++) {
    if (rem % d || (cap && w && d > w[k])) continue;
    double c = brute(P, nd, w, k + 1, rem / d, cost + d / (w ? (double)w[k] : 1.0), cap);
    if (c < best) best = c;
  }
  return best;
}

Test(grid, never_worse_than_mpi_dims_create) {
  int worse = 0, better = 0, same_dims = 0, n = 0;
  for (size_t i = 0; i < sizeof mpich / sizeof *mpich; i++) {
    for (int nd = 2; nd <= 4; nd++) {
      int d[4] = {0, 0, 0, 0};
      cr_assert_eq(mpb_grid_factor(mpich[i].p, nd, NULL, d), 0);
      int prod = 1;
      for (int k = 0; k < nd; k++) prod *= d[k];
      cr_assert_eq(prod, mpich[i].p);
      for (int k = 1; k < nd; k++) cr_assert_geq(d[k - 1], d[k], "non-increasing like MPI's");
      double ours = mpb_grid_cost(nd, d, NULL), theirs = mpb_grid_cost(nd, mpich[i].d[nd - 2], NULL);
      cr_assert_leq(ours, theirs, "P=%d nd=%d", mpich[i].p, nd);
      worse += ours > theirs;
      better += ours < theirs;
      same_dims += memcmp(d, mpich[i].d[nd - 2], (size_t)nd * sizeof(int)) == 0;
      n++;
    }
  }
  cr_assert_eq(worse, 0);
  cr_log_info("grid: %d cases, %d identical to MPICH, %d with a smaller perimeter sum", n,
              same_dims, better);
}

Test(grid, optimal_by_brute_force_1_to_64) {
  unsigned seed = 12345;
  for (int P = 1; P <= 64; P++)
    for (int nd = 1; nd <= 4; nd++) {
      int64_t w[4];
      for (int k = 0; k < nd; k++) {
        seed = seed * 1103515245u + 12345u;
        w[k] = 1 + (seed >> 16) % 200;
      }
      int d[4] = {0, 0, 0, 0};
      cr_assert_eq(mpb_grid_factor(P, nd, NULL, d), 0);
      cr_assert_float_eq(mpb_grid_cost(nd, d, NULL), brute(P, nd, NULL, 0, P, 0, 0), 1e-9);
      memset(d, 0, sizeof d);
      cr_assert_eq(mpb_grid_factor(P, nd, w, d), 0);
      double capped = brute(P, nd, w, 0, P, 0, 1);
      double want = capped < 1e300 ? capped : brute(P, nd, w, 0, P, 0, 0);
      cr_assert_float_eq(mpb_grid_cost(nd, d, w), want, 1e-9, "P=%d nd=%d", P, nd);
      for (int k = 0; k < nd && capped < 1e300; k++) cr_assert_leq(d[k], w[k]);
    }
}

Test(grid, weighted_by_extents) {
  /* 1000 x 10 on 8 ranks: cut the long side only */
  int d[2] = {0, 0};
  int64_t w[2] = {1000, 10};
  cr_assert_eq(mpb_grid_factor(8, 2, w, d), 0);
  cr_assert(d[0] == 8 && d[1] == 1, "got %dx%d", d[0], d[1]);
  int m[2] = {0, 0};
  mpb_grid_factor(8, 2, NULL, m);
  cr_assert(m[0] == 4 && m[1] == 2);
  cr_assert_lt(mpb_grid_cost(2, d, w), mpb_grid_cost(2, m, w));
  /* 3-D, 1000 x 10 x 10 on 8: not 2x2x2 */
  int d3[3] = {0, 0, 0};
  int64_t w3[3] = {1000, 10, 10};
  cr_assert_eq(mpb_grid_factor(8, 3, w3, d3), 0);
  cr_assert(d3[0] == 8 && d3[1] == 1 && d3[2] == 1);
  /* extents beat a shorter perimeter when they say so; never more parts than points */
  int64_t w4[2] = {3, 1000};
  int d4[2] = {0, 0};
  cr_assert_eq(mpb_grid_factor(12, 2, w4, d4), 0);
  cr_assert(d4[0] <= 3 && d4[0] * d4[1] == 12);
}

/* An even split of a zero extent: any axis divides it (every block empty). */
Test(grid, even_zero_extent) {
  int dims[2] = {0, 0};
  int64_t ext[2] = {0, 4};
  cr_assert_eq(mpb_grid_factor_even(4, 2, ext, dims), 0);
  cr_assert_eq(dims[0] * dims[1], 4);
  cr_assert_eq(4 % dims[1], 0);
  int one[1] = {0};
  int64_t zero[1] = {0};
  cr_assert_eq(mpb_grid_factor_even(6, 1, zero, one), 0);
  cr_assert_eq(one[0], 6);
  int64_t neg[1] = {-1};
  cr_assert_eq(mpb_grid_factor_even(2, 1, neg, one), MPB_LAYOUT_EWEIGHT);
}

Test(grid, fixed_axes_and_errors) {
  int d[3] = {0, 3, 0};
  cr_assert_eq(mpb_grid_factor(12, 3, NULL, d), 0);
  cr_assert(d[1] == 3 && d[0] * d[2] == 4 && d[0] == 2 && d[2] == 2);
  int e[2] = {5, 0};
  cr_assert_eq(mpb_grid_factor(12, 2, NULL, e), MPB_LAYOUT_EFIXED);
  int f[2] = {3, 4};
  cr_assert_eq(mpb_grid_factor(12, 2, NULL, f), 0);
  int f2[2] = {3, 3};
  cr_assert_eq(mpb_grid_factor(12, 2, NULL, f2), MPB_LAYOUT_EFIXED);
  int g[2] = {0, 0};
  cr_assert_eq(mpb_grid_factor(0, 2, NULL, g), MPB_LAYOUT_EGRID);
  cr_assert_eq(mpb_grid_factor(4, 9, NULL, g), MPB_LAYOUT_EGRID);
  int64_t w0[2] = {0, 3};
  cr_assert_eq(mpb_grid_factor(4, 2, w0, g), MPB_LAYOUT_EWEIGHT);
  int big[2] = {0, 0};
  cr_assert_eq(mpb_grid_factor(2147483646, 2, NULL, big), 0); /* 2 * 3 * 7 * 11 * 31 * 151 * 331 */
  cr_assert_eq((int64_t)big[0] * big[1], 2147483646);
}
