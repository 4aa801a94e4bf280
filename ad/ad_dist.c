/* SPDX-License-Identifier: MIT */
/* Log densities: the recording drivers, summed (a hand-specialized loop for
** normal with a scalar sigma, each density's own loop otherwise) and per
** element. The element functions are in ad_dist_*.c and ad_cdf_*.c. */
#include <math.h>
#include <string.h>
#include "ad_dist.h"
#include "ad_dist_impl.h"

#define HALF_LOG_2PI 0.91893853320467274178

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

/* Counts must be data, and counts. */
static int check_args(const ad_tape *t, int dist, const ad_arg *args, size_t n, size_t *bad) {
  for (int k = 0; k < ad_dist_nargs(dist); k++)
    if (ad_arg_isvar(&args[k]) && ad_dist_data_only(dist, k)) {
      if (bad) *bad = (size_t)k;
      return AD_EARG;
    }
  return ad_dist_check_counts(t, dist, args, n, bad, NULL);
}

int ad_dist(ad_tape *t, int dist, const ad_arg *args, double *value, ad_idx *y,
            size_t *bad) {
  if (dist < 0 || dist >= AD_DIST_COUNT_ || ad_dist_is_function(dist)) return AD_EARG;
  int nargs = ad_dist_nargs(dist), rc;
  size_t n, nent = 0;
  if ((rc = ad_args_length((size_t)nargs, args, &n, bad))) return rc;
  if ((rc = ad_args_check(t, (size_t)nargs, args))) return rc;
  int anyvar = 0;
  if ((rc = check_args(t, dist, args, n, bad))) return rc;
  for (int k = 0; k < nargs; k++) {
    if (!ad_arg_isvar(&args[k])) continue;
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
    const double *p[4];
    size_t s[4];
    int one = !ad_arg_isvar(&args[0]); /* a data outcome, scalar parameters */
    for (int k = 0; k < nargs; k++) {
      p[k] = vals(t, &args[k], &s[k]);
      if (k > 0 && s[k]) one = 0;
    }
    const ad_dist_impl *im = ad_dist_get(dist);
    if (one) {
      double par[4] = {0, 0, 0, 0};
      for (int k = 1; k < nargs; k++) par[k] = p[k][0];
      lp = im->loop1(p[0], par, n, acc);
    } else {
      lp = im->loop(p, s, n, pv, acc);
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
  ad_push_node(t, AD_OP_DIST, 0, o, 1, e0, e - e0, aux);
  *y = o;
  return 0;
}

/* One output per element; entries per output: one per var argument. */
int ad_dist_each(ad_tape *t, int dist, const ad_arg *args, double *cval, ad_idx *y,
                 size_t *nout, size_t *bad) {
  if (dist < 0 || dist >= AD_DIST_COUNT_) return AD_EARG;
  int nargs = ad_dist_nargs(dist), rc, nv = 0;
  size_t n;
  if ((rc = ad_args_length((size_t)nargs, args, &n, bad))) return rc;
  if ((rc = ad_args_check(t, (size_t)nargs, args))) return rc;
  if ((rc = check_args(t, dist, args, n, bad))) return rc;
  for (int k = 0; k < nargs; k++) nv += ad_arg_isvar(&args[k]);
  *nout = n;
  *y = AD_NOVAR;
  if (!nv) {
    for (size_t i = 0; i < n; i++) {
      double x[4], g[4];
      for (int k = 0; k < nargs; k++) x[k] = ad_arg_at(t, &args[k], i);
      ad_dist_elem(dist, x, &cval[i], g, NULL);
    }
    return 0;
  }
  if (n > AD_MAXIDX / 4) return AD_ETOOBIG;
  if ((rc = ad_reserve(t, n, n * (size_t)nv, 1))) return rc;
  ad_vec_aux *aux = ad_tape_alloc(t, sizeof *aux);
  if (!aux) return AD_ENOMEM;
  memset(aux, 0, sizeof *aux);
  aux->dist = dist;
  aux->nargs = nargs;
  aux->n = n;
  memcpy(aux->args, args, (size_t)nargs * sizeof *args);
  ad_idx o = t->nvar, e = t->nent;
  for (size_t i = 0; i < n; i++) {
    double x[4], g[4];
    for (int k = 0; k < nargs; k++) x[k] = ad_arg_at(t, &args[k], i);
    ad_dist_elem(dist, x, &t->val[o + i], g, NULL);
    for (int k = 0; k < nargs; k++) {
      if (!ad_arg_isvar(&args[k])) continue;
      t->ent[e].out = o + (ad_idx)i;
      t->ent[e].in = ad_arg_varat(&args[k], i);
      t->par[e++] = g[k];
    }
  }
  ad_push_node(t, AD_OP_DIST_EACH, AD_NF_AUX, o, (ad_idx)n, t->nent, e - t->nent, aux);
  t->nvar += (ad_idx)n;
  t->nent = e;
  *y = o;
  return 0;
}
