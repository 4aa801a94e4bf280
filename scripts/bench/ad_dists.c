/* SPDX-License-Identifier: MIT */
/*
** The gradient of each new log density over 1e4 data points (the outcome
** data, the parameters scalar vars: record the node, one reverse sweep)
** against a plain-C loop of the same formula computing the value and the
** parameters' partials, interleaved, repeated; medians and ratios printed.
** Floor: <= 1.2x (issue 30).
**   build/ad_dists [reps [name ad|plain]]   (a name: that case alone, one
**   side, for perf stat)
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "ad_dist.h"
#include "ad_special.h"

#define N 10000
#define HALF_LOG_2PI 0.91893853320467274178
#define LOG_2PI 1.83787706640934548356
#define LN2 0.69314718055994530942
static volatile double sink;

/* A plain loop: value and partials in the parameters p[0..np-1]. */
typedef double (*plain_fn)(const double *y, const double *p, double *g);

static double p_std_normal(const double *y, const double *p, double *g) {
  double lp = 0;
  (void)p;
  for (int i = 0; i < N; i++) {
    lp += -0.5 * y[i] * y[i] - HALF_LOG_2PI;
    g[i] = -y[i];
  }
  return lp;
}
static double p_double_exponential(const double *y, const double *p, double *g) {
  double lp = 0, gm = 0, gs = 0, m = p[0], s = p[1];
  for (int i = 0; i < N; i++) {
    double u = y[i] - m, a = fabs(u), sg = u > 0 ? 1 : u < 0 ? -1 : 0;
    lp += -LN2 - log(s) - a / s;
    gm += sg / s;
    gs += -1 / s + a / (s * s);
  }
  g[0] = gm, g[1] = gs;
  return lp;
}
static double p_logistic(const double *y, const double *p, double *g) {
  double lp = 0, gm = 0, gs = 0, m = p[0], s = p[1];
  for (int i = 0; i < N; i++) {
    double z = (y[i] - m) / s, q = ad_inv_logit(z), dz = 1 - 2 * q;
    lp += -z - log(s) - 2 * ad_log1p_exp(-z);
    gm += -dz / s;
    gs += -(1 + z * dz) / s;
  }
  g[0] = gm, g[1] = gs;
  return lp;
}
static double p_gumbel(const double *y, const double *p, double *g) {
  double lp = 0, gm = 0, gs = 0, m = p[0], b = p[1];
  for (int i = 0; i < N; i++) {
    double z = (y[i] - m) / b, e = exp(-z), dz = e - 1;
    lp += -log(b) - z - e;
    gm += -dz / b;
    gs += -(1 + z * dz) / b;
  }
  g[0] = gm, g[1] = gs;
  return lp;
}
static double p_skew_normal(const double *y, const double *p, double *g) {
  double lp = 0, gx = 0, go = 0, ga = 0, xi = p[0], om = p[1], al = p[2];
  for (int i = 0; i < N; i++) {
    double z = (y[i] - xi) / om, r, l = ad_log_Phi(al * z, &r), dz = -z + al * r;
    lp += LN2 - HALF_LOG_2PI - log(om) - 0.5 * z * z + l;
    gx += -dz / om;
    go += -(1 + z * dz) / om;
    ga += z * r;
  }
  g[0] = gx, g[1] = go, g[2] = ga;
  return lp;
}
static double p_inv_gamma(const double *y, const double *p, double *g) {
  double lp = 0, ga = 0, gb = 0, a = p[0], b = p[1];
  for (int i = 0; i < N; i++) {
    double ly = log(y[i]), lb = log(b);
    lp += a * lb - lgamma(a) - (a + 1) * ly - b / y[i];
    ga += lb - ad_digamma(a) - ly;
    gb += a / b - 1 / y[i];
  }
  g[0] = ga, g[1] = gb;
  return lp;
}
static double p_weibull(const double *y, const double *p, double *g) {
  double lp = 0, ga = 0, gs = 0, al = p[0], sg = p[1];
  for (int i = 0; i < N; i++) {
    double ly = log(y[i]), ls = log(sg), lr = ly - ls, w = exp(al * lr);
    lp += log(al) + (al - 1) * ly - al * ls - w;
    ga += 1 / al + lr - w * lr;
    gs += al * (w - 1) / sg;
  }
  g[0] = ga, g[1] = gs;
  return lp;
}
static double p_frechet(const double *y, const double *p, double *g) {
  double lp = 0, ga = 0, gs = 0, al = p[0], sg = p[1];
  for (int i = 0; i < N; i++) {
    double ly = log(y[i]), ls = log(sg), lr = ls - ly, w = exp(al * lr);
    lp += log(al) + al * ls - (1 + al) * ly - w;
    ga += 1 / al + lr - w * lr;
    gs += al * (1 - w) / sg;
  }
  g[0] = ga, g[1] = gs;
  return lp;
}
static double p_pareto(const double *y, const double *p, double *g) {
  double lp = 0, gm = 0, ga = 0, ym = p[0], al = p[1];
  for (int i = 0; i < N; i++) {
    double ly = log(y[i]), lm = log(ym);
    if (y[i] < ym) { lp = -INFINITY; continue; }
    lp += log(al) + al * lm - (al + 1) * ly;
    gm += al / ym;
    ga += 1 / al + lm - ly;
  }
  g[0] = gm, g[1] = ga;
  return lp;
}
static double p_chi_square(const double *y, const double *p, double *g) {
  double lp = 0, gn = 0, hn = 0.5 * p[0];
  for (int i = 0; i < N; i++) {
    double ly = log(y[i]);
    lp += -hn * LN2 - lgamma(hn) + (hn - 1) * ly - 0.5 * y[i];
    gn += 0.5 * (ly - LN2 - ad_digamma(hn));
  }
  g[0] = gn;
  return lp;
}
static double p_inv_chi_square(const double *y, const double *p, double *g) {
  double lp = 0, gn = 0, hn = 0.5 * p[0];
  for (int i = 0; i < N; i++) {
    double ly = log(y[i]);
    lp += -hn * LN2 - lgamma(hn) - (hn + 1) * ly - 0.5 / y[i];
    gn += -0.5 * (ly + LN2 + ad_digamma(hn));
  }
  g[0] = gn;
  return lp;
}
static double p_beta_proportion(const double *y, const double *p, double *g) {
  double lp = 0, gm = 0, gk = 0, mu = p[0], k = p[1];
  for (int i = 0; i < N; i++) {
    double a = mu * k, b = (1 - mu) * k, ly = log(y[i]), l1y = log1p(-y[i]);
    double pk = ad_digamma(k), fa = ly - ad_digamma(a) + pk, fb = l1y - ad_digamma(b) + pk;
    lp += (a - 1) * ly + (b - 1) * l1y - ad_lbeta(a, b);
    gm += k * (fa - fb);
    gk += mu * fa + (1 - mu) * fb;
  }
  g[0] = gm, g[1] = gk;
  return lp;
}
static double p_uniform(const double *y, const double *p, double *g) {
  double lp = 0, ga = 0, gb = 0, a = p[0], b = p[1];
  for (int i = 0; i < N; i++) {
    if (!(y[i] >= a && y[i] <= b)) { lp = -INFINITY; continue; }
    lp += -log(b - a);
    ga += 1 / (b - a);
    gb += -1 / (b - a);
  }
  g[0] = ga, g[1] = gb;
  return lp;
}
static double p_von_mises(const double *y, const double *p, double *g) {
  double lp = 0, gm = 0, gk = 0, m = p[0], k = p[1];
  for (int i = 0; i < N; i++) {
    double u = y[i] - m, c = cos(u), s = sin(u);
    lp += k * c - LOG_2PI - ad_log_bessel_i0(k);
    gm += k * s;
    gk += c - ad_bessel_i1_i0(k);
  }
  g[0] = gm, g[1] = gk;
  return lp;
}
static double p_poisson(const double *y, const double *p, double *g) {
  double lp = 0, gl = 0, l = p[0];
  for (int i = 0; i < N; i++) {
    lp += (y[i] == 0 ? 0 : y[i] * log(l)) - l - lgamma(y[i] + 1);
    gl += y[i] / l - 1;
  }
  g[0] = gl;
  return lp;
}
static double p_binomial(const double *y, const double *p, double *g) {
  double lp = 0, gt = 0, th = p[0], Nn = 20;
  for (int i = 0; i < N; i++) {
    double n = y[i], m = Nn - n;
    lp += ad_lchoose(Nn, n) + (n == 0 ? 0 : n * log(th)) + (m == 0 ? 0 : m * log1p(-th));
    gt += (n == 0 ? 0 : n / th) - (m == 0 ? 0 : m / (1 - th));
  }
  g[0] = gt;
  return lp;
}
static double p_bernoulli(const double *y, const double *p, double *g) {
  double lp = 0, gt = 0, th = p[0];
  for (int i = 0; i < N; i++) {
    lp += y[i] == 1 ? log(th) : log1p(-th);
    gt += y[i] == 1 ? 1 / th : -1 / (1 - th);
  }
  g[0] = gt;
  return lp;
}
static double p_neg_binomial(const double *y, const double *p, double *g) {
  double lp = 0, ga = 0, gb = 0, a = p[0], b = p[1];
  for (int i = 0; i < N; i++) {
    double n = y[i], l1b = log1p(b);
    lp += lgamma(n + a) - lgamma(a) - lgamma(n + 1) + a * log(b) - (a + n) * l1b;
    ga += ad_digamma(n + a) - ad_digamma(a) + log(b) - l1b;
    gb += a / b - (a + n) / (1 + b);
  }
  g[0] = ga, g[1] = gb;
  return lp;
}
/* the formula neg_binomial_2 evaluates: lgamma(n + phi) - lgamma(phi) as a
** sum of logs for small n, the rest through eta = log mu, stable for large phi */
static double p_neg_binomial_2(const double *y, const double *p, double *g) {
  double lp = 0, gm = 0, gp = 0, mu = p[0], phi = p[1];
  for (int i = 0; i < N; i++) {
    double n = y[i], eta = log(mu), lphi = log(phi);
    double L = eta > lphi ? eta + log1p(exp(lphi - eta)) : lphi + log1p(exp(eta - lphi));
    double s = ad_inv_logit(eta - lphi), e = exp(-L), lgr = 0;
    if (n < 64) for (int k = 0; k < (int)n; k++) lgr += log(phi + k);
    else lgr = lgamma(n + phi) - lgamma(phi);
    lp += lgr - lgamma(n + 1) - phi * log1p(exp(eta - lphi)) + n * (eta - L);
    gm += (n - (phi + n) * s) / mu;
    gp += ad_digamma(n + phi) - ad_digamma(phi) + lphi + 1 - L - (phi + n) * e;
  }
  g[0] = gm, g[1] = gp;
  return lp;
}
static double p_beta_binomial(const double *y, const double *p, double *g) {
  double lp = 0, ga = 0, gb = 0, a = p[0], b = p[1], Nn = 20;
  for (int i = 0; i < N; i++) {
    double n = y[i], t = ad_digamma(a + b) - ad_digamma(Nn + a + b);
    lp += ad_lchoose(Nn, n) + ad_lbeta(n + a, Nn - n + b) - ad_lbeta(a, b);
    ga += ad_digamma(n + a) - ad_digamma(a) + t;
    gb += ad_digamma(Nn - n + b) - ad_digamma(b) + t;
  }
  g[0] = ga, g[1] = gb;
  return lp;
}

typedef struct {
  int dist;
  plain_fn plain;
  int data;      /* outcome kind: 0 real, 1 positive, 2 in (0,1), 3 counts, 4 binary, 5 counts <= 20 */
  int np;        /* parameters (after the outcome; binomial's N is data) */
  double p[3];
} bench_case;

static const bench_case CASES[] = {
  {AD_DIST_STD_NORMAL, p_std_normal, 0, 0, {0}},
  {AD_DIST_DOUBLE_EXPONENTIAL, p_double_exponential, 0, 2, {0.1, 1.3}},
  {AD_DIST_LOGISTIC, p_logistic, 0, 2, {0.1, 1.3}},
  {AD_DIST_GUMBEL, p_gumbel, 0, 2, {0.1, 1.3}},
  {AD_DIST_SKEW_NORMAL, p_skew_normal, 0, 3, {0.1, 1.3, 0.7}},
  {AD_DIST_INV_GAMMA, p_inv_gamma, 1, 2, {2.5, 1.7}},
  {AD_DIST_WEIBULL, p_weibull, 1, 2, {2.5, 1.7}},
  {AD_DIST_FRECHET, p_frechet, 1, 2, {2.5, 1.7}},
  {AD_DIST_PARETO, p_pareto, 1, 2, {0.01, 1.7}},
  {AD_DIST_CHI_SQUARE, p_chi_square, 1, 1, {2.5}},
  {AD_DIST_INV_CHI_SQUARE, p_inv_chi_square, 1, 1, {2.5}},
  {AD_DIST_BETA_PROPORTION, p_beta_proportion, 2, 2, {0.4, 5}},
  {AD_DIST_UNIFORM, p_uniform, 2, 2, {0, 1}},
  {AD_DIST_VON_MISES, p_von_mises, 0, 2, {0.1, 1.7}},
  {AD_DIST_POISSON, p_poisson, 3, 1, {2.5}},
  {AD_DIST_BINOMIAL, p_binomial, 5, 1, {0.35}},
  {AD_DIST_BERNOULLI, p_bernoulli, 4, 1, {0.3}},
  {AD_DIST_NEG_BINOMIAL, p_neg_binomial, 3, 2, {2.5, 0.7}},
  {AD_DIST_NEG_BINOMIAL_2, p_neg_binomial_2, 3, 2, {2.5, 1.7}},
  {AD_DIST_BETA_BINOMIAL, p_beta_binomial, 5, 2, {2.5, 1.7}},
};

static double gbuf[N];

static double run_plain(const bench_case *c, const double *y) {
  double g3[3], *g = c->np ? g3 : gbuf, t0 = bench_now();
  double lp = c->plain(y, c->p, g);
  sink = lp + (c->np ? g[0] : 0);
  return bench_now() - t0;
}

static ad_idx yin[N];

static double run_ad(ad_tape *t, const bench_case *c, const double *y, const double *Nv) {
  double t0 = bench_now(), v, g[3] = {0};
  ad_region_begin(t);
  ad_idx p = 0, out, in[3];
  ad_arg args[4];
  if (!c->np) { /* std_normal: the gradient in y, a vector var */
    ad_idx yv;
    ad_vars_new(t, N, y, &yv);
    args[0] = ad_arg_var(yv, N);
    ad_dist(t, c->dist, args, &v, &out, NULL);
    for (int i = 0; i < N; i++) yin[i] = yv + (ad_idx)i;
    ad_grad(t, out, N, yin, gbuf);
    sink = v + gbuf[0];
    ad_region_end(t);
    return bench_now() - t0;
  }
  ad_vars_new(t, (size_t)c->np, c->p, &p);
  int k = 0;
  args[k++] = ad_arg_const(y, N);
  if (c->dist == AD_DIST_BINOMIAL || c->dist == AD_DIST_BETA_BINOMIAL) args[k++] = ad_arg_scalar(Nv[0]);
  for (int j = 0; j < c->np; j++) {
    in[j] = p + (ad_idx)j;
    args[k++] = ad_arg_var(in[j], 1);
  }
  ad_dist(t, c->dist, args, &v, &out, NULL);
  ad_grad(t, out, (size_t)c->np, in, g);
  sink = v + g[0];
  ad_region_end(t);
  return bench_now() - t0;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 21;
  if (reps < 1) reps = 1;
  double *y[6], Nv[N];
  for (int k = 0; k < 6; k++) y[k] = malloc(N * sizeof(double));
  unsigned s = 12345;
  for (int i = 0; i < N; i++) {
    s = s * 1103515245u + 12345u;
    double u = ((s >> 8) + 0.5) / 16777216.0;
    y[0][i] = 4 * u - 2;
    y[1][i] = 0.05 + 3 * u;
    y[2][i] = 0.02 + 0.96 * u;
    y[3][i] = floor(8 * u);
    y[4][i] = u < 0.3;
    y[5][i] = floor(20.999 * u);
    Nv[i] = 20;
  }
  ad_tape t;
  ad_tape_init(&t);
  double *ta = malloc((size_t)reps * sizeof(double)), *tp = malloc((size_t)reps * sizeof(double));
  if (argc > 3) { /* one case, one side, reps times */
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
      const bench_case *bc = &CASES[c];
      if (strcmp(ad_dist_name(bc->dist), argv[2])) continue;
      for (int r = 0; r < reps; r++)
        if (argv[3][0] == 'a') run_ad(&t, bc, y[bc->data], Nv);
        else run_plain(bc, y[bc->data]);
    }
    return 0;
  }
  printf("%-26s %12s %12s %7s\n", "gradient over 1e4 points", "ad (us)", "plain C (us)", "ratio");
  int over = 0;
  for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
    const bench_case *bc = &CASES[c];
    run_ad(&t, bc, y[bc->data], Nv); /* warm the tape */
    for (int r = 0; r < reps; r++) { /* interleaved */
      ta[r] = run_ad(&t, bc, y[bc->data], Nv);
      tp[r] = run_plain(bc, y[bc->data]);
    }
    double a = bench_median(ta, reps), p = bench_median(tp, reps);
    over += a / p > 1.2;
    printf("%-26s %12.1f %12.1f %7.2f\n", ad_dist_name(bc->dist), a * 1e6, p * 1e6, a / p);
  }
  printf("%d of %d above 1.2x\n", over, (int)(sizeof CASES / sizeof CASES[0]));
  ad_tape_free(&t);
  return 0;
}
