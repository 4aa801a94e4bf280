/* Special functions the ops and their derivatives need (plain C, no tape). */
#ifndef AD_SPECIAL_H
#define AD_SPECIAL_H

double ad_digamma(double x);    /* psi(x); NaN at poles 0, -1, -2, ... */
double ad_trigamma(double x);   /* psi'(x) */
double ad_tetragamma(double x); /* psi''(x) */
double ad_inv_logit(double x);  /* 1/(1+exp(-x)), no overflow */
double ad_log_inv_logit(double x); /* log(inv_logit(x)), stable */
double ad_log1p_exp(double x);  /* log(1+exp(x)), stable */
double ad_log1m_exp(double x);  /* log(1-exp(x)) for x < 0 (NaN above 0, -inf at 0) */
double ad_lbeta(double a, double b); /* log B(a, b) */

/* ad_cdf.c: log of the standard normal cdf and its derivative
** phi(z)/Phi(z), accurate in both tails (asymptotic series below z = -37,
** where erfc underflows). */
double ad_log_Phi(double z, double *dz);
/* Regularized incomplete beta I_x(a, b) by its power series (with the
** symmetry I_x(a,b) = 1 - I_{1-x}(b,a) to keep the series short), and its
** partials in a and b (either pointer may be NULL). a, b > 0, 0 <= x <= 1. */
double ad_inc_beta(double a, double b, double x, double *da, double *db);

#endif
