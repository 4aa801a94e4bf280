/* SPDX-License-Identifier: MIT */
/*
** A communicator's members both ways (comm_ranks.h).
*/
#include <stdlib.h>

#include "p2p/comm_ranks.h"

/* Heapsort of order[] by ranks[order[i]]: no allocation, O(n log n) (qsort
** cannot see ranks[] without a global or GNU's qsort_r). */
static void sift_down(const int *ranks, int *order, int root, int end) {
  for (;;) {
    int child = 2 * root + 1;
    if (child >= end) return;
    if (child + 1 < end && ranks[order[child + 1]] > ranks[order[child]]) child++;
    if (ranks[order[root]] >= ranks[order[child]]) return;
    int t = order[root];
    order[root] = order[child];
    order[child] = t;
    root = child;
  }
}

void mpb_ranks_index(const int *ranks, int n, int *order) {
  int sorted = 1;
  for (int i = 0; i < n; i++) {
    order[i] = i;
    if (i > 0 && ranks[i - 1] > ranks[i]) sorted = 0;
  }
  if (sorted) return;
  for (int k = n / 2 - 1; k >= 0; k--) sift_down(ranks, order, k, n);
  for (int end = n - 1; end > 0; end--) {
    int t = order[0];
    order[0] = order[end];
    order[end] = t;
    sift_down(ranks, order, 0, end);
  }
}

static int cmp_key_rank(const void *x, const void *y) {
  const int64_t *a = x, *b = y;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return (a[1] > b[1]) - (a[1] < b[1]);
}

void mpb_ranks_by_key(int64_t *kr, int n) {
  int sorted = 1; /* the usual split: keys in rank order, or none */
  for (int i = 1; i < n && sorted; i++)
    if (cmp_key_rank(&kr[2 * i - 2], &kr[2 * i]) > 0) sorted = 0;
  if (!sorted) qsort(kr, (size_t)n, 2 * sizeof(int64_t), cmp_key_rank);
}
