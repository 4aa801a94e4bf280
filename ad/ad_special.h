/* SPDX-License-Identifier: MIT */
/* Special functions the ops and their derivatives need (plain C, no tape). */
#ifndef AD_SPECIAL_H
#define AD_SPECIAL_H

double ad_digamma(double x);    /* psi(x); NaN at poles 0, -1, -2, ... */
double ad_trigamma(double x);   /* psi'(x) */
double ad_tetragamma(double x); /* psi''(x) */
double ad_pentagamma(double x); /* psi'''(x) */
double ad_inv_logit(double x);  /* 1/(1+exp(-x)), no overflow */
double ad_log_inv_logit(double x); /* log(inv_logit(x)), stable */
double ad_log1p_exp(double x);  /* log(1+exp(x)), stable */
double ad_log1m_exp(double x);  /* log(1-exp(x)) for x < 0 (NaN above 0, -inf at 0) */
double ad_lbeta(double a, double b); /* log B(a, b) */
double ad_lchoose(double n, double k); /* log binomial coefficient (real arguments) */

/* ad_cdf.c: log of the standard normal cdf and its derivative
** phi(z)/Phi(z), accurate in both tails (asymptotic series below z = -37,
** where erfc underflows). */
double ad_log_Phi(double z, double *dz);
/* Regularized incomplete beta I_x(a, b) by its power series (with the
** symmetry I_x(a,b) = 1 - I_{1-x}(b,a) to keep the series short), and its
** partials in a and b (either pointer may be NULL). a, b > 0, 0 <= x <= 1. */
double ad_inc_beta(double a, double b, double x, double *da, double *db);
/* log I_y(a, b) (upper = 0) or log(1 - I_y(a, b)) = log I_(1-y)(b, a)
** (upper = 1), and its partials in y, a, b. */
void ad_log_inc_beta(int upper, double y, double a, double b, double *f, double *gy, double *ga,
                     double *gb);
/* Phi^-1(p), to full double precision. */
double ad_inv_Phi(double p);

/* ad_gamma_inc.c: log P(a, x) (upper = 0) or log Q(a, x) = log(1 - P)
** (upper = 1), the regularized incomplete gamma functions, and the partials
** of that log in a and in x (either pointer may be NULL). a > 0, x >= 0. */
double ad_log_gamma_inc(double a, double x, int upper, double *da, double *dx);

/* ad_bessel.c: log I0(x) and I1(x)/I0(x) (the modified Bessel functions of
** the first kind: d/dx log I0 = I1/I0). */
double ad_log_bessel_i0(double x);
double ad_bessel_i1_i0(double x);

#endif
