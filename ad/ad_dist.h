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
** binomial_logit(n|N,alpha). Counts n and N are data: passing vars for them
** is AD_EARG.
*/
#ifndef AD_DIST_H
#define AD_DIST_H

#include "ad_vec.h"

/* Records the node (or only computes *value, *y = AD_NOVAR, when no
** argument is a var). args has ad_dist_nargs(dist) entries. On AD_ESIZE,
** *bad (if not NULL) is the index of the argument whose length disagrees. */
int ad_dist(ad_tape *t, int dist, const ad_arg *args, double *value, ad_idx *y,
            size_t *bad);
/* 1 if argument k of dist must be data (a constant). */
int ad_dist_data_only(int dist, int k);
/* One element: *f, gradient g[nargs], and if h is not NULL the Hessian
** h[k*4 + l] (4-by-4, row-major, first nargs rows/cols used). */
void ad_dist_elem(int dist, const double *x, double *f, double *g, double *h);

#endif
