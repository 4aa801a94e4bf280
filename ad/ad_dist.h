/* SPDX-License-Identifier: MIT */
/*
** Log densities as single reduce nodes: value = sum_i lpdf(x0[i] | x1[i], ...)
** with every argument a scalar (broadcast) or a vector (ad_arg). Partials of
** a scalar var argument are summed over elements into one entry; a vector
** var argument gets one entry per element. Full normalizing constants are
** included (as Stan's _lpdf/_lpmf). Out-of-support values give -inf or NaN
** as C's math library does; nothing traps.
**
** Arguments in Stan's order (normal(y | mu, sigma), binomial(n | N, theta),
** pareto(y | y_min, alpha), ...; the list is AD_DIST_OPS in ad_ops.h). Counts
** (n, N) are data: passing vars for them is AD_EARG.
*/
#ifndef AD_DIST_H
#define AD_DIST_H

#include "ad_vec.h"

/* Records the node (or only computes *value, *y = AD_NOVAR, when no
** argument is a var). args has ad_dist_nargs(dist) entries. On AD_ESIZE,
** *bad (if not NULL) is the index of the argument whose length disagrees. */
int ad_dist(ad_tape *t, int dist, const ad_arg *args, double *value, ad_idx *y,
            size_t *bad);
/* Per element: y[i] = f(x0[i], x1[i], ...), *n outputs, contiguous vars from
** *y (one node). When no argument is a var, nothing is recorded, *y =
** AD_NOVAR and the values go to cval (room for the common length, see
** ad_args_length). Errors as ad_dist. */
int ad_dist_each(ad_tape *t, int dist, const ad_arg *args, double *cval, ad_idx *y,
                 size_t *n, size_t *bad);
/* 1 if argument k of dist must be data (a constant). Data arguments that are
** counts must be non-negative integers (bernoulli: 0 or 1; binomial: n <= N):
** ad_dist and ad_dist_each return AD_ECOUNT otherwise, and this finds the
** argument (*bad) and element (*elem) at fault. */
int ad_dist_data_only(int dist, int k);
int ad_dist_check_counts(const ad_tape *t, int dist, const ad_arg *args, size_t n,
                         size_t *bad, size_t *elem);
/* 1 if the Hessian w.r.t. argument k is available (0: the hvp passes
** refuse a node where that argument is a var). */
int ad_dist_has_second(int dist, int k);
/* 1 for the elementwise functions (log_mix, inc_beta): no summed form. */
int ad_dist_is_function(int dist);
/* What the data arguments (counts) must be. */
enum {
  AD_CNT_NONE = 0,
  AD_CNT_NONNEG,  /* argument 0 a non-negative integer */
  AD_CNT_BINARY,  /* argument 0 is 0 or 1 */
  AD_CNT_BOUNDED  /* argument 1 a non-negative integer N, argument 0 in 0..N */
};
/* What argument 0 (and 1) must be: AD_CNT_*. */
int ad_dist_count_kind(int dist);
/* One element: *f, gradient g[nargs], and if h is not NULL the Hessian
** h[k*4 + l] (4-by-4, row-major, first nargs rows/cols used). */
void ad_dist_elem(int dist, const double *x, double *f, double *g, double *h);

#endif
