/* SPDX-License-Identifier: MIT */
/*
** The operations a tape node can record. Scalar unary and binary operations
** are also used elementwise (one node for a whole vector); the special nodes
** reduce or combine vectors. The op of a node is only needed for second-order
** passes: the first-order sweeps use the precomputed partials alone.
*/
#ifndef AD_OPS_H
#define AD_OPS_H

/* X(ENUM, "lua name") */
#define AD_UNARY_OPS(X)                                                   \
  X(NEG, "neg") X(EXP, "exp") X(LOG, "log") X(LOG1P, "log1p")             \
  X(EXPM1, "expm1") X(SQRT, "sqrt") X(SIN, "sin") X(COS, "cos")           \
  X(TAN, "tan") X(TANH, "tanh") X(ATAN, "atan") X(LGAMMA, "lgamma")       \
  X(DIGAMMA, "digamma") X(ABS, "abs") X(INV_LOGIT, "inv_logit")           \
  X(LOG_INV_LOGIT, "log_inv_logit") X(LOG1P_EXP, "log1p_exp")             \
  X(SQUARE, "square") X(LOG1M, "log1m") X(LOG1M_EXP, "log1m_exp")           \
  X(LOGIT, "logit") X(ERF, "erf") X(ERFC, "erfc") X(PHI, "Phi")           \
  X(INV_PHI, "inv_Phi") X(PHI_APPROX, "Phi_approx")                       \
  X(TRIGAMMA, "trigamma") X(SINH, "sinh") X(COSH, "cosh")                 \
  X(ASINH, "asinh") X(ACOSH, "acosh") X(ATANH, "atanh") X(ASIN, "asin")   \
  X(ACOS, "acos") X(INV, "inv") X(INV_SQRT, "inv_sqrt")                   \
  X(INV_SQUARE, "inv_square") X(LOG2, "log2") X(LOG10, "log10")           \
  X(EXP2, "exp2") X(CBRT, "cbrt") X(LOG1M_INV_LOGIT, "log1m_inv_logit")   \
  X(INV_CLOGLOG, "inv_cloglog") X(TGAMMA, "tgamma")

#define AD_BINARY_OPS(X)                                                  \
  X(ADD, "add") X(SUB, "sub") X(MUL, "mul") X(DIV, "div") X(POW, "pow")   \
  X(FMIN, "fmin") X(FMAX, "fmax") X(LOG_SUM_EXP2, "log_sum_exp")          \
  X(LOG_DIFF_EXP, "log_diff_exp") X(HYPOT, "hypot") X(ATAN2, "atan2")     \
  X(LBETA, "lbeta") X(LCHOOSE, "lchoose")                                 \
  X(LOG_INV_LOGIT_DIFF, "log_inv_logit_diff") X(LMULTIPLY, "lmultiply")   \
  X(FDIM, "fdim")

/* X(ENUM, "lua name", number of arguments): functions of up to 4 arguments
** evaluated elementwise with broadcasting, with exact gradients and (most)
** Hessians (ad_dist.h). Log densities (argument 0 the outcome) are summed
** over elements (one scalar) or kept per element (ad_dist_each); the
** functions at the end (log_mix, inc_beta) are only elementwise. Families
** live in ad_dist_real.c (the real line), ad_dist_pos.c (positive),
** ad_dist_unit.c (bounded), ad_dist_count.c (counts), their cdfs in
** ad_cdf_*.c; ad_dist_table.c ties them together. */
#define AD_DIST_OPS(X)                                                    \
  X(NORMAL, "normal_lpdf", 3) X(STD_NORMAL, "std_normal_lpdf", 1)         \
  X(STUDENT_T, "student_t_lpdf", 4) X(CAUCHY, "cauchy_lpdf", 3)           \
  X(DOUBLE_EXPONENTIAL, "double_exponential_lpdf", 3)                     \
  X(LOGISTIC, "logistic_lpdf", 3) X(GUMBEL, "gumbel_lpdf", 3)             \
  X(SKEW_NORMAL, "skew_normal_lpdf", 4)                                   \
  X(LOGNORMAL, "lognormal_lpdf", 3) X(GAMMA, "gamma_lpdf", 3)             \
  X(INV_GAMMA, "inv_gamma_lpdf", 3) X(EXPONENTIAL, "exponential_lpdf", 2) \
  X(WEIBULL, "weibull_lpdf", 3) X(FRECHET, "frechet_lpdf", 3)             \
  X(PARETO, "pareto_lpdf", 3) X(CHI_SQUARE, "chi_square_lpdf", 2)         \
  X(INV_CHI_SQUARE, "inv_chi_square_lpdf", 2)                             \
  X(BETA, "beta_lpdf", 3) X(BETA_PROPORTION, "beta_proportion_lpdf", 3)   \
  X(UNIFORM, "uniform_lpdf", 3) X(VON_MISES, "von_mises_lpdf", 3)         \
  X(POISSON, "poisson_lpmf", 2) X(POISSON_LOG, "poisson_log_lpmf", 2)     \
  X(BINOMIAL, "binomial_lpmf", 3)                                         \
  X(BINOMIAL_LOGIT, "binomial_logit_lpmf", 3)                             \
  X(BERNOULLI, "bernoulli_lpmf", 2)                                       \
  X(BERNOULLI_LOGIT, "bernoulli_logit_lpmf", 2)                           \
  X(NEG_BINOMIAL, "neg_binomial_lpmf", 3)                                 \
  X(NEG_BINOMIAL_2, "neg_binomial_2_lpmf", 3)                             \
  X(NEG_BINOMIAL_2_LOG, "neg_binomial_2_log_lpmf", 3)                     \
  X(BETA_BINOMIAL, "beta_binomial_lpmf", 4)                               \
  X(NORMAL_LCDF, "normal_lcdf", 3) X(NORMAL_LCCDF, "normal_lccdf", 3)     \
  X(STD_NORMAL_LCDF, "std_normal_lcdf", 1)                                \
  X(STD_NORMAL_LCCDF, "std_normal_lccdf", 1)                              \
  X(STUDENT_T_LCDF, "student_t_lcdf", 4)                                  \
  X(STUDENT_T_LCCDF, "student_t_lccdf", 4)                                \
  X(CAUCHY_LCDF, "cauchy_lcdf", 3) X(CAUCHY_LCCDF, "cauchy_lccdf", 3)     \
  X(DOUBLE_EXPONENTIAL_LCDF, "double_exponential_lcdf", 3)                \
  X(DOUBLE_EXPONENTIAL_LCCDF, "double_exponential_lccdf", 3)              \
  X(LOGISTIC_LCDF, "logistic_lcdf", 3)                                    \
  X(LOGISTIC_LCCDF, "logistic_lccdf", 3)                                  \
  X(GUMBEL_LCDF, "gumbel_lcdf", 3) X(GUMBEL_LCCDF, "gumbel_lccdf", 3)     \
  X(LOGNORMAL_LCDF, "lognormal_lcdf", 3)                                  \
  X(LOGNORMAL_LCCDF, "lognormal_lccdf", 3)                                \
  X(EXPONENTIAL_LCDF, "exponential_lcdf", 2)                              \
  X(EXPONENTIAL_LCCDF, "exponential_lccdf", 2)                            \
  X(WEIBULL_LCDF, "weibull_lcdf", 3) X(WEIBULL_LCCDF, "weibull_lccdf", 3) \
  X(FRECHET_LCDF, "frechet_lcdf", 3) X(FRECHET_LCCDF, "frechet_lccdf", 3) \
  X(PARETO_LCDF, "pareto_lcdf", 3) X(PARETO_LCCDF, "pareto_lccdf", 3)     \
  X(UNIFORM_LCDF, "uniform_lcdf", 3) X(UNIFORM_LCCDF, "uniform_lccdf", 3) \
  X(GAMMA_LCDF, "gamma_lcdf", 3) X(GAMMA_LCCDF, "gamma_lccdf", 3)         \
  X(INV_GAMMA_LCDF, "inv_gamma_lcdf", 3)                                  \
  X(INV_GAMMA_LCCDF, "inv_gamma_lccdf", 3)                                \
  X(CHI_SQUARE_LCDF, "chi_square_lcdf", 2)                                \
  X(CHI_SQUARE_LCCDF, "chi_square_lccdf", 2)                              \
  X(INV_CHI_SQUARE_LCDF, "inv_chi_square_lcdf", 2)                        \
  X(INV_CHI_SQUARE_LCCDF, "inv_chi_square_lccdf", 2)                      \
  X(BETA_LCDF, "beta_lcdf", 3) X(BETA_LCCDF, "beta_lccdf", 3)             \
  X(BETA_PROPORTION_LCDF, "beta_proportion_lcdf", 3)                      \
  X(BETA_PROPORTION_LCCDF, "beta_proportion_lccdf", 3)                    \
  X(POISSON_LCDF, "poisson_lcdf", 2) X(POISSON_LCCDF, "poisson_lccdf", 2) \
  X(BINOMIAL_LCDF, "binomial_lcdf", 3)                                    \
  X(BINOMIAL_LCCDF, "binomial_lccdf", 3)                                  \
  X(BERNOULLI_LCDF, "bernoulli_lcdf", 2)                                  \
  X(BERNOULLI_LCCDF, "bernoulli_lccdf", 2)                                \
  X(NEG_BINOMIAL_LCDF, "neg_binomial_lcdf", 3)                            \
  X(NEG_BINOMIAL_LCCDF, "neg_binomial_lccdf", 3)                          \
  X(NEG_BINOMIAL_2_LCDF, "neg_binomial_2_lcdf", 3)                        \
  X(NEG_BINOMIAL_2_LCCDF, "neg_binomial_2_lccdf", 3)                      \
  X(BETA_BINOMIAL_LCDF, "beta_binomial_lcdf", 4)                          \
  X(BETA_BINOMIAL_LCCDF, "beta_binomial_lccdf", 4)                        \
  X(LOG_MIX, "log_mix", 3) X(INC_BETA, "inc_beta", 3)

enum ad_op {
  AD_OP_NONE = 0,
#define AD_X_(e, s) AD_OP_##e,
  AD_UNARY_OPS(AD_X_)
  AD_OP_UNARY_END_,
  AD_BINARY_OPS(AD_X_)
  AD_OP_BINARY_END_,
#undef AD_X_
  AD_OP_PACK,     /* outputs = copies of inputs (gathers vars into a vector) */
  AD_OP_SUM,      /* scalar = sum of a vector */
  AD_OP_DOT,      /* scalar = dot(a, b) */
  AD_OP_MATVEC,   /* vector = A x, A constant */
  AD_OP_LSE,      /* scalar = log(sum(exp(v))) */
  AD_OP_DIST,     /* scalar = sum of a log density (aux says which) */
  AD_OP_PRECOMP,  /* caller-supplied value and partials */
  AD_OP_DIST_EACH,/* vector = a log density per element (aux says which) */
  AD_OP_MATVEC2,  /* vector = A x, A a var matrix (aux: A and x) */
  AD_OP_LOGDET,   /* scalar = log |det A| (partials A^-T) */
  AD_OP_MVN_CHOL, /* scalar = multi_normal_cholesky_lpdf */
  AD_OP_MATMUL,   /* matrix = A B          (custom sweeps, ad_mat.c) */
  AD_OP_CHOL,     /* matrix = cholesky(A)  (custom sweeps) */
  AD_OP_TRISOLVE, /* matrix = L \ B, L' \ B (custom sweeps) */
  AD_OP_PRECOMP2, /* precomputed value, partials and second partials */
  AD_OP_COUNT_
};

enum ad_dist {
#define AD_X_(e, s, n) AD_DIST_##e,
  AD_DIST_OPS(AD_X_)
#undef AD_X_
  AD_DIST_COUNT_
};

#define AD_IS_UNARY(op) ((op) > AD_OP_NONE && (op) < AD_OP_UNARY_END_)
#define AD_IS_BINARY(op) ((op) > AD_OP_UNARY_END_ && (op) < AD_OP_BINARY_END_)

/* Lua-facing name of an op / distribution ("exp", "normal_lpdf"); NULL if bad. */
const char *ad_op_name(int op);
const char *ad_dist_name(int dist);
int ad_dist_nargs(int dist);

#endif
