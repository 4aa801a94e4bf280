/* The element functions of ad_dist.h: value, exact gradient and Hessian of
** one element of each log density (and log_mix), and the checks of their
** count arguments. */
#include <math.h>
#include <string.h>
#include "ad_dist.h"
#include "ad_special.h"

#define LOG_PI 1.14472988584940017414
#define HALF_LOG_2PI 0.91893853320467274178
#define LN2 0.69314718055994530942

const char *ad_dist_name(int dist) {
  switch (dist) {
#define AD_X_(e, s, n) case AD_DIST_##e: return s;
    AD_DIST_OPS(AD_X_)
#undef AD_X_
    default: return NULL;
  }
}

int ad_dist_nargs(int dist) {
  switch (dist) {
#define AD_X_(e, s, n) case AD_DIST_##e: return n;
    AD_DIST_OPS(AD_X_)
#undef AD_X_
    default: return 0;
  }
}

int ad_dist_data_only(int dist, int k) {
  switch (dist) {
    case AD_DIST_POISSON_LOG:
    case AD_DIST_NEG_BINOMIAL_2_LOG:
    case AD_DIST_BERNOULLI_LOGIT: return k == 0;
    case AD_DIST_BINOMIAL_LOGIT: return k < 2;
    default: return 0;
  }
}

int ad_dist_has_second(int dist, int k) {
  /* d2/dnu2 of the t ccdf needs second derivatives of I_x(a, b) in a */
  return !(dist == AD_DIST_STUDENT_T_LCCDF && k == 1);
}

/* Is v a count (a non-negative integer), and within [0, hi]? */
static int is_count(double v, double hi) { return v >= 0 && v <= hi && v == floor(v); }

int ad_dist_check_counts(const ad_tape *t, int dist, const ad_arg *args, size_t n,
                         size_t *bad, size_t *elem) {
  for (size_t i = 0; i < n; i++) {
    double c = ad_arg_at(t, &args[0], i), hi = INFINITY;
    int k = 0;
    switch (dist) {
      case AD_DIST_POISSON_LOG:
      case AD_DIST_NEG_BINOMIAL_2_LOG: break;
      case AD_DIST_BERNOULLI_LOGIT: hi = 1; break;
      case AD_DIST_BINOMIAL_LOGIT:
        hi = ad_arg_at(t, &args[1], i);
        if (!is_count(hi, INFINITY)) { k = 1; c = hi; hi = INFINITY; goto check; }
        break;
      default: return 0;
    }
  check:
    if (!is_count(c, hi)) {
      if (bad) *bad = (size_t)k;
      if (elem) *elem = i;
      return AD_ECOUNT;
    }
  }
  return 0;
}

/* --------------------------------------------------- element functions */

#define H(k, l) h[(k) * 4 + (l)]

static void sym(double *h, int n) {
  for (int k = 0; k < n; k++)
    for (int l = 0; l < k; l++) H(l, k) = H(k, l);
}

static void el_normal(const double *x, double *f, double *g, double *h) {
  double s = x[2], inv = 1 / s, z = (x[0] - x[1]) * inv;
  *f = -0.5 * z * z - log(s) - HALF_LOG_2PI;
  g[0] = -z * inv; g[1] = z * inv; g[2] = (z * z - 1) * inv;
  if (!h) return;
  double i2 = inv * inv;
  H(0, 0) = -i2; H(1, 0) = i2; H(1, 1) = -i2;
  H(2, 0) = 2 * z * i2; H(2, 1) = -2 * z * i2; H(2, 2) = (1 - 3 * z * z) * i2;
  sym(h, 3);
}

/* log s - log D with D = s^2 + u^2, u = y - mu (plus -log pi). */
static void el_cauchy(const double *x, double *f, double *g, double *h) {
  double u = x[0] - x[1], s = x[2], D = s * s + u * u;
  *f = -LOG_PI + log(s) - log(D);
  g[0] = -2 * u / D; g[1] = 2 * u / D; g[2] = 1 / s - 2 * s / D;
  if (!h) return;
  double Da[3] = {2 * u, -2 * u, 2 * s};
  double Dab[3][3] = {{2, -2, 0}, {-2, 2, 0}, {0, 0, 2}};
  for (int k = 0; k < 3; k++)
    for (int l = 0; l <= k; l++) H(k, l) = -(Dab[k][l] / D - Da[k] * Da[l] / (D * D));
  H(2, 2) -= 1 / (s * s);
  sym(h, 3);
}

static void el_lognormal(const double *x, double *f, double *g, double *h) {
  double y = x[0], s = x[2], inv = 1 / s, ly = log(y), z = (ly - x[1]) * inv;
  *f = -0.5 * z * z - log(s) - ly - HALF_LOG_2PI;
  g[0] = -(z * inv + 1) / y; g[1] = z * inv; g[2] = (z * z - 1) * inv;
  if (!h) return;
  double i2 = inv * inv;
  H(0, 0) = (z * inv + 1 - i2) / (y * y);
  H(1, 0) = i2 / y; H(1, 1) = -i2;
  H(2, 0) = 2 * z * i2 / y; H(2, 1) = -2 * z * i2; H(2, 2) = (1 - 3 * z * z) * i2;
  sym(h, 3);
}

static void el_gamma(const double *x, double *f, double *g, double *h) {
  double y = x[0], a = x[1], b = x[2], ly = log(y);
  *f = a * log(b) - lgamma(a) + (a - 1) * ly - b * y;
  g[0] = (a - 1) / y - b; g[1] = log(b) - ad_digamma(a) + ly; g[2] = a / b - y;
  if (!h) return;
  H(0, 0) = -(a - 1) / (y * y);
  H(1, 0) = 1 / y; H(1, 1) = -ad_trigamma(a);
  H(2, 0) = -1; H(2, 1) = 1 / b; H(2, 2) = -a / (b * b);
  sym(h, 3);
}

static void el_exponential(const double *x, double *f, double *g, double *h) {
  double y = x[0], b = x[1];
  *f = log(b) - b * y;
  g[0] = -b; g[1] = 1 / b - y;
  if (!h) return;
  H(0, 0) = 0; H(1, 0) = -1; H(1, 1) = -1 / (b * b);
  sym(h, 2);
}

/* student_t(y | nu, mu, s) = A(nu) + nu log s - c log D,
** D = nu s^2 + (y - mu)^2, c = (nu + 1) / 2,
** A(nu) = lgamma(c) - lgamma(nu/2) - log(pi)/2 + (nu/2) log nu. */
static void el_student_t(const double *x, double *f, double *g, double *h) {
  double nu = x[1], u = x[0] - x[2], s = x[3], c = 0.5 * (nu + 1);
  double D = nu * s * s + u * u, lD = log(D), ls = log(s);
  *f = lgamma(c) - lgamma(0.5 * nu) - 0.5 * LOG_PI + 0.5 * nu * log(nu) + nu * ls - c * lD;
  /* index order: 0 y, 1 nu, 2 mu, 3 s */
  double Da[4] = {2 * u, s * s, -2 * u, 2 * nu * s};
  double A1 = 0.5 * ad_digamma(c) - 0.5 * ad_digamma(0.5 * nu) + 0.5 * log(nu) + 0.5;
  g[0] = -c * Da[0] / D;
  g[1] = A1 + ls - 0.5 * lD - c * Da[1] / D;
  g[2] = -c * Da[2] / D;
  g[3] = nu / s - c * Da[3] / D;
  if (!h) return;
  double Dab[4][4] = {{2, 0, -2, 0}, {0, 0, 0, 2 * s}, {-2, 0, 2, 0}, {0, 2 * s, 0, 2 * nu}};
  double A2 = 0.25 * ad_trigamma(c) - 0.25 * ad_trigamma(0.5 * nu) + 0.5 / nu;
  for (int k = 0; k < 4; k++)
    for (int l = 0; l <= k; l++) H(k, l) = -c * (Dab[k][l] / D - Da[k] * Da[l] / (D * D));
  for (int k = 0; k < 4; k++)
    if (k != 1) H(k > 1 ? k : 1, k > 1 ? 1 : k) += -0.5 * Da[k] / D;
  H(3, 1) += 1 / s;
  H(1, 1) = A2 - Da[1] / D + c * Da[1] * Da[1] / (D * D);
  H(3, 3) -= nu / (s * s);
  sym(h, 4);
}

static void el_poisson_log(const double *x, double *f, double *g, double *h) {
  double n = x[0], a = x[1], ea = exp(a);
  *f = (n == 0 && a == -INFINITY) ? 0 : n * a - ea - lgamma(n + 1);
  g[0] = 0; g[1] = n - ea;
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(1, 1) = -ea;
}

static void el_bernoulli_logit(const double *x, double *f, double *g, double *h) {
  double n = x[0], a = x[1], p = ad_inv_logit(a);
  *f = n * a - ad_log1p_exp(a);
  g[0] = 0; g[1] = n - p;
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(1, 1) = -p * (1 - p);
}

static void el_binomial_logit(const double *x, double *f, double *g, double *h) {
  double n = x[0], N = x[1], a = x[2], p = ad_inv_logit(a);
  *f = lgamma(N + 1) - lgamma(n + 1) - lgamma(N - n + 1) + n * a - N * ad_log1p_exp(a);
  g[0] = 0; g[1] = 0; g[2] = n - N * p;
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  H(2, 2) = -N * p * (1 - p);
}


/* beta(y | a, b) = (a-1) log y + (b-1) log(1-y) - log B(a, b) */
static void el_beta(const double *x, double *f, double *g, double *h) {
  double y = x[0], a = x[1], b = x[2], ly = log(y), l1y = log1p(-y);
  double pab = ad_digamma(a + b);
  *f = (a - 1) * ly + (b - 1) * l1y - ad_lbeta(a, b);
  g[0] = (a - 1) / y - (b - 1) / (1 - y);
  g[1] = ly - ad_digamma(a) + pab;
  g[2] = l1y - ad_digamma(b) + pab;
  if (!h) return;
  double tab = ad_trigamma(a + b);
  H(0, 0) = -(a - 1) / (y * y) - (b - 1) / ((1 - y) * (1 - y));
  H(1, 0) = 1 / y; H(2, 0) = -1 / (1 - y);
  H(1, 1) = tab - ad_trigamma(a); H(2, 1) = tab; H(2, 2) = tab - ad_trigamma(b);
  sym(h, 3);
}

/* neg_binomial_2_log(n | eta, phi), mean mu = e^eta:
** lgamma(n+phi) - lgamma(n+1) - lgamma(phi) + phi (log phi - L) + n (eta - L),
** L = log(mu + phi) = log_sum_exp(eta, log phi). */
static void el_neg_binomial_2_log(const double *x, double *f, double *g, double *h) {
  double n = x[0], eta = x[1], phi = x[2], lphi = log(phi);
  double L = eta > lphi ? eta + log1p(exp(lphi - eta)) : lphi + log1p(exp(eta - lphi));
  double s = ad_inv_logit(eta - lphi), e = exp(-L); /* mu/(mu+phi), 1/(mu+phi) */
  /* lgamma(n+phi) - lgamma(phi) cancels for large phi: a short sum of logs
  ** instead; phi (log phi - L) = -phi log1p(mu/phi) */
  double lg = 0;
  if (n < 64)
    for (int k = 0; k < (int)n; k++) lg += log(phi + k);
  else
    lg = lgamma(n + phi) - lgamma(phi);
  *f = lg - lgamma(n + 1) - phi * log1p(exp(eta - lphi)) + n * (eta - L);
  g[0] = 0;
  g[1] = n - (phi + n) * s;
  g[2] = ad_digamma(n + phi) - ad_digamma(phi) + lphi + 1 - L - (phi + n) * e;
  if (!h) return;
  memset(h, 0, 16 * sizeof *h);
  double mu = exp(eta);
  H(1, 1) = -(phi + n) * s * (1 - s);
  H(2, 1) = -s + (phi + n) * s * e;
  H(2, 2) = ad_trigamma(n + phi) - ad_trigamma(phi) + 1 / phi - e - (mu - n) * e * e;
  sym(h, 3);
}

/* log Phi(w) for w = sgn (y - mu) / sigma, sgn = +1 (lcdf) or -1 (lccdf):
** f'(w) = r, f''(w) = -r (w + r), then the chain rule through w. */
static void lcdf_normal(double sgn, const double *x, double *f, double *g, double *h) {
  double s = x[2], w = sgn * (x[0] - x[1]) / s, r;
  *f = ad_log_Phi(w, &r);
  double wa[3] = {sgn / s, -sgn / s, -w / s};
  for (int k = 0; k < 3; k++) g[k] = r * wa[k];
  if (!h) return;
  double r2 = -r * (w + r), s2 = s * s;
  double wab[3][3] = {{0, 0, -sgn / s2}, {0, 0, sgn / s2}, {-sgn / s2, sgn / s2, 2 * w / s2}};
  for (int k = 0; k < 3; k++)
    for (int l = 0; l < 3; l++) H(k, l) = r2 * wa[k] * wa[l] + r * wab[k][l];
}

static void el_normal_lcdf(const double *x, double *f, double *g, double *h) {
  lcdf_normal(1, x, f, g, h);
}
static void el_normal_lccdf(const double *x, double *f, double *g, double *h) {
  lcdf_normal(-1, x, f, g, h);
}

/* student_t_lccdf(y | nu, mu, s) = log P(T > t), t = (y - mu)/s:
** P(T > t) = I_x(nu/2, 1/2) / 2 for t >= 0 (1 minus that below), x = nu/(nu+t^2). */
static void el_student_t_lccdf(const double *x, double *f, double *g, double *h) {
  double nu = x[1], s = x[3], t = (x[0] - x[2]) / s, a = 0.5 * nu;
  double lS, dt, dnu, q = nu + t * t;
  if (t == 0) {
    lS = -LN2;
    dt = -exp(lgamma(a + 0.5) - lgamma(a) - 0.5 * (log(nu) + LOG_PI)) / 0.5;
    dnu = 0;
  } else {
    double Ia, I = ad_inc_beta(a, 0.5, nu / q, &Ia, NULL);
    double S = t > 0 ? 0.5 * I : 1 - 0.5 * I;
    lS = t > 0 ? log(0.5 * I) : log1p(-0.5 * I);
    /* log pdf of T at t, and dI/dx dx/dnu by logs: both tails stay finite */
    double lp = lgamma(a + 0.5) - lgamma(a) - 0.5 * (log(nu) + LOG_PI) - (a + 0.5) * log1p(t * t / nu);
    double ldIx = (a - 1) * log(nu / q) - 0.5 * log(t * t / q) - ad_lbeta(a, 0.5);
    double ldx = 2 * log(fabs(t)) - 2 * log(q);
    dt = -exp(lp - lS);
    double dS = (t > 0 ? 0.5 : -0.5) * (0.5 * Ia + exp(ldIx + ldx));
    dnu = dS / S;
  }
  *f = lS;
  g[0] = dt / s; g[1] = dnu; g[2] = -dt / s; g[3] = -dt * t / s;
  if (!h) return;
  /* in t: (log S)'' = -r ((nu+1) t / (nu + t^2) + r) with r = -p/S = dt */
  double d2 = -dt * ((nu + 1) * t / q + dt), s2 = s * s;
  double ta[4] = {1 / s, 0, -1 / s, -t / s};
  double tab[4][4] = {{0, 0, 0, -1 / s2}, {0}, {0, 0, 0, 1 / s2}, {-1 / s2, 0, 1 / s2, 2 * t / s2}};
  for (int k = 0; k < 4; k++)
    for (int l = 0; l < 4; l++)
      H(k, l) = (k == 1 || l == 1) ? NAN : d2 * ta[k] * ta[l] + dt * tab[k][l];
}

/* log_mix(theta, l1, l2) = log(theta e^l1 + (1 - theta) e^l2) */
static void el_log_mix(const double *x, double *f, double *g, double *h) {
  double th = x[0], A = log(th) + x[1], B = log1p(-th) + x[2];
  double m = A > B ? A : B;
  double lse = m == -INFINITY ? m : m + log(exp(A - m) + exp(B - m));
  double wa = exp(A - lse), wb = exp(B - lse);
  *f = lse;
  g[0] = wa / th - wb / (1 - th);
  g[1] = wa;
  g[2] = wb;
  if (!h) return;
  H(0, 0) = -g[0] * g[0];
  H(1, 0) = wa / th - g[0] * wa;
  H(2, 0) = -wb / (1 - th) - g[0] * wb;
  H(1, 1) = wa * wb; H(2, 1) = -wa * wb; H(2, 2) = wa * wb;
  sym(h, 3);
}

typedef void (*elem_fn)(const double *, double *, double *, double *);

static const elem_fn ELEM[AD_DIST_COUNT_] = {
  [AD_DIST_NORMAL] = el_normal, [AD_DIST_STUDENT_T] = el_student_t,
  [AD_DIST_CAUCHY] = el_cauchy, [AD_DIST_LOGNORMAL] = el_lognormal,
  [AD_DIST_GAMMA] = el_gamma, [AD_DIST_EXPONENTIAL] = el_exponential,
  [AD_DIST_POISSON_LOG] = el_poisson_log,
  [AD_DIST_BERNOULLI_LOGIT] = el_bernoulli_logit,
  [AD_DIST_BINOMIAL_LOGIT] = el_binomial_logit,
  [AD_DIST_BETA] = el_beta, [AD_DIST_NEG_BINOMIAL_2_LOG] = el_neg_binomial_2_log,
  [AD_DIST_NORMAL_LCDF] = el_normal_lcdf, [AD_DIST_NORMAL_LCCDF] = el_normal_lccdf,
  [AD_DIST_STUDENT_T_LCCDF] = el_student_t_lccdf, [AD_DIST_LOG_MIX] = el_log_mix,
};

void ad_dist_elem(int dist, const double *x, double *f, double *g, double *h) {
  ELEM[dist](x, f, g, h);
}

