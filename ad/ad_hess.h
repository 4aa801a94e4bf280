/* SPDX-License-Identifier: MIT */
/*
** Second order over a recorded tape, by forward-over-reverse: one forward
** pass carries K tangent directions, each node's partials get their
** directional derivatives from the node's op (exact second partials), and
** one reverse pass carries the adjoints and their K tangents. The user's
** function is recorded once; H*V for K directions costs one such pass.
*/
#ifndef AD_HESS_H
#define AD_HESS_H

#include "ad_tape.h"

/* Over the innermost region: g[j] = dy/din[j] (g may be NULL) and
** HV[j*K + k] = sum_l d2y/din[j]din[l] V[l*K + k]. The inputs must be leaves.
** AD_ENOSECOND if the region holds a precomputed-gradient node,
** AD_ENOSECOND_OP if it holds an operation without second-order
** information (matrix operations other than matvec, student_t_lccdf in nu). */
int ad_hvp(ad_tape *t, ad_idx y, size_t n, const ad_idx *in, size_t K,
           const double *V, double *g, double *HV);
/* Full Hessian H[j*n + l] (symmetric), by ad_hvp over chunks of directions. */
int ad_hessian(ad_tape *t, ad_idx y, size_t n, const ad_idx *in, double *g,
               double *H);

#endif
