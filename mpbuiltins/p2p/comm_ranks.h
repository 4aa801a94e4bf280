/* SPDX-License-Identifier: MIT */
/*
** A communicator's members both ways (plain C, no MPI): ranks[i] is the
** runtime rank of comm rank i, and order[] lists the comm ranks sorted by
** runtime rank, so a runtime rank is found in O(log n) with 2n integers per
** communicator, whatever the size of the job. A communicator whose members
** are a run of consecutive runtime ranks in order (mp.world, most splits of
** it) is answered by the first guess, with no search.
*/
#ifndef MPB_P2P_COMM_RANKS_H
#define MPB_P2P_COMM_RANKS_H

#include <stdint.h>

/* Fill order[0..n) from ranks[0..n) (distinct runtime ranks). */
void mpb_ranks_index(const int *ranks, int n, int *order);

/* The comm rank of runtime rank w, or -1 when w is not a member. */
static inline int mpb_ranks_find(const int *ranks, const int *order, int n, int w) {
  if (n <= 0) return -1;
  unsigned guess = (unsigned)w - (unsigned)ranks[0];
  if (guess < (unsigned)n && ranks[guess] == w) return (int)guess;
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (ranks[order[mid]] < w) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && ranks[order[lo]] == w ? order[lo] : -1;
}

/* comm:split's order (MPI_Comm_split's rule): kr holds n pairs (key,
** parent rank), sorted in place by key, then parent rank; O(n log n). */
void mpb_ranks_by_key(int64_t *kr, int n);

#endif
