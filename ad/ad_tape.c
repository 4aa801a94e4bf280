/* SPDX-License-Identifier: MIT */
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
  if (t->val) free(t->val - 1);
  if (t->adj) free(t->adj - 1);
  free(t->slot);
  free(t->op);
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

/* regrow for val / adj, which keep the trash slot in front of *p. */
static int regrow_var(double **p, size_t n) {
  double *q = *p ? *p - 1 : NULL;
  if (regrow((void **)&q, n + 1, sizeof(double))) return AD_ENOMEM;
  if (!*p) q[0] = 0;
  *p = q + 1;
  return 0;
}

int ad_tape_grow(ad_tape *t, size_t nv, size_t ne, size_t nn) {
  if (nv > AD_MAXIDX - t->nvar || ne > AD_MAXIDX - t->nent ||
      nn > AD_MAXIDX - t->nnode)
    return AD_ETOOBIG;
  if (t->nvar + nv > t->capvar) {
    size_t c = grown(t->capvar, t->nvar + nv);
    if (regrow_var(&t->val, c) || regrow_var(&t->adj, c) ||
        regrow((void **)&t->slot, c, sizeof(ad_slot)) ||
        regrow((void **)&t->op, c, 1))
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

/* A leaf's slot: both operands the trash slot, partials 0. */
static void leaf_slot(ad_tape *t, ad_idx k) {
  t->slot[k] = (ad_slot){0, 0, 0, 0};
  t->op[k] = AD_OP_NONE;
}

int ad_var_new(ad_tape *t, double v, ad_idx *out) {
  int rc = ad_reserve(t, 1, 0, 0);
  if (rc) return rc;
  ad_idx k = t->nvar;
  t->val[k] = v;
  leaf_slot(t, k);
  t->nvar = k + 1;
  *out = k;
  return 0;
}

/* Up to this many leaves get slots; more get a node the passes skip. */
#define LEAF_SLOTS_MAX 8

int ad_vars_new(ad_tape *t, size_t n, const double *v, ad_idx *out) {
  int rc = ad_reserve(t, n, 0, n > LEAF_SLOTS_MAX);
  if (rc) return rc;
  ad_idx k = t->nvar;
  if (v) memcpy(t->val + k, v, n * sizeof(double));
  else memset(t->val + k, 0, n * sizeof(double));
  if (n > LEAF_SLOTS_MAX) {
    ad_push_node(t, AD_OP_NONE, 0, k, (ad_idx)n, t->nent, 0, NULL);
  } else {
    for (size_t i = 0; i < n; i++) leaf_slot(t, k + (ad_idx)i);
  }
  *out = k;
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

/* The scalar vars k in [lo, hi), last to first. adjb = adj - 1, so that a
** stored operand s is adjb[s] and the trash slot is adjb[0]. Two vars per
** step (in order: the second may read what the first wrote). */
static void slots_reverse(double *restrict adjb, const ad_slot *restrict sl,
                          ad_idx lo, ad_idx hi) {
  ad_idx k = hi;
  for (; k - lo >= 2; k -= 2) {
    const ad_slot *s1 = &sl[k - 1], *s0 = &sl[k - 2];
    double w1 = adjb[k];
    adjb[s1->a] += s1->pa * w1;
    adjb[s1->b] += s1->pb * w1;
    double w0 = adjb[k - 1];
    adjb[s0->a] += s0->pa * w0;
    adjb[s0->b] += s0->pb * w0;
  }
  if (k > lo) {
    const ad_slot *s0 = &sl[k - 1];
    double w0 = adjb[k];
    adjb[s0->a] += s0->pa * w0;
    adjb[s0->b] += s0->pb * w0;
  }
}

static void slots_forward(const ad_tape *t, double *tan, ad_idx lo, ad_idx hi) {
  const ad_slot *restrict sl = t->slot;
  double *tb = tan - 1;
  for (ad_idx k = lo; k < hi; k++) {
    double d = sl[k].pa * tb[sl[k].a];
    if (sl[k].b) d += sl[k].pb * tb[sl[k].b];
    tan[k] += d;
  }
}

void ad_sweep_reverse(ad_tape *t) {
  const ad_region *r = &t->reg[t->depth];
  double *adj = t->adj;
  const ad_entry *restrict en = t->ent;
  const double *restrict p = t->par;
  ad_idx hi = t->nvar;
  for (ad_idx n = t->nnode; n > r->nnode;) {
    const ad_node *nd = &t->node[--n];
    slots_reverse(adj - 1, t->slot, nd->out + nd->nout, hi);
    if (nd->flags & AD_NF_CUSTOM) ((const ad_custom *)nd->u.aux)->ops->reverse(t, nd);
    for (ad_idx e = nd->e0 + nd->ne; e > nd->e0;) {
      e--;
      adj[en[e].in] += adj[en[e].out] * p[e];
    }
    hi = nd->out;
  }
  slots_reverse(adj - 1, t->slot, r->nvar, hi);
}

void ad_sweep_forward(const ad_tape *t, double *tan) {
  const ad_region *r = &t->reg[t->depth];
  const ad_entry *restrict en = t->ent;
  const double *restrict p = t->par;
  ad_idx lo = r->nvar;
  for (ad_idx n = r->nnode; n < t->nnode; n++) {
    const ad_node *nd = &t->node[n];
    slots_forward(t, tan, lo, nd->out);
    if (nd->flags & AD_NF_CUSTOM) ((const ad_custom *)nd->u.aux)->ops->forward(t, nd, tan);
    for (ad_idx e = nd->e0; e < nd->e0 + nd->ne; e++) tan[en[e].out] += p[e] * tan[en[e].in];
    lo = nd->out + nd->nout;
  }
  slots_forward(t, tan, lo, t->nvar);
}

/* Zero the operands of the scalar vars in [lo, hi): xb = x - 1. */
static void clear_operands(const ad_slot *sl, double *xb, ad_idx lo, ad_idx hi) {
  for (ad_idx k = lo; k < hi; k++) {
    xb[sl[k].a] = 0;
    xb[sl[k].b] = 0;
  }
}

void ad_clear_region(const ad_tape *t, double *x) {
  const ad_region *r = &t->reg[t->depth];
  size_t older = r->nvar, own = t->nvar - r->nvar, ne = t->nent - r->nent;
  /* Clearing every var is a memset; finding the older vars read means a pass
  ** over the region. Take the cheaper (older vars are few in the usual case). */
  if (older <= 4 * (own + ne)) {
    memset(x - 1, 0, ((size_t)t->nvar + 1) * sizeof(double));
    return;
  }
  memset(x + r->nvar, 0, own * sizeof(double));
  ad_idx lo = r->nvar;
  for (ad_idx n = r->nnode; n < t->nnode; n++) {
    const ad_node *nd = &t->node[n];
    clear_operands(t->slot, x - 1, lo, nd->out);
    for (ad_idx e = nd->e0; e < nd->e0 + nd->ne; e++) x[t->ent[e].in] = 0;
    if (nd->flags & AD_NF_CUSTOM) {
      const ad_custom *c = nd->u.aux;
      for (int k = 0; k < AD_CUSTOM_MAXIN; k++)
        if (c->in[k] != AD_NOVAR) memset(x + c->in[k], 0, c->nin[k] * sizeof(double));
    }
    lo = nd->out + nd->nout;
  }
  clear_operands(t->slot, x - 1, lo, t->nvar);
  x[-1] = 0;
}

/* A var of [0, lo) read by the scalar vars in [from, hi), or AD_NOVAR. */
static ad_idx outer_operand(const ad_slot *sl, ad_idx lo, ad_idx from, ad_idx hi) {
  for (ad_idx k = from; k < hi; k++) {
    if (sl[k].a && sl[k].a - 1 < lo) return sl[k].a - 1;
    if (sl[k].b && sl[k].b - 1 < lo) return sl[k].b - 1;
  }
  return AD_NOVAR;
}

ad_idx ad_region_outer_read(const ad_tape *t) {
  const ad_region *r = &t->reg[t->depth];
  ad_idx lo = r->nvar, from = lo, v;
  for (ad_idx n = r->nnode; n < t->nnode; n++) {
    const ad_node *nd = &t->node[n];
    if ((v = outer_operand(t->slot, lo, from, nd->out)) != AD_NOVAR) return v;
    for (ad_idx e = nd->e0; e < nd->e0 + nd->ne; e++)
      if (t->ent[e].in < lo) return t->ent[e].in;
    if (nd->flags & AD_NF_CUSTOM) {
      const ad_custom *c = nd->u.aux;
      for (int k = 0; k < AD_CUSTOM_MAXIN; k++)
        if (c->in[k] != AD_NOVAR && c->nin[k] && c->in[k] < lo) return c->in[k];
    }
    from = nd->out + nd->nout;
  }
  return outer_operand(t->slot, lo, from, t->nvar);
}

static int check_vars(const ad_tape *t, size_t n, const ad_idx *v) {
  for (size_t i = 0; i < n; i++)
    if (v[i] >= t->nvar) return AD_ESTALE;
  return 0;
}

int ad_vjp(ad_tape *t, size_t m, const ad_idx *y, const double *u, size_t n,
           const ad_idx *in, double *g) {
  if (check_vars(t, m, y) || check_vars(t, n, in)) return AD_ESTALE;
  ad_clear_region(t, t->adj);
  for (size_t i = 0; i < m; i++) t->adj[y[i]] = 0;
  for (size_t j = 0; j < n; j++) t->adj[in[j]] = 0;
  for (size_t i = 0; i < m; i++) t->adj[y[i]] += u[i];
  ad_sweep_reverse(t);
  for (size_t j = 0; j < n; j++) g[j] = t->adj[in[j]];
  return 0;
}

int ad_grad(ad_tape *t, ad_idx y, size_t n, const ad_idx *in, double *g) {
  double one = 1.0;
  return ad_vjp(t, 1, &y, &one, n, in, g);
}

/* Forward pass with tangents seeded v on in[]; tan is indexed like val. */
static void forward(const ad_tape *t, double *tan, size_t n, const ad_idx *in,
                    const double *v) {
  ad_clear_region(t, tan);
  for (size_t j = 0; j < n; j++) tan[in[j]] = 0;
  for (size_t j = 0; j < n; j++) tan[in[j]] += v[j];
  ad_sweep_forward(t, tan);
}

int ad_jvp(ad_tape *t, size_t m, const ad_idx *y, size_t n, const ad_idx *in,
           const double *v, double *jv) {
  if (check_vars(t, m, y) || check_vars(t, n, in)) return AD_ESTALE;
  double *tan = malloc(((size_t)t->nvar + 1) * sizeof(double));
  if (!tan) return AD_ENOMEM;
  forward(t, tan + 1, n, in, v);
  for (size_t i = 0; i < m; i++) jv[i] = tan[1 + y[i]];
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
  double *buf = malloc(((size_t)t->nvar + 1 + n) * sizeof(double));
  if (!buf) return AD_ENOMEM;
  double *tan = buf + 1, *v = tan + t->nvar;
  for (size_t j = 0; j < n; j++) {
    memset(v, 0, n * sizeof(double));
    v[j] = 1.0;
    forward(t, tan, n, in, v);
    for (size_t i = 0; i < m; i++) J[i * n + j] = tan[y[i]];
  }
  free(buf);
  return 0;
}
