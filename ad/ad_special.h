/* Special functions the ops and their derivatives need (plain C, no tape). */
#ifndef AD_SPECIAL_H
#define AD_SPECIAL_H

double ad_digamma(double x);    /* psi(x); NaN at poles 0, -1, -2, ... */
double ad_trigamma(double x);   /* psi'(x) */
double ad_tetragamma(double x); /* psi''(x) */
double ad_inv_logit(double x);  /* 1/(1+exp(-x)), no overflow */
double ad_log_inv_logit(double x); /* log(inv_logit(x)), stable */
double ad_log1p_exp(double x);  /* log(1+exp(x)), stable */

#endif
