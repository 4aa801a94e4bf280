/* The tape: storage growth, leaf vars, regions, first-order sweeps and the
** gradient / Jacobian drivers built on them. See ad_tape.h. */
#include <stdlib.h>
#include <string.h>
#include "ad_tape.h"

void ad_tape_init(ad_tape *t) {
  memset(t, 0, sizeof *t);
  ad_arena_init(&t->arena);
  t->serial = 1;
  t->reg[0].serial = 1;
  t->reg[0].mark = ad_arena_mark_get(&t->arena);
}

void ad_tape_free(ad_tape *t) {
  free(t->val);
  free(t->adj);
  free(t->ent);
  free(t->par);
  free(t->node);
  ad_arena_free(&t->arena);
  uint32_t s = t->serial;
  ad_tape_init(t);
  t->serial = t->reg[0].serial = s + 1; /* old handles stay stale */
}

void ad_tape_reset(ad_tape *t) {
  t->nvar = t->nent = t->nnode = 0;
  t->depth = 0;
  t->reg[0].nvar = t->reg[0].nent = t->reg[0].nnode = 0;
  t->reg[0].mark.blk = NULL;
  t->reg[0].mark.used = 0;
  ad_arena_rewind(&t->arena, t->reg[0].mark);
  t->reg[0].serial = ++t->serial;
}

/* ---------------------------------------------------------------- growth */

static size_t grown(size_t cap, size_t need) {
  size_t c = cap ? cap : 1024;
  while (c < need) c *= 2;
  if (c > AD_MAXIDX) c = AD_MAXIDX;
  return c;
}

/* realloc that leaves *p untouched on failure (the tape stays consistent). */
static int regrow(void **p, size_t n, size_t size) {
  void *q = realloc(*p, n * size);
  if (!q) return AD_ENOMEM;
  *p = q;
  return 0;
}

int ad_tape_grow(ad_tape *t, size_t nv, size_t ne, size_t nn) {
  if (nv > AD_MAXIDX - t->nvar || ne > AD_MAXIDX - t->nent ||
      nn > AD_MAXIDX - t->nnode)
    return AD_ETOOBIG;
  if (t->nvar + nv > t->capvar) {
    size_t c = grown(t->capvar, t->nvar + nv);
    if (regrow((void **)&t->val, c, sizeof(double)) ||
        regrow((void **)&t->adj, c, sizeof(double)))
      return AD_ENOMEM;
    t->capvar = (ad_idx)c;
  }
  if (t->nent + ne > t->capent) {
    size_t c = grown(t->capent, t->nent + ne);
    if (regrow((void **)&t->ent, c, sizeof(ad_entry)) ||
        regrow((void **)&t->par, c, sizeof(double)))
      return AD_ENOMEM;
    t->capent = (ad_idx)c;
  }
  if (t->nnode + nn > t->capnode) {
    size_t c = grown(t->capnode, t->nnode + nn);
    if (regrow((void **)&t->node, c, sizeof(ad_node))) return AD_ENOMEM;
    t->capnode = (ad_idx)c;
  }
  return 0;
}

int ad_var_new(ad_tape *t, double v, ad_idx *out) {
  int rc = ad_reserve(t, 1, 0, 0);
  if (rc) return rc;
  t->val[t->nvar] = v;
  *out = t->nvar++;
  return 0;
}

int ad_vars_new(ad_tape *t, size_t n, const double *v, ad_idx *out) {
  int rc = ad_reserve(t, n, 0, 0);
  if (rc) return rc;
  if (v) memcpy(t->val + t->nvar, v, n * sizeof(double));
  else memset(t->val + t->nvar, 0, n * sizeof(double));
  *out = t->nvar;
  t->nvar += (ad_idx)n;
  return 0;
}

void *ad_tape_alloc(ad_tape *t, size_t bytes) {
  return ad_arena_alloc(&t->arena, bytes);
}

/* --------------------------------------------------------------- regions */

int ad_region_begin(ad_tape *t) {
  if (t->depth + 1 >= AD_MAXDEPTH) return AD_EDEPTH;
  ad_region *r = &t->reg[++t->depth];
  r->nvar = t->nvar;
  r->nent = t->nent;
  r->nnode = t->nnode;
  r->mark = ad_arena_mark_get(&t->arena);
  r->serial = ++t->serial;
  return 0;
}

int ad_region_end(ad_tape *t) {
  if (t->depth == 0) return AD_ENOREGION;
  ad_region *r = &t->reg[t->depth--];
  t->nvar = r->nvar;
  t->nent = r->nent;
  t->nnode = r->nnode;
  ad_arena_rewind(&t->arena, r->mark);
  return 0;
}

uint32_t ad_var_serial(const ad_tape *t, ad_idx v) {
  for (int l = t->depth; l > 0; l--)
    if (v >= t->reg[l].nvar) return t->reg[l].serial;
  return t->reg[0].serial;
}

int ad_var_live(const ad_tape *t, ad_idx v, uint32_t serial) {
  return v < t->nvar && ad_var_serial(t, v) == serial;
}

/* ---------------------------------------------------------------- sweeps */

void ad_sweep_reverse(ad_tape *t, ad_idx e0) {
  double *restrict adj = t->adj;
  const ad_entry *restrict en = t->ent;
  const double *restrict p = t->par;
  for (ad_idx e = t->nent; e-- > e0;) adj[en[e].in] += adj[en[e].out] * p[e];
}

void ad_sweep_forward(const ad_tape *t, ad_idx e0, double *tan) {
  const ad_entry *restrict en = t->ent;
  const double *restrict p = t->par;
  for (ad_idx e = e0; e < t->nent; e++) tan[en[e].out] += p[e] * tan[en[e].in];
}

/* Zero x over everything the innermost region's entries can touch: its own
** vars and every var its entries read. O(size of the region). */
static void clear_region(const ad_tape *t, double *x) {
  const ad_region *r = &t->reg[t->depth];
  memset(x + r->nvar, 0, (size_t)(t->nvar - r->nvar) * sizeof(double));
  for (ad_idx e = r->nent; e < t->nent; e++) x[t->ent[e].in] = 0;
}

static int check_vars(const ad_tape *t, size_t n, const ad_idx *v) {
  for (size_t i = 0; i < n; i++)
    if (v[i] >= t->nvar) return AD_ESTALE;
  return 0;
}

int ad_vjp(ad_tape *t, size_t m, const ad_idx *y, const double *u, size_t n,
           const ad_idx *in, double *g) {
  if (check_vars(t, m, y) || check_vars(t, n, in)) return AD_ESTALE;
  clear_region(t, t->adj);
  for (size_t i = 0; i < m; i++) t->adj[y[i]] = 0;
  for (size_t j = 0; j < n; j++) t->adj[in[j]] = 0;
  for (size_t i = 0; i < m; i++) t->adj[y[i]] += u[i];
  ad_sweep_reverse(t, t->reg[t->depth].nent);
  for (size_t j = 0; j < n; j++) g[j] = t->adj[in[j]];
  return 0;
}

int ad_grad(ad_tape *t, ad_idx y, size_t n, const ad_idx *in, double *g) {
  double one = 1.0;
  return ad_vjp(t, 1, &y, &one, n, in, g);
}

/* Forward pass with tangents seeded v on in[]; tan has nvar slots. */
static void forward(const ad_tape *t, double *tan, size_t n, const ad_idx *in,
                    const double *v) {
  clear_region(t, tan);
  for (size_t j = 0; j < n; j++) tan[in[j]] = 0;
  for (size_t j = 0; j < n; j++) tan[in[j]] += v[j];
  ad_sweep_forward(t, t->reg[t->depth].nent, tan);
}

int ad_jvp(ad_tape *t, size_t m, const ad_idx *y, size_t n, const ad_idx *in,
           const double *v, double *jv) {
  if (check_vars(t, m, y) || check_vars(t, n, in)) return AD_ESTALE;
  double *tan = malloc((size_t)t->nvar * sizeof(double) + 1);
  if (!tan) return AD_ENOMEM;
  forward(t, tan, n, in, v);
  for (size_t i = 0; i < m; i++) jv[i] = tan[y[i]];
  free(tan);
  return 0;
}

int ad_jacobian(ad_tape *t, size_t m, const ad_idx *y, size_t n,
                const ad_idx *in, double *J) {
  if (check_vars(t, m, y) || check_vars(t, n, in)) return AD_ESTALE;
  if (m <= n) {
    double one = 1.0;
    for (size_t i = 0; i < m; i++) {
      int rc = ad_vjp(t, 1, &y[i], &one, n, in, J + i * n);
      if (rc) return rc;
    }
    return 0;
  }
  double *tan = malloc(((size_t)t->nvar + n) * sizeof(double) + 1);
  if (!tan) return AD_ENOMEM;
  double *v = tan + t->nvar;
  for (size_t j = 0; j < n; j++) {
    memset(v, 0, n * sizeof(double));
    v[j] = 1.0;
    forward(t, tan, n, in, v);
    for (size_t i = 0; i < m; i++) J[i * n + j] = tan[y[i]];
  }
  free(tan);
  return 0;
}
