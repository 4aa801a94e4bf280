/* SPDX-License-Identifier: MIT */
/*
** Reordering as a function (topo_reorder.c; README "Reordering"): map n
** slots of a traffic pattern (the ranks of a topology, or of a traced run)
** onto n processes whose places are known (a node and a NUMA domain each),
** so that few bytes cross nodes and, at equal cost, few cross NUMA domains.
** Plain C: no Lua, no MPI.
**
** Method: two or three placements of the slots into domains, each polished by pair
** swaps across domains (a swap is taken when it lowers the cost), the
** best kept: (1) the slots cut into nodes by recursive bisection of the
** node list (each cut: Kernighan-Lin pair swaps started from the identity's
** cut and from a greedily grown one, the better kept), then each node's
** slots into its NUMA domains the same way; (2) greedy filling, node by node
** (largest first) from the heaviest free slot, by the free slot most
** connected to the node, then the same inside each node for its domains;
** (3) when the caller gives one, its placement into nodes (for a grid: the
** blocks of a process grid over it), then bisections inside each node.
** Inside a domain a slot whose own process is there keeps it, the others
** take the free processes in order. The result is kept only when it is strictly
** better than the identity (first on the bytes crossing nodes, then on those
** crossing NUMA domains); otherwise the identity is returned. Deterministic:
** the same inputs give the same mapping on every rank.
*/
#ifndef MPB_TOPO_REORDER_H
#define MPB_TOPO_REORDER_H

#include <stdint.h>

/* The quality of a placement. Bytes from a slot to itself count nowhere. */
typedef struct mpb_reorder_cost {
  double cross_node;   /* bytes between slots on different nodes */
  double cross_numa;   /* bytes between slots on one node, different NUMA domains */
  double total;        /* all bytes between different slots */
} mpb_reorder_cost;

/* Directed traffic: nedge entries "bytes[e] bytes from slot from[e] to slot
** to[e]" (0 <= from, to < n; bytes >= 0 and finite; repeats add up). */
typedef struct mpb_reorder_traffic {
  int n;
  int64_t nedge;
  const int *from, *to;
  const double *bytes;
  const int *hint;    /* NULL, or a placement to try too: hint[k] the node of slot
                      ** k, nodes numbered 0.. in increasing order of their labels
                      ** (used only if it fills every node exactly) */
} mpb_reorder_traffic;

/* Map the slots of t onto n processes; process p is on node[p] and in NUMA
** domain numa[p] of that node (any integers; numa NULL: one domain per
** node). On success proc[k] is the process that takes slot k (a permutation
** of 0..n-1), and before / after (either may be NULL) the cost of the
** identity and of proc. Returns 1 when proc differs from the identity, 0
** when the identity was kept, -1 out of memory, -2 bad input (an edge out of
** range, a negative or non-finite byte count). */
int mpb_reorder_map(const mpb_reorder_traffic *t, const int *node, const int *numa, int *proc,
                    mpb_reorder_cost *before, mpb_reorder_cost *after);

/* The cost of placing slot k on process proc[k] (proc NULL: the identity).
** Returns 0, -1 out of memory or -2 bad input. */
int mpb_reorder_cost_of(const mpb_reorder_traffic *t, const int *node, const int *numa,
                        const int *proc, mpb_reorder_cost *cost);

#endif
