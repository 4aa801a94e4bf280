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

/* comm:split's order: by key, then parent rank (stable), for n members whose
** keys come from key(i); checked against the definition pair by pair. */
static void check_by_key(int n, int64_t (*key)(int)) {
  int64_t *kr = malloc(sizeof(int64_t) * 2 * (size_t)(n > 0 ? n : 1));
  char *seen = calloc((size_t)(n > 0 ? n : 1), 1);
  for (int i = 0; i < n; i++) kr[2 * i] = key(i), kr[2 * i + 1] = i;
  mpb_ranks_by_key(kr, n);
  for (int i = 0; i < n; i++) {
    int r = (int)kr[2 * i + 1];
    cr_assert(r >= 0 && r < n && !seen[r], "member %d listed twice or out of range", r);
    seen[r] = 1;
    cr_assert_eq(kr[2 * i], key(r), "member %d carries its own key", r);
    if (i > 0) {
      int64_t k0 = kr[2 * i - 2], k1 = kr[2 * i];
      cr_assert(k0 < k1 || (k0 == k1 && kr[2 * i - 1] < kr[2 * i + 1]),
                "place %d of %d: (key %lld, rank %lld) before (key %lld, rank %lld)", i, n,
                (long long)k0, (long long)kr[2 * i - 1], (long long)k1,
                (long long)kr[2 * i + 1]);
    }
  }
  free(seen);
  free(kr);
}

static int64_t k_rank(int i) { return i; }
static int64_t k_reversed(int i) { return -(int64_t)i; }
static int64_t k_ties(int i) { return (int64_t)(i % 7) * 3; }
static int64_t k_extremes(int i) {
  return i % 3 == 0 ? INT64_MAX : i % 3 == 1 ? INT64_MIN : (int64_t)i - 50;
}
static int64_t k_scrambled(int i) { return (int64_t)((uint64_t)i * 2654435761u % 1000); }

Test(comm_ranks, split_order) {
  int64_t (*keys[])(int) = {k_rank, k_reversed, k_ties, k_extremes, k_scrambled};
  int sizes[] = {0, 1, 2, 3, 5, 8, 20, 1000};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) check_by_key(sizes[s], keys[k]);
}

/* Many members, keys reversed or tied: the sort is O(n log n). */
Test(comm_ranks, split_order_large, .timeout = 60) {
  check_by_key(200000, k_reversed);
  check_by_key(200000, k_ties);
}
