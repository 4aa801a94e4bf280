/* Log densities: element functions with exact gradients and Hessians, and the
** recording driver (a hand-specialized loop for normal, generic otherwise). */
#include <math.h>
#include <string.h>
#include "ad_dist.h"
#include "ad_special.h"

#define LOG_PI 1.14472988584940017414
#define HALF_LOG_2PI 0.91893853320467274178

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
    case AD_DIST_BERNOULLI_LOGIT: return k == 0;
    case AD_DIST_BINOMIAL_LOGIT: return k < 2;
    default: return 0;
  }
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

typedef void (*elem_fn)(const double *, double *, double *, double *);

static const elem_fn ELEM[AD_DIST_COUNT_] = {
  [AD_DIST_NORMAL] = el_normal, [AD_DIST_STUDENT_T] = el_student_t,
  [AD_DIST_CAUCHY] = el_cauchy, [AD_DIST_LOGNORMAL] = el_lognormal,
  [AD_DIST_GAMMA] = el_gamma, [AD_DIST_EXPONENTIAL] = el_exponential,
  [AD_DIST_POISSON_LOG] = el_poisson_log,
  [AD_DIST_BERNOULLI_LOGIT] = el_bernoulli_logit,
  [AD_DIST_BINOMIAL_LOGIT] = el_binomial_logit,
};

void ad_dist_elem(int dist, const double *x, double *f, double *g, double *h) {
  ELEM[dist](x, f, g, h);
}

/* ----------------------------------------------------------- recording */

/* Pointer + stride view of an argument's values (stride 0 broadcasts). */
static const double *vals(const ad_tape *t, const ad_arg *a, size_t *stride) {
  *stride = a->n > 1;
  if (a->var != AD_NOVAR) return t->val + a->var;
  return a->c ? a->c : &a->cval;
}

/* normal: sigma scalar hoists 1/sigma and log(sigma) out of the loop, and
** the all-scalar-parameter case is a tight loop as fast as the plain sum. */
static double normal_loop(const ad_tape *t, const ad_arg *a, size_t n, double **pv,
                          double acc[3]) {
  size_t sy, sm, ss;
  const double *y = vals(t, &a[0], &sy), *mu = vals(t, &a[1], &sm),
               *sg = vals(t, &a[2], &ss);
  double lp = 0;
  if (!ss) {
    double inv = 1 / sg[0], sz = 0, szz = 0;
    if (sy == 1 && sm == 0 && !pv[0]) {
      double m = mu[0];
      for (size_t i = 0; i < n; i++) {
        double z = (y[i] - m) * inv;
        sz += z;
        szz += z * z;
      }
    } else {
      for (size_t i = 0; i < n; i++) {
        double z = (y[i * sy] - mu[i * sm]) * inv;
        sz += z;
        szz += z * z;
        if (pv[0]) pv[0][i] = -z * inv;
        if (pv[1]) pv[1][i] = z * inv;
      }
    }
    double dn = (double)n;
    lp = -0.5 * szz - dn * (log(sg[0]) + HALF_LOG_2PI);
    acc[0] = -sz * inv;
    acc[1] = sz * inv;
    acc[2] = (szz - dn) * inv;
    return lp;
  }
  acc[0] = acc[1] = acc[2] = 0;
  for (size_t i = 0; i < n; i++) {
    double s = sg[i], inv = 1 / s, z = (y[i * sy] - mu[i * sm]) * inv;
    double gy = -z * inv, gs = (z * z - 1) * inv;
    lp += -0.5 * z * z - log(s);
    if (pv[0]) pv[0][i] = gy; else acc[0] += gy;
    if (pv[1]) pv[1][i] = -gy; else acc[1] -= gy;
    pv[2][i] = gs;
  }
  return lp - (double)n * HALF_LOG_2PI;
}

int ad_dist(ad_tape *t, int dist, const ad_arg *args, double *value, ad_idx *y,
            size_t *bad) {
  if (dist < 0 || dist >= AD_DIST_COUNT_) return AD_EARG;
  int nargs = ad_dist_nargs(dist), rc;
  size_t n, nent = 0;
  if ((rc = ad_args_length((size_t)nargs, args, &n, bad))) return rc;
  if ((rc = ad_args_check(t, (size_t)nargs, args))) return rc;
  int anyvar = 0;
  for (int k = 0; k < nargs; k++) {
    if (!ad_arg_isvar(&args[k])) continue;
    if (ad_dist_data_only(dist, k)) {
      if (bad) *bad = (size_t)k;
      return AD_EARG;
    }
    anyvar = 1;
    nent += args[k].n;
  }
  *y = AD_NOVAR;
  if (anyvar && (rc = ad_reserve(t, 1, nent, 1))) return rc;
  ad_vec_aux *aux = NULL;
  if (anyvar) {
    if (!(aux = ad_tape_alloc(t, sizeof *aux))) return AD_ENOMEM;
    memset(aux, 0, sizeof *aux);
    aux->dist = dist;
    aux->nargs = nargs;
    aux->n = n;
    memcpy(aux->args, args, (size_t)nargs * sizeof *args);
  }
  /* Per-element partials go straight to the entries; scalars accumulate. */
  double *pv[4] = {NULL, NULL, NULL, NULL}, acc[4] = {0, 0, 0, 0};
  ad_idx e = t->nent;
  for (int k = 0; k < nargs; k++) {
    if (!anyvar || !ad_arg_isvar(&args[k])) continue;
    if (args[k].n > 1) pv[k] = t->par + e;
    e += (ad_idx)args[k].n;
  }
  double lp = 0;
  if (dist == AD_DIST_NORMAL && (args[2].n == 1 || pv[2])) {
    lp = normal_loop(t, args, n, pv, acc);
  } else {
    for (size_t i = 0; i < n; i++) {
      double x[4], g[4], f;
      for (int k = 0; k < nargs; k++) x[k] = ad_arg_at(t, &args[k], i);
      ELEM[dist](x, &f, g, NULL);
      lp += f;
      for (int k = 0; k < nargs; k++) {
        if (pv[k]) pv[k][i] = g[k]; else acc[k] += g[k];
      }
    }
  }
  *value = lp;
  if (!anyvar) return 0;
  /* Entries: per argument, in order. */
  ad_idx o = t->nvar++, e0 = t->nent;
  t->val[o] = lp;
  e = e0;
  for (int k = 0; k < nargs; k++) {
    if (!ad_arg_isvar(&args[k])) continue;
    for (size_t i = 0; i < args[k].n; i++) {
      t->ent[e + i].out = o;
      t->ent[e + i].in = args[k].var + (ad_idx)i;
    }
    if (args[k].n == 1) t->par[e] = acc[k];
    e += (ad_idx)args[k].n;
  }
  t->nent = e;
  ad_node *nd = &t->node[t->nnode++];
  nd->op = AD_OP_DIST;
  nd->flags = 0;
  nd->out = o; nd->nout = 1; nd->e0 = e0; nd->ne = e - e0;
  nd->u.aux = aux;
  *y = o;
  return 0;
}
