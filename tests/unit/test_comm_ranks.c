/* SPDX-License-Identifier: MIT */
/*
** A communicator's members both ways (p2p/comm_ranks.h): every member is
** found at its comm rank and every other runtime rank is not, for runs of
** consecutive ranks, strided and permuted members, with runtime ranks far
** beyond the communicator's size (nothing is sized by the job).
*/
#include <criterion/criterion.h>
#include <stdlib.h>

#include "p2p/comm_ranks.h"

/* Every w in [lo, hi): found at its place in ranks[] when a member, else -1. */
static void check_all(const int *ranks, int n, int lo, int hi) {
  int *order = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  mpb_ranks_index(ranks, n, order);
  for (int i = 1; i < n; i++) cr_assert_lt(ranks[order[i - 1]], ranks[order[i]]);
  for (int w = lo; w < hi; w++) {
    int want = -1;
    for (int i = 0; i < n; i++)
      if (ranks[i] == w) want = i;
    cr_assert_eq(mpb_ranks_find(ranks, order, n, w), want, "rank %d of %d members", w, n);
  }
  free(order);
}

Test(comm_ranks, world_and_runs) {
  int r[64];
  for (int i = 0; i < 64; i++) r[i] = i;
  check_all(r, 64, -3, 70);
  for (int i = 0; i < 10; i++) r[i] = 1000 + i;
  check_all(r, 10, 990, 1020);
  check_all(r, 1, 990, 1020);
}

Test(comm_ranks, strided_and_permuted) {
  int r[50];
  for (int i = 0; i < 50; i++) r[i] = 3 * i + 1; /* a split of every third rank */
  check_all(r, 50, -2, 160);
  for (int i = 0; i < 50; i++) r[i] = (37 * i) % 50 * 7; /* a permutation by key */
  check_all(r, 50, -2, 360);
  for (int i = 0; i < 50; i++) r[i] = 49 - i; /* reversed */
  check_all(r, 50, -2, 55);
  int two[2] = {5, 2};
  check_all(two, 2, 0, 8);
}

Test(comm_ranks, first_guess_never_misleads) {
  /* runtime rank w - ranks[0] indexes a member that is not w: search on */
  int r[4] = {10, 12, 11, 13};
  check_all(r, 4, 8, 16);
  cr_assert_eq(mpb_ranks_find(r, (int[]){0, 2, 1, 3}, 4, 11), 2);
}

Test(comm_ranks, empty) {
  cr_assert_eq(mpb_ranks_find(NULL, NULL, 0, 0), -1);
}
