/* SPDX-License-Identifier: MIT */
/*
** array_iter.c: the loop nest over strided arrays (array_iter.h). The run
** functions do the work; this file only finds the runs, as cheaply as it can
** so that short runs (a column of a small block) cost little more than the
** loop a C programmer would write.
*/
#include <string.h>

#include "array/array_iter.h"

void mpb_iter_init(mpb_iter *it, int ndim, const int64_t *dims) {
  it->nop = 0;
  it->ndim = ndim;
  for (int k = 0; k < ndim; k++) it->dims[k] = dims[k];
}

int mpb_iter_add(mpb_iter *it, const mpb_array *a) {
  int op = it->nop++;
  it->p[op] = a->data;
  it->es[op] = mpb_dtype_size(a->dtype);
  for (int k = 0; k < it->ndim; k++)
    it->st[op][k] = (k < a->ndim && a->dims[k] == it->dims[k]) ? a->strides[k] : 0;
  return op;
}

int mpb_iter_addp(mpb_iter *it, void *data, size_t es, const int64_t *strides) {
  int op = it->nop++;
  it->p[op] = data;
  it->es[op] = es;
  for (int k = 0; k < it->ndim; k++) it->st[op][k] = strides[k];
  return op;
}

int mpb_iter_addscalar(mpb_iter *it, void *elem, size_t es) {
  int op = it->nop++;
  it->p[op] = elem;
  it->es[op] = es;
  for (int k = 0; k < it->ndim; k++) it->st[op][k] = 0;
  return op;
}

/* Drop extent-1 dimensions, then merge dimension k+1 into k wherever every
** operand steps from the end of dimension k straight into the next index of
** k+1. Returns 0 when the shape has no element. */
static int simplify(mpb_iter *it) {
  int nd = 0;
  for (int k = 0; k < it->ndim; k++) {
    if (it->dims[k] == 0) return 0;
    if (it->dims[k] == 1) continue;
    it->dims[nd] = it->dims[k];
    for (int op = 0; op < it->nop; op++) it->st[op][nd] = it->st[op][k];
    nd++;
  }
  if (nd == 0) { /* one element */
    it->dims[0] = 1;
    for (int op = 0; op < it->nop; op++) it->st[op][0] = 0;
    nd = 1;
  }
  int m = 0;
  for (int k = 1; k < nd; k++) {
    int merge = 1;
    for (int op = 0; op < it->nop && merge; op++)
      merge = it->st[op][k] == it->st[op][m] * it->dims[m];
    if (merge) {
      it->dims[m] *= it->dims[k];
    } else {
      m++;
      it->dims[m] = it->dims[k];
      for (int op = 0; op < it->nop; op++) it->st[op][m] = it->st[op][k];
    }
  }
  it->ndim = m + 1;
  return 1;
}

int mpb_iter_run(mpb_iter *it, mpb_run_fn fn, void *ctx) {
  if (!simplify(it)) return 0;
  int nop = it->nop, nd = it->ndim;
  char *p[MPB_ITER_MAXOP];
  int64_t inner[MPB_ITER_MAXOP], step[MPB_ITER_MAXOP][MPB_ARRAY_MAXDIM];
  int64_t idx[MPB_ARRAY_MAXDIM] = {0};
  for (int op = 0; op < nop; op++) {
    p[op] = it->p[op];
    inner[op] = it->st[op][0];
    for (int k = 1; k < nd; k++) step[op][k] = it->st[op][k] * (int64_t)it->es[op];
  }
  for (;;) {
    int rc = fn(ctx, p, inner, it->dims[0]);
    if (rc) return rc;
    int k = 1;
    for (; k < nd; k++) { /* odometer over the outer dimensions */
      for (int op = 0; op < nop; op++) p[op] += step[op][k];
      if (++idx[k] < it->dims[k]) break;
      for (int op = 0; op < nop; op++) p[op] -= step[op][k] * it->dims[k];
      idx[k] = 0;
    }
    if (k == nd) return 0;
  }
}

int mpb_broadcast(int na, const int64_t *da, int nb, const int64_t *db, int64_t *out) {
  int nd = na > nb ? na : nb;
  for (int k = 0; k < nd; k++) {
    int64_t x = k < na ? da[k] : 1, y = k < nb ? db[k] : 1;
    if (x != y && x != 1 && y != 1) return -1;
    out[k] = x == 1 ? y : x;
  }
  return nd;
}

int mpb_broadcasts_to(int na, const int64_t *da, int nd, const int64_t *d) {
  int64_t b[MPB_ARRAY_MAXDIM];
  return mpb_broadcast(na, da, nd, d, b) == nd && memcmp(b, d, (size_t)nd * sizeof *d) == 0;
}

/* Lowest and one-past-highest byte an array touches. */
static void span(const mpb_array *a, const char **lo, const char **hi) {
  int64_t es = (int64_t)mpb_dtype_size(a->dtype), l = 0, h = 0;
  for (int k = 0; k < a->ndim; k++) {
    int64_t d = (a->dims[k] - 1) * a->strides[k];
    if (d < 0) l += d; else h += d;
  }
  *lo = (const char *)a->data + l * es;
  *hi = (const char *)a->data + (h + 1) * es;
}

int mpb_array_overlap(const mpb_array *a, const mpb_array *b) {
  if (a->n == 0 || b->n == 0) return MPB_DISJOINT;
  const char *alo, *ahi, *blo, *bhi;
  span(a, &alo, &ahi);
  span(b, &blo, &bhi);
  if (ahi <= blo || bhi <= alo) return MPB_DISJOINT;
  if (a->data != b->data || a->dtype != b->dtype || a->n != b->n) return MPB_OVERLAP;
  /* same start and size: the same view if every dimension that moves agrees */
  int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int k = 0; k < nd; k++) {
    int64_t da = k < a->ndim ? a->dims[k] : 1, db = k < b->ndim ? b->dims[k] : 1;
    if (da != db) return MPB_OVERLAP;
    if (da > 1 && a->strides[k] != b->strides[k]) return MPB_OVERLAP;
  }
  return MPB_SAME;
}

/* The strides in locals: read through st, the compiler must reload them
** after every store (d might alias them), a load and a multiply a step. */
#define COPY_RUN(T)                                                        \
  do {                                                                     \
    T *d = (T *)p[0];                                                      \
    const T *s = (const T *)p[1];                                          \
    const int64_t sd = st[0], ss = st[1];                                  \
    if (sd == 1 && ss == 1) {                                              \
      memmove(d, s, (size_t)n * sizeof(T));                                \
    } else if (ss == 0) {                                                  \
      T v = *s;                                                            \
      for (int64_t i = 0; i < n; i++, d += sd) *d = v;                     \
    } else {                                                               \
      for (int64_t i = 0; i < n; i++, d += sd, s += ss) *d = *s;           \
    }                                                                      \
  } while (0)

/* A c128 element moves as one unit of 16 bytes. */
typedef struct { uint64_t lo, hi; } elem16;

int mpb_run_copy(void *ctx, char *const *p, const int64_t *st, int64_t n) {
  switch (*(const size_t *)ctx) {
    case 1: COPY_RUN(uint8_t); break;
    case 4: COPY_RUN(uint32_t); break;
    case 16: COPY_RUN(elem16); break;
    default: COPY_RUN(uint64_t); break;
  }
  return 0;
}

#define COPY2_RUN(T)                                                       \
  do {                                                                     \
    T *d = (T *)p[0], *e = (T *)p[2];                                      \
    const T *s = (const T *)p[1], *f = (const T *)p[3];                    \
    const int64_t sd = st[0], ss = st[1], se = st[2], sf = st[3];          \
    for (int64_t i = 0; i < n; i++, d += sd, s += ss, e += se, f += sf) {  \
      *d = *s;                                                             \
      *e = *f;                                                             \
    }                                                                      \
  } while (0)

int mpb_run_copy2(void *ctx, char *const *p, const int64_t *st, int64_t n) {
  if (st[0] == 1 && st[1] == 1 && st[2] == 1 && st[3] == 1) { /* two block moves */
    mpb_run_copy(ctx, p, st, n);
    return mpb_run_copy(ctx, p + 2, st + 2, n);
  }
  switch (*(const size_t *)ctx) {
    case 1: COPY2_RUN(uint8_t); break;
    case 4: COPY2_RUN(uint32_t); break;
    case 16: COPY2_RUN(elem16); break;
    default: COPY2_RUN(uint64_t); break;
  }
  return 0;
}
