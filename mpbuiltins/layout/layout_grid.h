/* SPDX-License-Identifier: MIT */
/*
** Process grid factorisation (layout_grid.c): MPI_Dims_create's job, done
** by exhaustive search so that it is never worse on the metric and can weigh
** the dimensions by the domain's extents. Plain C: no Lua, no MPI.
**
** The metric is the halo surface per unit of volume: the sum over axes of
** dims[k] / weight[k]. Splitting a domain of extents N_k over a grid p_k
** gives blocks of N_k / p_k, and the total surface of all blocks is
** prod(N) * sum(p_k / N_k). With every weight 1 it is MPI's perimeter sum
** sum(p_k), which MPI_Dims_create's balanced factors aim at.
*/
#ifndef MPB_LAYOUT_GRID_H
#define MPB_LAYOUT_GRID_H

#include <stdint.h>

/* Factor nranks (>= 1) over nd axes (1..8). dims[k] > 0 on input is fixed,
** 0 is free (as MPI_Dims_create). weight[k] >= 1 (NULL: all 1). Among the
** factorisations with the least cost, the one with the larger extents first
** (lexicographically largest), so that with equal weights the result is
** non-increasing like MPI_Dims_create's. With weights, axes are not cut
** into more parts than their extent when that can be avoided. Returns 0,
** MPB_LAYOUT_EFIXED, MPB_LAYOUT_EGRID or MPB_LAYOUT_EWEIGHT. */
int mpb_grid_factor(int nranks, int nd, const int64_t *weight, int *dims);
/* The same among the grids whose extents divide extent[k] (extents >= 0: a
** zero extent is divided by any axis, every block empty): the default grid
** of an even layout. MPB_LAYOUT_EUNEVEN when none does. */
int mpb_grid_factor_even(int nranks, int nd, const int64_t *extent, int *dims);
/* The metric: sum of dims[k] / weight[k] (weight NULL: sum of dims). */
double mpb_grid_cost(int nd, const int *dims, const int64_t *weight);

#endif
