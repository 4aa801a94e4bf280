/* SPDX-License-Identifier: MIT */
/*
** Random numbers for Stan's _rng functions (plain C, no Lua). One
** generator: xoshiro256** (Blackman & Vigna) seeded through splitmix64, so a
** state follows from a list of integers (a seed, a chain, a draw) and the
** same integers give the same draws on any rank. The variates are exact
** (no approximations): normals by Box-Muller, gammas by Marsaglia & Tsang,
** Poisson by inversion (small means) and Hormann's PTRS, binomials by
** inversion and Knuth's beta recursion.
**
** Each univariate _rng is an entry of AD_RNG_OPS: its Lua name, its
** argument count, whether it draws integers, and one letter per argument
** saying what the argument must be:
**   r finite real   p positive, finite   n non-negative   u a probability in [0, 1]
**   c a count (non-negative integer)     q positive (+inf allowed)
*/
#ifndef AD_RNG_H
#define AD_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct ad_rng {
  uint64_t s[4];
  double spare; /* Box-Muller's second normal */
  int has_spare;
} ad_rng;

/* The state for the integers key[0..n-1] (each mixed in by splitmix64). */
void ad_rng_seed(ad_rng *r, const int64_t *key, size_t n);
uint64_t ad_rng_next(ad_rng *r);
double ad_rng_uniform(ad_rng *r);        /* in (0, 1) */
double ad_rng_std_normal(ad_rng *r);
double ad_rng_gamma1(ad_rng *r, double a); /* shape a, scale 1 */
double ad_rng_beta1(ad_rng *r, double a, double b);
double ad_rng_poisson1(ad_rng *r, double lambda);
double ad_rng_binomial1(ad_rng *r, double n, double p);

/* X(ENUM, "lua name", number of arguments, integer valued, "argument kinds") */
#define AD_RNG_OPS(X)                                                          \
  X(NORMAL, "normal_rng", 2, 0, "rp") X(STD_NORMAL, "std_normal_rng", 0, 0, "") \
  X(STUDENT_T, "student_t_rng", 3, 0, "prp") X(CAUCHY, "cauchy_rng", 2, 0, "rp") \
  X(DOUBLE_EXPONENTIAL, "double_exponential_rng", 2, 0, "rp")                  \
  X(LOGISTIC, "logistic_rng", 2, 0, "rp") X(GUMBEL, "gumbel_rng", 2, 0, "rp")  \
  X(SKEW_NORMAL, "skew_normal_rng", 3, 0, "rpr")                               \
  X(LOGNORMAL, "lognormal_rng", 2, 0, "rp") X(GAMMA, "gamma_rng", 2, 0, "pp")  \
  X(INV_GAMMA, "inv_gamma_rng", 2, 0, "pp")                                    \
  X(EXPONENTIAL, "exponential_rng", 1, 0, "p")                                 \
  X(WEIBULL, "weibull_rng", 2, 0, "pp") X(FRECHET, "frechet_rng", 2, 0, "pp")  \
  X(PARETO, "pareto_rng", 2, 0, "pp") X(CHI_SQUARE, "chi_square_rng", 1, 0, "p") \
  X(INV_CHI_SQUARE, "inv_chi_square_rng", 1, 0, "p")                           \
  X(BETA, "beta_rng", 2, 0, "pp") X(BETA_PROPORTION, "beta_proportion_rng", 2, 0, "up") \
  X(UNIFORM, "uniform_rng", 2, 0, "rr") X(VON_MISES, "von_mises_rng", 2, 0, "rn") \
  X(POISSON, "poisson_rng", 1, 1, "n") X(POISSON_LOG, "poisson_log_rng", 1, 1, "r") \
  X(BINOMIAL, "binomial_rng", 2, 1, "cu")                                      \
  X(BINOMIAL_LOGIT, "binomial_logit_rng", 2, 1, "cr")                          \
  X(BERNOULLI, "bernoulli_rng", 1, 1, "u")                                     \
  X(BERNOULLI_LOGIT, "bernoulli_logit_rng", 1, 1, "r")                         \
  X(NEG_BINOMIAL, "neg_binomial_rng", 2, 1, "pp")                              \
  X(NEG_BINOMIAL_2, "neg_binomial_2_rng", 2, 1, "pp")                          \
  X(NEG_BINOMIAL_2_LOG, "neg_binomial_2_log_rng", 2, 1, "rp")                  \
  X(BETA_BINOMIAL, "beta_binomial_rng", 3, 1, "cpp")

enum ad_rng_dist {
#define AD_X_(e, s, n, i, k) AD_RNG_##e,
  AD_RNG_OPS(AD_X_)
#undef AD_X_
  AD_RNG_COUNT_
};

const char *ad_rng_name(int d);
int ad_rng_nargs(int d);
int ad_rng_integer(int d);
/* 0, or k + 1 when argument k is out of its domain (and *what says what it
** must be: "positive", "a probability in [0, 1]", ...). */
int ad_rng_check(int d, const double *args, const char **what);
/* One draw of distribution d (arguments checked). */
double ad_rng_draw(ad_rng *r, int d, const double *args);

/* ad_rng_mv.c: multivariate draws into caller's arrays (column-major
** matrices); each returns 0 or an AD_E* code (AD_EARG: a bad argument). */
int ad_rng_dirichlet(ad_rng *r, size_t K, const double *alpha, double *out);
int ad_rng_categorical(ad_rng *r, size_t K, const double *theta, double *out); /* 1..K */
int ad_rng_multinomial(ad_rng *r, size_t K, const double *theta, double N, double *out);
/* mu, out: n; L: n x n lower Cholesky factor (read as lower) */
int ad_rng_multi_normal_cholesky(ad_rng *r, size_t n, const double *mu, const double *L, double *out);
int ad_rng_multi_student_t_cholesky(ad_rng *r, size_t n, double nu, const double *mu, const double *L,
                                    double *out);
int ad_rng_lkj_corr_cholesky(ad_rng *r, size_t K, double eta, double *L);
/* W = L A A' L' (Bartlett), L the Cholesky factor of the scale S; work: 2 n*n */
int ad_rng_wishart_cholesky(ad_rng *r, size_t n, double nu, const double *L, double *W, double *work);

#endif
