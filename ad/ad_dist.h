/*
** Log densities as single reduce nodes: value = sum_i lpdf(x0[i] | x1[i], ...)
** with every argument a scalar (broadcast) or a vector (ad_arg). Partials of
** a scalar var argument are summed over elements into one entry; a vector
** var argument gets one entry per element. Full normalizing constants are
** included (as Stan's _lpdf/_lpmf). Out-of-support values give -inf or NaN
** as C's math library does; nothing traps.
**
** Argument order (Stan's): normal(y|mu,sigma) student_t(y|nu,mu,sigma)
** cauchy(y|mu,sigma) lognormal(y|mu,sigma) gamma(y|alpha,beta)
** exponential(y|beta) poisson_log(n|alpha) bernoulli_logit(n|alpha)
** binomial_logit(n|N,alpha) beta(y|a,b) neg_binomial_2_log(n|eta,phi)
** normal_lcdf/lccdf(y|mu,sigma) student_t_lccdf(y|nu,mu,sigma), and
** log_mix(theta, lambda1, lambda2). Counts n and N are data: passing vars
** for them is AD_EARG.
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
/* One element: *f, gradient g[nargs], and if h is not NULL the Hessian
** h[k*4 + l] (4-by-4, row-major, first nargs rows/cols used). */
void ad_dist_elem(int dist, const double *x, double *f, double *g, double *h);

#endif
