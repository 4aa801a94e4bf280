/* SPDX-License-Identifier: MIT */
/*
** What the two files of the reordering core share (topo_reorder.h has the
** contract): the traffic as a symmetric graph, the machine as dense node and
** domain ids, and the scratch of a placement. topo_reorder.c builds them,
** polishes and picks; topo_rpart.c places slots into domains (recursive
** bisection with Kernighan-Lin, or greedy filling).
*/
#ifndef MPB_TOPO_REORDER_INT_H
#define MPB_TOPO_REORDER_INT_H

#include "topo/topo_reorder.h"

/* Symmetric traffic without self loops: row i lists adj[start[i] ..
** start[i+1]) with w = bytes both ways between i and adj. */
typedef struct {
  int n;
  int64_t *start;
  int *adj;
  double *w;
  double total;
} graph;

/* Dense ids for the processes' nodes and (node, NUMA) domains, both sorted
** by value, so that the domains of a node are a contiguous range. */
typedef struct {
  int nnode, ndom;
  int *node_of, *dom_of;  /* [n] per process */
  int *dom_lo;            /* [nnode + 1]: node k's domains are dom_lo[k] .. dom_lo[k+1]-1 */
  int *node_cap, *dom_cap;
  int *dnode;             /* [ndom]: the node of a domain */
} places;

/* Scratch of a placement, all [n]. */
typedef struct {
  const graph *g;
  double eps;
  int *loc;        /* [n] slot -> index in the current set, -1 outside */
  int *pref;       /* [n] side the identity puts slot i's process on (0, 1, -1) */
  char *side, *best_side, *locked;  /* [n] by local index */
  double *D, *conn, *deg, *wu;      /* [n] by local index */
  int *moves, *tmp;                 /* [n] */
} work;

/* Slots into nodes, then each node's slots into its NUMA domains: mode 0
** recursive bisection (leaning to the identity), 1 greedy filling, 2 the
** nodes given in nodeof and bisections inside them. nodeof / domof [slot]:
** the node / domain; S: scratch of n. */
void mpb_rpart_place(work *w, const places *pl, int *S, int *nodeof, int *domof, int mode);

#endif
