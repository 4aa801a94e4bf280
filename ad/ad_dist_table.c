/* SPDX-License-Identifier: MIT */
/* The table of ad_dist.h's functions, by the AD_DIST_OPS list: names,
** argument counts, their implementations (ad_dist_*.c, ad_cdf_*.c), and the
** rules derived from them (data arguments, second order, counts). */
#include <math.h>
#include <stdint.h>
#include "ad_dist.h"
#include "ad_dist_impl.h"

#define AD_X_(e, s, n) extern const ad_dist_impl ad_dist_impl_##e;
AD_DIST_OPS(AD_X_)
#undef AD_X_

static const ad_dist_impl *const IMPL[AD_DIST_COUNT_] = {
#define AD_X_(e, s, n) [AD_DIST_##e] = &ad_dist_impl_##e,
  AD_DIST_OPS(AD_X_)
#undef AD_X_
};

const ad_dist_impl *ad_dist_get(int dist) {
  return dist >= 0 && dist < AD_DIST_COUNT_ ? IMPL[dist] : NULL;
}

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

int ad_dist_data_only(int dist, int k) { return (IMPL[dist]->data >> k) & 1; }
int ad_dist_has_second(int dist, int k) { return !((IMPL[dist]->nosecond >> k) & 1); }
int ad_dist_is_function(int dist) { return (IMPL[dist]->flags & AD_DF_FUNC) != 0; }
int ad_dist_count_kind(int dist) { return IMPL[dist]->counts; }

void ad_dist_elem(int dist, const double *x, double *f, double *g, double *h) {
  IMPL[dist]->elem(x, f, g, h);
}

/* Is v a count (a non-negative integer), and within [0, hi]? (A cast, not
** floor: this runs over every element of the data.) */
static inline int is_count(double v, double hi) {
  return v >= 0 && v <= hi && v < 9e18 && v == (double)(int64_t)v;
}

/* The first element i of args[0] (and args[1]) that breaks kind; n if none. */
static size_t first_bad(const ad_tape *t, int kind, const ad_arg *args, size_t n, int *k) {
  const double *c = args[0].var != AD_NOVAR ? t->val + args[0].var : args[0].c ? args[0].c : &args[0].cval;
  size_t sc = args[0].n > 1;
  *k = 0;
  if (kind != AD_CNT_BOUNDED) {
    double hi = kind == AD_CNT_BINARY ? 1 : INFINITY;
    for (size_t i = 0; i < n; i++)
      if (!is_count(c[i * sc], hi)) return i;
    return n;
  }
  const double *N = args[1].var != AD_NOVAR ? t->val + args[1].var : args[1].c ? args[1].c : &args[1].cval;
  size_t sN = args[1].n > 1;
  for (size_t i = 0; i < n; i++) {
    if (!is_count(N[i * sN], INFINITY)) { *k = 1; return i; }
    if (!is_count(c[i * sc], N[i * sN])) return i;
  }
  return n;
}

int ad_dist_check_counts(const ad_tape *t, int dist, const ad_arg *args, size_t n,
                         size_t *bad, size_t *elem) {
  int kind = IMPL[dist]->counts, k;
  if (kind == AD_CNT_NONE) return 0;
  size_t i = first_bad(t, kind, args, n, &k);
  if (i == n) return 0;
  if (bad) *bad = (size_t)k;
  if (elem) *elem = i;
  return AD_ECOUNT;
}
