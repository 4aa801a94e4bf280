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
  X(LOGIT, "logit")

#define AD_BINARY_OPS(X)                                                  \
  X(ADD, "add") X(SUB, "sub") X(MUL, "mul") X(DIV, "div") X(POW, "pow")   \
  X(FMIN, "fmin") X(FMAX, "fmax") X(LOG_SUM_EXP2, "log_sum_exp")          \
  X(LOG_DIFF_EXP, "log_diff_exp")

/* X(ENUM, "lua name", number of arguments): functions of up to 4 arguments
** evaluated elementwise with broadcasting, with exact gradients and
** Hessians (ad_dist.h). Log densities (argument 0 the outcome) are summed
** over elements (one scalar) or kept per element (ad_dist_each);
** log_mix is only elementwise. */
#define AD_DIST_OPS(X)                                                    \
  X(NORMAL, "normal_lpdf", 3) X(STUDENT_T, "student_t_lpdf", 4)           \
  X(CAUCHY, "cauchy_lpdf", 3) X(LOGNORMAL, "lognormal_lpdf", 3)           \
  X(GAMMA, "gamma_lpdf", 3) X(EXPONENTIAL, "exponential_lpdf", 2)         \
  X(POISSON_LOG, "poisson_log_lpmf", 2)                                   \
  X(BERNOULLI_LOGIT, "bernoulli_logit_lpmf", 2)                           \
  X(BINOMIAL_LOGIT, "binomial_logit_lpmf", 3)                             \
  X(BETA, "beta_lpdf", 3)                                                 \
  X(NEG_BINOMIAL_2_LOG, "neg_binomial_2_log_lpmf", 3)                     \
  X(NORMAL_LCDF, "normal_lcdf", 3) X(NORMAL_LCCDF, "normal_lccdf", 3)     \
  X(STUDENT_T_LCCDF, "student_t_lccdf", 4)                                \
  X(LOG_MIX, "log_mix", 3)

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
