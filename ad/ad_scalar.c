/* SPDX-License-Identifier: MIT */
/* Scalar operations, their exact partials, and recording. See ad_scalar.h. */
#include <math.h>
#include "ad_scalar.h"
#include "ad_special.h"

const char *ad_op_name(int op) {
  switch (op) {
#define AD_X_(e, s) case AD_OP_##e: return s;
    AD_UNARY_OPS(AD_X_)
    AD_BINARY_OPS(AD_X_)
#undef AD_X_
    case AD_OP_PACK: return "pack";
    case AD_OP_SUM: return "sum";
    case AD_OP_DOT: return "dot";
    case AD_OP_MATVEC: return "matvec";
    case AD_OP_LSE: return "log_sum_exp";
    case AD_OP_DIST: return "lpdf";
    case AD_OP_PRECOMP: return "precomputed";
    case AD_OP_DIST_EACH: return "lpdf (per element)";
    case AD_OP_MATVEC2: return "matvec";
    case AD_OP_LOGDET: return "log_determinant";
    case AD_OP_MVN_CHOL: return "multi_normal_cholesky_lpdf";
    case AD_OP_MATMUL: return "matmul";
    case AD_OP_CHOL: return "cholesky";
    case AD_OP_TRISOLVE: return "trisolve";
    case AD_OP_PRECOMP2: return "precomputed (second order)";
    default: return NULL;
  }
}

#define TWO_RSQRT_PI 1.12837916709551257390 /* 2 / sqrt(pi) */
#define HALF_LOG_2PI 0.91893853320467274178
#define SQRT1_2 0.70710678118654752440
#define LN2 0.69314718055994530942
#define LN10 2.30258509299404568402

/* ------------------------------------------------------------ unary math */

double ad_unary_eval(int op, double x, double *d1) {
  double y;
  switch (op) {
    case AD_OP_NEG: *d1 = -1; return -x;
    case AD_OP_EXP: y = exp(x); *d1 = y; return y;
    case AD_OP_LOG: *d1 = 1 / x; return log(x);
    case AD_OP_LOG1P: *d1 = 1 / (1 + x); return log1p(x);
    case AD_OP_EXPM1: y = expm1(x); *d1 = y + 1; return y;
    case AD_OP_SQRT: y = sqrt(x); *d1 = 0.5 / y; return y;
    case AD_OP_SIN: *d1 = cos(x); return sin(x);
    case AD_OP_COS: *d1 = -sin(x); return cos(x);
    case AD_OP_TAN: y = tan(x); *d1 = 1 + y * y; return y;
    case AD_OP_TANH: y = tanh(x); *d1 = 1 - y * y; return y;
    case AD_OP_ATAN: *d1 = 1 / (1 + x * x); return atan(x);
    case AD_OP_LGAMMA: *d1 = ad_digamma(x); return lgamma(x);
    case AD_OP_DIGAMMA: *d1 = ad_trigamma(x); return ad_digamma(x);
    case AD_OP_ABS: *d1 = x > 0 ? 1 : x < 0 ? -1 : (x == 0 ? 0 : x); return fabs(x);
    case AD_OP_INV_LOGIT: y = ad_inv_logit(x); *d1 = y * (1 - y); return y;
    case AD_OP_LOG_INV_LOGIT: *d1 = ad_inv_logit(-x); return ad_log_inv_logit(x);
    case AD_OP_LOG1P_EXP: *d1 = ad_inv_logit(x); return ad_log1p_exp(x);
    case AD_OP_SQUARE: *d1 = 2 * x; return x * x;
    case AD_OP_LOG1M: *d1 = -1 / (1 - x); return log1p(-x);
    case AD_OP_LOG1M_EXP: *d1 = -1 / expm1(-x); return ad_log1m_exp(x);
    case AD_OP_LOGIT: *d1 = 1 / (x * (1 - x)); return log(x / (1 - x));
    case AD_OP_ERF: *d1 = TWO_RSQRT_PI * exp(-x * x); return erf(x);
    case AD_OP_ERFC: *d1 = -TWO_RSQRT_PI * exp(-x * x); return erfc(x);
    case AD_OP_PHI: *d1 = exp(-0.5 * x * x - HALF_LOG_2PI); return 0.5 * erfc(-x * SQRT1_2);
    case AD_OP_INV_PHI: y = ad_inv_Phi(x); *d1 = exp(0.5 * y * y + HALF_LOG_2PI); return y;
    case AD_OP_PHI_APPROX:
      y = ad_inv_logit(0.07056 * x * x * x + 1.5976 * x);
      *d1 = y * (1 - y) * (3 * 0.07056 * x * x + 1.5976);
      return y;
    case AD_OP_TRIGAMMA: *d1 = ad_tetragamma(x); return ad_trigamma(x);
    case AD_OP_SINH: *d1 = cosh(x); return sinh(x);
    case AD_OP_COSH: *d1 = sinh(x); return cosh(x);
    case AD_OP_ASINH: *d1 = 1 / sqrt(1 + x * x); return asinh(x);
    case AD_OP_ACOSH: *d1 = 1 / sqrt(x * x - 1); return acosh(x);
    case AD_OP_ATANH: *d1 = 1 / (1 - x * x); return atanh(x);
    case AD_OP_ASIN: *d1 = 1 / sqrt(1 - x * x); return asin(x);
    case AD_OP_ACOS: *d1 = -1 / sqrt(1 - x * x); return acos(x);
    case AD_OP_INV: *d1 = -1 / (x * x); return 1 / x;
    case AD_OP_INV_SQRT: y = 1 / sqrt(x); *d1 = -0.5 * y / x; return y;
    case AD_OP_INV_SQUARE: *d1 = -2 / (x * x * x); return 1 / (x * x);
    case AD_OP_LOG2: *d1 = 1 / (x * LN2); return log2(x);
    case AD_OP_LOG10: *d1 = 1 / (x * LN10); return log10(x);
    case AD_OP_EXP2: y = exp2(x); *d1 = y * LN2; return y;
    case AD_OP_CBRT: y = cbrt(x); *d1 = 1 / (3 * y * y); return y;
    case AD_OP_LOG1M_INV_LOGIT: *d1 = -ad_inv_logit(x); return -ad_log1p_exp(x);
    case AD_OP_INV_CLOGLOG: *d1 = exp(x - exp(x)); return -expm1(-exp(x));
    case AD_OP_TGAMMA: y = tgamma(x); *d1 = y * ad_digamma(x); return y;
    default: *d1 = NAN; return NAN;
  }
}

double ad_unary_d2(int op, double x, double y) {
  double s;
  switch (op) {
    case AD_OP_NEG: return 0;
    case AD_OP_EXP: return y;
    case AD_OP_LOG: return -1 / (x * x);
    case AD_OP_LOG1P: return -1 / ((1 + x) * (1 + x));
    case AD_OP_EXPM1: return y + 1;
    case AD_OP_SQRT: return -0.25 / (x * y);
    case AD_OP_SIN: return -y;
    case AD_OP_COS: return -y;
    case AD_OP_TAN: return 2 * y * (1 + y * y);
    case AD_OP_TANH: return -2 * y * (1 - y * y);
    case AD_OP_ATAN: s = 1 + x * x; return -2 * x / (s * s);
    case AD_OP_LGAMMA: return ad_trigamma(x);
    case AD_OP_DIGAMMA: return ad_tetragamma(x);
    case AD_OP_ABS: return isnan(x) ? x : 0;
    case AD_OP_INV_LOGIT: return y * (1 - y) * (1 - 2 * y);
    case AD_OP_LOG_INV_LOGIT: s = ad_inv_logit(x); return -s * (1 - s);
    case AD_OP_LOG1P_EXP: s = ad_inv_logit(x); return s * (1 - s);
    case AD_OP_SQUARE: return 2;
    case AD_OP_LOG1M: return -1 / ((1 - x) * (1 - x));
    case AD_OP_LOG1M_EXP: s = expm1(x); return -exp(x) / (s * s);
    case AD_OP_LOGIT: s = x * (1 - x); return (2 * x - 1) / (s * s);
    case AD_OP_ERF: return -2 * x * TWO_RSQRT_PI * exp(-x * x);
    case AD_OP_ERFC: return 2 * x * TWO_RSQRT_PI * exp(-x * x);
    case AD_OP_PHI: return -x * exp(-0.5 * x * x - HALF_LOG_2PI);
    case AD_OP_INV_PHI: s = exp(y * y + 2 * HALF_LOG_2PI); return y * s;
    case AD_OP_PHI_APPROX: {
      double u1 = 3 * 0.07056 * x * x + 1.5976, u2 = 6 * 0.07056 * x;
      return y * (1 - y) * ((1 - 2 * y) * u1 * u1 + u2);
    }
    case AD_OP_TRIGAMMA: return ad_pentagamma(x);
    case AD_OP_SINH: return y;
    case AD_OP_COSH: return y;
    case AD_OP_ASINH: s = 1 + x * x; return -x / (s * sqrt(s));
    case AD_OP_ACOSH: s = x * x - 1; return -x / (s * sqrt(s));
    case AD_OP_ATANH: s = 1 - x * x; return 2 * x / (s * s);
    case AD_OP_ASIN: s = 1 - x * x; return x / (s * sqrt(s));
    case AD_OP_ACOS: s = 1 - x * x; return -x / (s * sqrt(s));
    case AD_OP_INV: return 2 / (x * x * x);
    case AD_OP_INV_SQRT: return 0.75 * y / (x * x);
    case AD_OP_INV_SQUARE: return 6 / (x * x * x * x);
    case AD_OP_LOG2: return -1 / (x * x * LN2);
    case AD_OP_LOG10: return -1 / (x * x * LN10);
    case AD_OP_EXP2: return y * LN2 * LN2;
    case AD_OP_CBRT: return -2 / (9 * y * y * y * y * y);
    case AD_OP_LOG1M_INV_LOGIT: s = ad_inv_logit(x); return -s * (1 - s);
    case AD_OP_INV_CLOGLOG: s = exp(x); return exp(x - s) * (1 - s);
    case AD_OP_TGAMMA: s = ad_digamma(x); return y * (s * s + ad_trigamma(x));
    default: return NAN;
  }
}

/* ----------------------------------------------------------- binary math */

double ad_binary_eval(int op, double a, double b, double *pa, double *pb) {
  double y, m;
  switch (op) {
    case AD_OP_ADD: *pa = 1; *pb = 1; return a + b;
    case AD_OP_SUB: *pa = 1; *pb = -1; return a - b;
    case AD_OP_MUL: *pa = b; *pb = a; return a * b;
    case AD_OP_DIV: y = a / b; *pa = 1 / b; *pb = -y / b; return y;
    case AD_OP_POW:
      y = pow(a, b);
      *pa = b == 0 ? 0 : b * pow(a, b - 1);
      /* d/db a^b = a^b log a; taken as 0 where a^b is 0 (a = 0, b > 0). */
      *pb = y == 0 ? 0 : y * log(a);
      return y;
    case AD_OP_FMIN:
      /* The partial follows the operand returned (NaN loses, ties go to a). */
      if (isnan(b) || a <= b) { *pa = 1; *pb = 0; return isnan(a) ? b : a; }
      *pa = 0; *pb = 1; return b;
    case AD_OP_FMAX:
      if (isnan(b) || a >= b) { *pa = 1; *pb = 0; return isnan(a) ? b : a; }
      *pa = 0; *pb = 1; return b;
    case AD_OP_LOG_SUM_EXP2:
      m = a > b ? a : b;
      if (m == -INFINITY) { *pa = *pb = 0.5; return m; }
      m = exp(-fabs(a - b));
      y = (a > b ? a : b) + log1p(m);
      if (isnan(y)) { *pa = *pb = NAN; return y; }
      *pa = (a >= b ? 1 : m) / (1 + m);
      *pb = (a >= b ? m : 1) / (1 + m);
      return y;
    case AD_OP_LOG_DIFF_EXP:
      /* a + log(1 - e^(b-a)): NaN for b > a, -inf for a == b (Stan's) */
      m = expm1(b - a);
      *pa = -1 / m;
      *pb = b == -INFINITY ? 0 : exp(b - a) / m;
      return b == -INFINITY ? a : a + ad_log1m_exp(b - a);
    case AD_OP_HYPOT: y = hypot(a, b); *pa = a / y; *pb = b / y; return y;
    case AD_OP_ATAN2: m = a * a + b * b; *pa = b / m; *pb = -a / m; return atan2(a, b);
    case AD_OP_LBETA:
      m = ad_digamma(a + b);
      *pa = ad_digamma(a) - m; *pb = ad_digamma(b) - m;
      return ad_lbeta(a, b);
    case AD_OP_LCHOOSE:
      m = ad_digamma(a - b + 1);
      *pa = ad_digamma(a + 1) - m; *pb = m - ad_digamma(b + 1);
      return ad_lchoose(a, b);
    case AD_OP_LOG_INV_LOGIT_DIFF:
      /* a - log1p_exp(a) + log1m_exp(b - a) - log1p_exp(b), a > b */
      m = -1 / expm1(a - b); /* d/dt log1m_exp(t) at t = b - a */
      *pa = 1 - ad_inv_logit(a) - m;
      *pb = m - ad_inv_logit(b);
      return a - ad_log1p_exp(a) + ad_log1m_exp(b - a) - ad_log1p_exp(b);
    case AD_OP_LMULTIPLY:
      *pa = log(b); *pb = a / b;
      return (a == 0 && b == 0) ? 0 : a * log(b);
    case AD_OP_FDIM:
      if (a > b) { *pa = 1; *pb = -1; return a - b; }
      *pa = *pb = 0;
      return isnan(a) || isnan(b) ? NAN : 0;
    default: *pa = *pb = NAN; return NAN;
  }
}

void ad_binary_d2(int op, double a, double b, double y, double h[3]) {
  double la, s;
  h[0] = h[1] = h[2] = 0;
  switch (op) {
    case AD_OP_MUL: h[1] = 1; break;
    case AD_OP_DIV:
      h[1] = -1 / (b * b);
      h[2] = 2 * y / (b * b);
      break;
    case AD_OP_POW:
      h[0] = b == 0 || b == 1 ? 0 : b * (b - 1) * pow(a, b - 2);
      if (y != 0) {
        la = log(a);
        h[1] = pow(a, b - 1) * (1 + b * la);
        h[2] = y * la * la;
      } else {
        h[1] = b == 1 ? 1 : 0; /* d/db (b a^(b-1)) at a = 0 */
      }
      break;
    case AD_OP_LOG_SUM_EXP2:
      s = exp(a - y) * exp(b - y);
      h[0] = s; h[1] = -s; h[2] = s;
      break;
    case AD_OP_LOG_DIFF_EXP:
      /* r = e^(b-a): d2/da2 = -r/(1-r)^2 = d2/db2 = -d2/dadb */
      if (b == -INFINITY) break;
      la = expm1(b - a);
      s = exp(b - a) / (la * la);
      h[0] = -s; h[1] = s; h[2] = -s;
      break;
    case AD_OP_HYPOT:
      s = y * y * y;
      h[0] = b * b / s; h[1] = -a * b / s; h[2] = a * a / s;
      break;
    case AD_OP_ATAN2:
      s = a * a + b * b;
      s *= s;
      h[0] = -2 * a * b / s; h[1] = (a * a - b * b) / s; h[2] = 2 * a * b / s;
      break;
    case AD_OP_LBETA:
      s = ad_trigamma(a + b);
      h[0] = ad_trigamma(a) - s; h[1] = -s; h[2] = ad_trigamma(b) - s;
      break;
    case AD_OP_LCHOOSE:
      s = ad_trigamma(a - b + 1);
      h[0] = ad_trigamma(a + 1) - s; h[1] = s; h[2] = -ad_trigamma(b + 1) - s;
      break;
    case AD_OP_LOG_INV_LOGIT_DIFF: {
      double t = expm1(b - a), m2 = -exp(b - a) / (t * t), pa = ad_inv_logit(a), pb = ad_inv_logit(b);
      h[0] = -pa * (1 - pa) + m2; h[1] = -m2; h[2] = m2 - pb * (1 - pb);
      break;
    }
    case AD_OP_LMULTIPLY: h[1] = 1 / b; h[2] = -a / (b * b); break;
    default: break; /* add, sub, fmin, fmax, fdim: piecewise linear */
  }
}

/* ------------------------------------------------------------- recording */

/* a scalar var's slot holds a unary or binary op code (node ops live in the node) */
_Static_assert(AD_OP_BINARY_END_ <= AD_SLOT_OPMASK + 1, "scalar op codes must fit the slot op mask");

int ad_unary(ad_tape *t, int op, ad_idx x, ad_idx *y) {
  int rc = ad_reserve(t, 1, 0, 0);
  if (rc) return rc;
  double d, v = ad_unary_eval(op, t->val[x], &d);
  ad_idx k = t->nvar;
  ad_record_(t, k, op, x + 1, 0, v, d, 0);
  *y = k;
  return 0;
}

int ad_binary_slow_(ad_tape *t, int code, ad_idx a, ad_idx b, double c, ad_idx *y) {
  int rc = ad_reserve(t, 1, 0, 0);
  if (rc) return rc;
  int op = code & AD_SLOT_OPMASK;
  double pa, pb, v;
  ad_idx k = t->nvar;
  if (code & AD_SLOT_ACONST) {
    v = ad_binary_eval(op, c, t->val[b], &pa, &pb);
    ad_record_(t, k, code, b + 1, 0, v, pb, c);
  } else if (code & AD_SLOT_BCONST) {
    v = ad_binary_eval(op, t->val[a], c, &pa, &pb);
    ad_record_(t, k, code, a + 1, 0, v, pa, c);
  } else {
    v = ad_binary_eval(op, t->val[a], t->val[b], &pa, &pb);
    ad_record_(t, k, code, a + 1, b + 1, v, pa, pb);
  }
  *y = k;
  return 0;
}

int ad_precomputed2(ad_tape *t, double value, size_t n, const ad_idx *in,
                    const double *partial, const double *hess, ad_idx *y) {
  double *H = ad_tape_alloc(t, (n ? n * n : 1) * sizeof(double));
  if (!H) return AD_ENOMEM;
  if (n) memcpy(H, hess, n * n * sizeof(double));
  int rc = ad_precomputed(t, value, n, in, partial, y);
  if (rc) return rc;
  ad_node *nd = &t->node[t->nnode - 1];
  nd->op = AD_OP_PRECOMP2;
  nd->u.aux = H;
  return 0;
}

int ad_precomputed(ad_tape *t, double value, size_t n, const ad_idx *in,
                   const double *partial, ad_idx *y) {
  for (size_t k = 0; k < n; k++)
    if (in[k] >= t->nvar) return AD_ESTALE;
  int rc = ad_reserve(t, 1, n, 1);
  if (rc) return rc;
  ad_idx o = t->nvar++, e0 = t->nent;
  t->val[o] = value;
  for (size_t k = 0; k < n; k++) {
    t->ent[e0 + k].out = o;
    t->ent[e0 + k].in = in[k];
    t->par[e0 + k] = partial[k];
  }
  t->nent += (ad_idx)n;
  ad_push_node(t, AD_OP_PRECOMP, 0, o, 1, e0, (ad_idx)n, NULL);
  *y = o;
  return 0;
}
