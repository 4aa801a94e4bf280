/* SPDX-License-Identifier: MIT */
/*
** The topologies (DESIGN.md section 8): what the files of topo/ share with
** each other and with layout/ (halos on a Cartesian grid), and their openers.
** The plain-C core of reordering is topo_reorder.h.
**
**   cart.c       mp.cart: Cartesian topologies as values
**   graph.c      mp.graph: general graph topologies as values (weighted)
**   dist_graph.c mp.dist_graph: a rank's graph neighbourhood from its
**                destinations alone (in-neighbour discovery)
**   neighbor.c   neighbourhood collectives of both, and attaching a topology
**                to a communicator (comm:with_topology, t:attach)
**   reorder.c    mp.machine, mp.reorder (topo_reorder.c maps), comm:reorder
*/
#ifndef MPB_TOPO_H
#define MPB_TOPO_H

#include "layout/laylib.h"

/* A Cartesian topology ("mp.Cart", cart.c): grid extents, periodicity. */
typedef struct mpb_cart {
  int ndim, nranks;
  int dims[MPB_LAYOUT_MAXDIM];
  int periodic[MPB_LAYOUT_MAXDIM];
} mpb_cart;
/* The topology at arg, or NULL. */
mpb_cart *mpb_cart_test(lua_State *L, int arg);
/* The rank disp steps from rank r along axis (0-based), or -1 off the grid. */
int mpb_cart_shift(const mpb_cart *t, int r, int axis, int disp);

/* A graph topology ("mp.Graph", graph.c): out-edges and in-edges of each
** rank as two CSR lists. A full graph (me < 0) knows every rank's lists; a
** distributed one (mp.dist_graph) only rank me's, the others are empty.
** In-lists are ordered by source rank, a source's edges in the order it
** lists them (so the k-th message from one sender fills its k-th slot). */
typedef struct mpb_graph {
  int nranks, me, weighted;
  int64_t nout, nin;           /* edges in the out- and in-lists */
  int64_t *ooff, *ioff;        /* [nranks + 1] offsets */
  int *oto, *ifrom;            /* [nout], [nin] */
  double *ow, *iw;             /* [nout], [nin] (1 when unweighted) */
} mpb_graph;
/* The graph at arg, or NULL. */
mpb_graph *mpb_graph_test(lua_State *L, int arg);
/* Push a new graph value of n ranks with room for nout/nin edges (offsets
** zero, the caller fills them). */
mpb_graph *mpb_graph_push(lua_State *L, int n, int64_t nout, int64_t nin);
/* A list of destinations read into C storage (mpb_graph_dests). */
typedef struct mpb_dests {
  int64_t n;
  int *to;                     /* [n] ranks */
  double *w;                   /* [n] weights (1 where none was given) */
} mpb_dests;
/* Read the list of destinations at idx (ranks, or {to = r, w = x}) of a
** graph of n ranks once, its length and then each item and field (a proxy
** answers once), checked, into d: its arrays live in a userdata pushed on
** the stack. *weighted is set if a weight was given. Errors name arg, fname. */
void mpb_graph_dests(lua_State *L, int idx, int n, mpb_dests *d, int *weighted, int arg,
                     const char *fname);

/* Openers (mp.c walks them): each adds its functions to the mp table on top. */
void mpb_open_cart(lua_State *L);
void mpb_open_graph(lua_State *L);
void mpb_open_dist_graph(lua_State *L);
/* reorder.c: mp.machine, mp.reorder, comm:reorder. */
void mpb_open_reorder(lua_State *L);
/* neighbor.c: comm:with_topology, comm:topology and comm:neighbor_* . */
void mpb_open_neighbor(lua_State *L);
/* neighbor.c: t:neighbor_allgather, t:neighbor_alltoall and t:attach into a
** topology's methods table (cart.c, graph.c). */
void mpb_topo_neighbor_methods(lua_State *L, int methods);

#endif
