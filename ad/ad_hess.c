/* SPDX-License-Identifier: MIT */
/* Forward-over-reverse Hessian-vector products. See ad_hess.h. */
#include <stdlib.h>
#include <string.h>
#include "ad_dist.h"
#include "ad_hess.h"
#include "ad_mat_impl.h"
#include "ad_scalar.h"
#include "ad_vec.h"

#define AD_HESS_CHUNK 32

/* Scratch of one pass: tangents and adjoint tangents per var (K wide, row
** var + 1; row 0 is the trash slot's), and the directional derivatives of
** the region's partials (K wide): the two of scalar var k at rows
** 2 (k - v0) and 2 (k - v0) + 1, then node entry e at row 2 nv + (e - e0). */
typedef struct pass {
  size_t K;
  ad_idx v0, e0;
  double *tdot, *adot, *pdot, *pent;
} pass;

/* Rows by stored operand (var + 1) and by var. */
static double *TS(const pass *p, ad_idx s) { return p->tdot + (size_t)s * p->K; }
static double *TD(const pass *p, ad_idx v) { return TS(p, v + 1); }
static double *AS(const pass *p, ad_idx s) { return p->adot + (size_t)s * p->K; }
static double *PS(const pass *p, ad_idx k, int side) {
  return p->pdot + ((size_t)(k - p->v0) * 2 + (size_t)side) * p->K;
}
static double *PD(const pass *p, ad_idx e) { return p->pent + (size_t)(e - p->e0) * p->K; }

/* Scalar var k: the directional derivatives of its partials. */
static void slot_pd(const ad_tape *t, ad_idx k, const pass *p) {
  size_t K = p->K;
  int code = t->op[k], op = code & AD_SLOT_OPMASK;
  const ad_slot *s = &t->slot[k];
  const double *val = t->val;
  if (AD_IS_UNARY(op)) {
    double d2 = ad_unary_d2(op, val[s->a - 1], val[k]);
    const double *dx = TS(p, s->a);
    double *out = PS(p, k, 0);
    for (size_t j = 0; j < K; j++) out[j] = d2 * dx[j];
    return;
  }
  if (!AD_IS_BINARY(op)) return; /* a leaf */
  double h[3];
  if (code & (AD_SLOT_ACONST | AD_SLOT_BCONST)) {
    /* one var operand, in slot a; the constant (in pb) contributes nothing,
    ** and its second partials may be NaN (d/db a^b for a < 0): skip them */
    int ac = code & AD_SLOT_ACONST;
    double x = val[s->a - 1];
    ad_binary_d2(op, ac ? s->pb : x, ac ? x : s->pb, val[k], h);
    double hh = ac ? h[2] : h[0];
    const double *dx = TS(p, s->a);
    double *out = PS(p, k, 0);
    for (size_t j = 0; j < K; j++) out[j] = hh * dx[j];
    return;
  }
  ad_binary_d2(op, val[s->a - 1], val[s->b - 1], val[k], h);
  const double *da = TS(p, s->a), *db = TS(p, s->b);
  double *oa = PS(p, k, 0), *ob = PS(p, k, 1);
  for (size_t j = 0; j < K; j++) {
    oa[j] = h[0] * da[j] + h[1] * db[j];
    ob[j] = h[1] * da[j] + h[2] * db[j];
  }
}

/* Elementwise binary node (vector arguments, aux holds them). */
static void node_binary(const ad_tape *t, const ad_node *nd, const pass *p) {
  size_t K = p->K;
  const ad_vec_aux *x = nd->u.aux;
  const ad_arg *A = &x->args[0], *B = &x->args[1];
  int va = ad_arg_isvar(A), vb = ad_arg_isvar(B);
  ad_idx e = nd->e0;
  for (size_t i = 0; i < x->n; i++) {
    double h[3];
    ad_binary_d2(nd->op, ad_arg_at(t, A, i), ad_arg_at(t, B, i),
                 t->val[nd->out + i], h);
    const double *da = va ? TD(p, ad_arg_varat(A, i)) : NULL;
    const double *db = vb ? TD(p, ad_arg_varat(B, i)) : NULL;
    for (size_t k = 0; k < K; k++) {
      double xa = da ? da[k] : 0, xb = db ? db[k] : 0;
      if (va) PD(p, e)[k] = h[0] * xa + (vb ? h[1] * xb : 0);
      if (vb) PD(p, e + (ad_idx)va)[k] = (va ? h[1] * xa : 0) + h[2] * xb;
    }
    e += (ad_idx)(va + vb);
  }
}

static void node_dot(const ad_tape *t, const ad_node *nd, const pass *p) {
  const ad_vec_aux *x = nd->u.aux;
  const ad_arg *A = &x->args[0], *B = &x->args[1];
  int va = ad_arg_isvar(A), vb = ad_arg_isvar(B);
  (void)t;
  for (size_t i = 0; i < x->n; i++) {
    if (va && vb) {
      memcpy(PD(p, nd->e0 + (ad_idx)i), TD(p, B->var + (ad_idx)i), p->K * sizeof(double));
      memcpy(PD(p, nd->e0 + (ad_idx)(x->n + i)), TD(p, A->var + (ad_idx)i),
             p->K * sizeof(double));
    }
  }
}

static void node_lse(const ad_tape *t, const ad_node *nd, const pass *p) {
  size_t K = p->K;
  double *m = calloc(K, sizeof(double));
  if (!m) return;
  for (ad_idx e = nd->e0; e < nd->e0 + nd->ne; e++) {
    const double *d = TD(p, t->ent[e].in);
    for (size_t k = 0; k < K; k++) m[k] += t->par[e] * d[k];
  }
  for (ad_idx e = nd->e0; e < nd->e0 + nd->ne; e++) {
    const double *d = TD(p, t->ent[e].in);
    for (size_t k = 0; k < K; k++) PD(p, e)[k] = t->par[e] * (d[k] - m[k]);
  }
  free(m);
}

/* Element i of a density node: adds h_i times the tangents of element i's
** var arguments to out[k], the directional derivative of argument k's
** partial (NULL for a constant argument). */
static void dist_elem(const ad_tape *t, const ad_vec_aux *x, size_t i, const pass *p,
                      double *const out[4]) {
  int na = x->nargs;
  double v[4] = {0, 0, 0, 0}, g[4], h[16], f;
  const double *d[4];
  for (int k = 0; k < na; k++) {
    v[k] = ad_arg_at(t, &x->args[k], i);
    d[k] = ad_arg_isvar(&x->args[k]) ? TD(p, ad_arg_varat(&x->args[k], i)) : NULL;
  }
  ad_dist_elem(x->dist, v, &f, g, h);
  for (int k = 0; k < na; k++) {
    if (!d[k]) continue;
    for (size_t kk = 0; kk < p->K; kk++) {
      double s = 0;
      for (int l = 0; l < na; l++)
        if (d[l]) s += h[k * 4 + l] * d[l][kk];
      out[k][kk] += s;
    }
  }
}

/* Per-element densities: output i has one entry per var argument, in
** argument order. */
static void node_dist_each(const ad_tape *t, const ad_node *nd, const pass *p) {
  const ad_vec_aux *x = nd->u.aux;
  ad_idx e = nd->e0;
  for (size_t i = 0; i < x->n; i++) {
    double *out[4] = {NULL, NULL, NULL, NULL};
    for (int k = 0; k < x->nargs; k++)
      if (ad_arg_isvar(&x->args[k])) out[k] = PD(p, e++);
    dist_elem(t, x, i, p, out);
  }
}

/* y = A x with A vars: d(partial x_j) = tan(A_ij), d(partial A_ij) = tan(x_j). */
static void node_matvec2(const ad_tape *t, const ad_node *nd, const pass *p) {
  const ad_vec_aux *x = nd->u.aux;
  const ad_arg *A = &x->args[0], *X = &x->args[1];
  size_t m = x->n, n = X->n, K = p->K;
  int vx = ad_arg_isvar(X);
  ad_idx e = nd->e0;
  (void)t;
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++, e++) {
      if (vx) memcpy(PD(p, e), TD(p, X->var + (ad_idx)j), K * sizeof(double));
      else memset(PD(p, e), 0, K * sizeof(double));
    }
    if (vx)
      for (size_t j = 0; j < n; j++, e++)
        memcpy(PD(p, e), TD(p, A->var + (ad_idx)(i + j * m)), K * sizeof(double));
  }
}

/* Precomputed value with its Hessian (aux: n*n, row-major). */
static void node_precomp2(const ad_tape *t, const ad_node *nd, const pass *p) {
  const double *H = nd->u.aux;
  size_t n = nd->ne, K = p->K;
  for (size_t k = 0; k < n; k++) {
    double *out = PD(p, nd->e0 + (ad_idx)k);
    memset(out, 0, K * sizeof(double));
    for (size_t l = 0; l < n; l++) {
      double hkl = H[k * n + l];
      if (hkl == 0) continue;
      const double *d = TD(p, t->ent[nd->e0 + l].in);
      for (size_t kk = 0; kk < K; kk++) out[kk] += hkl * d[kk];
    }
  }
}

/* 0, or why the Hessian passes cannot go through node nd. */
static int second_order_ok(const ad_node *nd) {
  switch (nd->op) {
    case AD_OP_PRECOMP: return AD_ENOSECOND;
    case AD_OP_LOGDET: case AD_OP_MVN_CHOL: return nd->u.aux ? 0 : AD_ENOSECOND_OP;
    case AD_OP_DIST: case AD_OP_DIST_EACH: {
      const ad_vec_aux *x = nd->u.aux;
      for (int k = 0; k < x->nargs; k++)
        if (ad_arg_isvar(&x->args[k]) && !ad_dist_has_second(x->dist, k)) return AD_ENOSECOND_OP;
      return 0;
    }
    default:
      if (nd->flags & AD_NF_CUSTOM)
        return ((const ad_custom *)nd->u.aux)->ops->adjoint_dot ? 0 : AD_ENOSECOND_OP;
      return 0;
  }
}

/* Summed densities: a vector argument has an entry per element, a scalar
** one entry that accumulates over elements. */
static void node_dist(const ad_tape *t, const ad_node *nd, const pass *p) {
  const ad_vec_aux *x = nd->u.aux;
  ad_idx eoff[4];
  ad_idx e = nd->e0;
  for (int k = 0; k < x->nargs; k++) {
    eoff[k] = e;
    if (ad_arg_isvar(&x->args[k])) e += (ad_idx)x->args[k].n;
  }
  for (size_t i = 0; i < x->n; i++) {
    double *out[4] = {NULL, NULL, NULL, NULL};
    for (int k = 0; k < x->nargs; k++)
      if (ad_arg_isvar(&x->args[k]))
        out[k] = PD(p, eoff[k] + (x->args[k].n > 1 ? (ad_idx)i : 0));
    dist_elem(t, x, i, p, out);
  }
}

/* Forward tangents of the scalar vars in [lo, hi). */
static void slots_tangent(const ad_tape *t, const pass *p, ad_idx lo, ad_idx hi) {
  size_t K = p->K;
  for (ad_idx k = lo; k < hi; k++) {
    const ad_slot *s = &t->slot[k];
    double *to = TD(p, k);
    const double *ta = TS(p, s->a);
    for (size_t j = 0; j < K; j++) to[j] += s->pa * ta[j];
    if (!s->b) continue; /* unary, constant operand or leaf */
    const double *tb = TS(p, s->b);
    for (size_t j = 0; j < K; j++) to[j] += s->pb * tb[j];
  }
}

/* Reverse over the scalar vars in [lo, hi): adjoints and their tangents. */
static void slots_adjoint(const ad_tape *t, const pass *p, ad_idx lo, ad_idx hi) {
  size_t K = p->K;
  double *adjb = t->adj - 1;
  for (ad_idx k = hi; k > lo;) {
    k--;
    const ad_slot *s = &t->slot[k];
    double a = adjb[k + 1];
    const double *ao = AS(p, k + 1);
    for (int side = 0; side < 2; side++) {
      ad_idx i = side ? s->b : s->a;
      if (!i) continue; /* the trash slot */
      double pe = side ? s->pb : s->pa;
      adjb[i] += a * pe;
      double *ai = AS(p, i);
      const double *pd = PS(p, k, side);
      for (size_t j = 0; j < K; j++) ai[j] += ao[j] * pe + a * pd[j];
    }
  }
}

static void entries_adjoint(const ad_tape *t, const pass *p, const ad_node *nd) {
  size_t K = p->K;
  double *adj = t->adj;
  for (ad_idx e = nd->e0 + nd->ne; e > nd->e0;) {
    e--;
    ad_idx o = t->ent[e].out, i = t->ent[e].in;
    double a = adj[o], pe = t->par[e];
    adj[i] += a * pe;
    double *ai = AS(p, i + 1);
    const double *ao = AS(p, o + 1), *pd = PD(p, e);
    for (size_t k = 0; k < K; k++) ai[k] += ao[k] * pe + a * pd[k];
  }
}

int ad_hvp(ad_tape *t, ad_idx y, size_t n, const ad_idx *in, size_t K,
           const double *V, double *g, double *HV) {
  const ad_region *r = &t->reg[t->depth];
  if (y >= t->nvar) return AD_ESTALE;
  for (size_t j = 0; j < n; j++)
    if (in[j] >= t->nvar) return AD_ESTALE;
  for (ad_idx i = r->nnode; i < t->nnode; i++) {
    int rc = second_order_ok(&t->node[i]);
    if (rc) return rc;
  }
  if (K == 0) K = 1;
  size_t nv = t->nvar, nreg = t->nvar - r->nvar, ne = t->nent - r->nent;
  pass p = {K, r->nvar, r->nent, NULL, NULL, NULL, NULL};
  p.tdot = calloc((nv + 1) * K, sizeof(double));
  p.adot = calloc((nv + 1) * K, sizeof(double));
  p.pdot = calloc((2 * nreg + ne) * K + 1, sizeof(double));
  if (!p.tdot || !p.adot || !p.pdot) {
    free(p.tdot); free(p.adot); free(p.pdot);
    return AD_ENOMEM;
  }
  p.pent = p.pdot + 2 * nreg * K;
  for (size_t j = 0; j < n; j++)
    for (size_t k = 0; k < K; k++) TD(&p, in[j])[k] = V[j * K + k];
  /* forward: tangents of every var, then the directional derivatives of the
  ** partials (node and scalar vars interleaved in recording order) */
  ad_idx lo = r->nvar;
  int rc = 0;
  for (ad_idx i = r->nnode; i < t->nnode && !rc; i++) {
    const ad_node *nd = &t->node[i];
    slots_tangent(t, &p, lo, nd->out);
    if (nd->flags & AD_NF_CUSTOM) rc = ((const ad_custom *)nd->u.aux)->ops->tangent(t, nd, p.tdot, K);
    for (ad_idx e = nd->e0; e < nd->e0 + nd->ne; e++) {
      double pe = t->par[e], *to = TD(&p, t->ent[e].out);
      const double *ti = TD(&p, t->ent[e].in);
      for (size_t k = 0; k < K; k++) to[k] += pe * ti[k];
    }
    lo = nd->out + nd->nout;
  }
  slots_tangent(t, &p, lo, t->nvar);
  lo = r->nvar;
  for (ad_idx i = r->nnode; i < t->nnode; i++) {
    const ad_node *nd = &t->node[i];
    for (ad_idx k = lo; k < nd->out; k++) slot_pd(t, k, &p);
    lo = nd->out + nd->nout;
    if (AD_IS_UNARY(nd->op)) {
      for (ad_idx e = nd->e0; e < nd->e0 + nd->ne; e++) {
        ad_idx xi = t->ent[e].in;
        double d2 = ad_unary_d2(nd->op, t->val[xi], t->val[t->ent[e].out]);
        for (size_t k = 0; k < K; k++) PD(&p, e)[k] = d2 * TD(&p, xi)[k];
      }
    } else if (AD_IS_BINARY(nd->op)) {
      node_binary(t, nd, &p);
    } else if (nd->op == AD_OP_DOT) {
      node_dot(t, nd, &p);
    } else if (nd->op == AD_OP_LSE) {
      node_lse(t, nd, &p);
    } else if (nd->op == AD_OP_DIST) {
      node_dist(t, nd, &p);
    } else if (nd->op == AD_OP_DIST_EACH) {
      node_dist_each(t, nd, &p);
    } else if (nd->op == AD_OP_MATVEC2) {
      node_matvec2(t, nd, &p);
    } else if (nd->op == AD_OP_PRECOMP2) {
      node_precomp2(t, nd, &p);
    } else if (nd->op == AD_OP_LOGDET && !rc) {
      rc = ad_logdet_pdot(t, nd, p.tdot, K, PD(&p, nd->e0));
    } else if (nd->op == AD_OP_MVN_CHOL && !rc) {
      rc = ad_mvn_pdot(t, nd, p.tdot, K, PD(&p, nd->e0));
    } /* leaves, pack, sum, matvec: linear, zero */
  }
  for (ad_idx k = lo; k < t->nvar; k++) slot_pd(t, k, &p);
  /* reverse: adjoints and their tangents */
  ad_clear_region(t, t->adj);
  for (size_t j = 0; j < n; j++) t->adj[in[j]] = 0;
  t->adj[y] = 1;
  ad_idx hi = t->nvar;
  for (ad_idx i = t->nnode; i > r->nnode && !rc;) {
    const ad_node *nd = &t->node[--i];
    slots_adjoint(t, &p, nd->out + nd->nout, hi);
    if (nd->flags & AD_NF_CUSTOM) {
      const ad_custom *c = nd->u.aux;
      rc = c->ops->adjoint_dot(t, nd, p.tdot, p.adot, K);
      c->ops->reverse(t, nd);
    }
    entries_adjoint(t, &p, nd);
    hi = nd->out;
  }
  slots_adjoint(t, &p, r->nvar, hi);
  for (size_t j = 0; j < n && !rc; j++) {
    if (g) g[j] = t->adj[in[j]];
    for (size_t k = 0; k < K; k++) HV[j * K + k] = AS(&p, in[j] + 1)[k];
  }
  free(p.tdot); free(p.adot); free(p.pdot);
  return rc;
}

int ad_hessian(ad_tape *t, ad_idx y, size_t n, const ad_idx *in, double *g,
               double *H) {
  size_t K = n < AD_HESS_CHUNK ? n : AD_HESS_CHUNK;
  if (n == 0) return y < t->nvar ? 0 : AD_ESTALE;
  double *V = malloc(n * K * sizeof(double) * 2);
  if (!V) return AD_ENOMEM;
  double *HV = V + n * K;
  for (size_t c0 = 0; c0 < n; c0 += K) {
    size_t kc = n - c0 < K ? n - c0 : K;
    memset(V, 0, n * kc * sizeof(double));
    for (size_t k = 0; k < kc; k++) V[(c0 + k) * kc + k] = 1;
    int rc = ad_hvp(t, y, n, in, kc, V, c0 == 0 ? g : NULL, HV);
    if (rc) { free(V); return rc; }
    for (size_t j = 0; j < n; j++)
      for (size_t k = 0; k < kc; k++) H[j * n + c0 + k] = HV[j * kc + k];
  }
  free(V);
  return 0;
}
