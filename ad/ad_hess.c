/* Forward-over-reverse Hessian-vector products. See ad_hess.h. */
#include <stdlib.h>
#include <string.h>
#include "ad_dist.h"
#include "ad_hess.h"
#include "ad_scalar.h"
#include "ad_vec.h"

#define AD_HESS_CHUNK 32

/* Scratch of one pass: tangents and adjoint tangents per var (K wide), and the
** directional derivatives of the region's partials (K wide, entry e at
** (e - e0) * K). */
typedef struct pass {
  size_t K;
  ad_idx e0;
  double *tdot, *adot, *pdot;
} pass;

static double *TD(const pass *p, ad_idx v) { return p->tdot + (size_t)v * p->K; }
static double *PD(const pass *p, ad_idx e) { return p->pdot + (size_t)(e - p->e0) * p->K; }

static void node_binary(const ad_tape *t, const ad_node *nd, const pass *p) {
  size_t K = p->K;
  if (!(nd->flags & AD_NF_AUX)) { /* scalar node */
    int ac = nd->flags & AD_NF_ACONST, bc = nd->flags & AD_NF_BCONST;
    ad_idx ea = nd->e0, eb = ac ? nd->e0 : nd->e0 + 1;
    double a = ac ? nd->u.c : t->val[t->ent[ea].in];
    double b = bc ? nd->u.c : t->val[t->ent[eb].in];
    double h[3];
    ad_binary_d2(nd->op, a, b, t->val[nd->out], h);
    const double *da = ac ? NULL : TD(p, t->ent[ea].in);
    const double *db = bc ? NULL : TD(p, t->ent[eb].in);
    for (size_t k = 0; k < K; k++) {
      double xa = da ? da[k] : 0, xb = db ? db[k] : 0;
      /* a constant operand contributes nothing (and its second partials may
      ** be NaN, as d/db a^b for a < 0): skip rather than multiply by 0 */
      if (!ac) PD(p, ea)[k] = h[0] * xa + (bc ? 0 : h[1] * xb);
      if (!bc) PD(p, eb)[k] = (ac ? 0 : h[1] * xa) + h[2] * xb;
    }
    return;
  }
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

static void node_dist(const ad_tape *t, const ad_node *nd, const pass *p) {
  const ad_vec_aux *x = nd->u.aux;
  int na = x->nargs;
  size_t K = p->K;
  ad_idx eoff[4];
  ad_idx e = nd->e0;
  for (int k = 0; k < na; k++) {
    eoff[k] = e;
    if (ad_arg_isvar(&x->args[k])) e += (ad_idx)x->args[k].n;
  }
  for (size_t i = 0; i < x->n; i++) {
    double v[4], g[4], h[16], f;
    const double *d[4];
    for (int k = 0; k < na; k++) {
      v[k] = ad_arg_at(t, &x->args[k], i);
      d[k] = ad_arg_isvar(&x->args[k]) ? TD(p, ad_arg_varat(&x->args[k], i)) : NULL;
    }
    ad_dist_elem(x->dist, v, &f, g, h);
    for (int k = 0; k < na; k++) {
      if (!d[k]) continue;
      double *out = PD(p, eoff[k] + (x->args[k].n > 1 ? (ad_idx)i : 0));
      for (size_t kk = 0; kk < K; kk++) {
        double s = 0;
        for (int l = 0; l < na; l++)
          if (d[l]) s += h[k * 4 + l] * d[l][kk];
        out[kk] += s;
      }
    }
  }
}

int ad_hvp(ad_tape *t, ad_idx y, size_t n, const ad_idx *in, size_t K,
           const double *V, double *g, double *HV) {
  const ad_region *r = &t->reg[t->depth];
  if (y >= t->nvar) return AD_ESTALE;
  for (size_t j = 0; j < n; j++)
    if (in[j] >= t->nvar) return AD_ESTALE;
  for (ad_idx i = r->nnode; i < t->nnode; i++)
    if (t->node[i].op == AD_OP_PRECOMP) return AD_ENOSECOND;
  if (K == 0) K = 1;
  size_t nv = t->nvar, ne = t->nent - r->nent;
  pass p = {K, r->nent, NULL, NULL, NULL};
  p.tdot = calloc(nv * K + 1, sizeof(double));
  p.adot = calloc(nv * K + 1, sizeof(double));
  p.pdot = calloc(ne * K + 1, sizeof(double));
  if (!p.tdot || !p.adot || !p.pdot) {
    free(p.tdot); free(p.adot); free(p.pdot);
    return AD_ENOMEM;
  }
  for (size_t j = 0; j < n; j++)
    for (size_t k = 0; k < K; k++) TD(&p, in[j])[k] = V[j * K + k];
  /* forward: tangents of every var */
  for (ad_idx e = r->nent; e < t->nent; e++) {
    double pe = t->par[e], *to = TD(&p, t->ent[e].out);
    const double *ti = TD(&p, t->ent[e].in);
    for (size_t k = 0; k < K; k++) to[k] += pe * ti[k];
  }
  /* directional derivatives of the partials */
  for (ad_idx i = r->nnode; i < t->nnode; i++) {
    const ad_node *nd = &t->node[i];
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
    } /* pack, sum, matvec: linear, zero */
  }
  /* reverse: adjoints and their tangents */
  double *adj = t->adj;
  memset(adj + r->nvar, 0, (nv - r->nvar) * sizeof(double));
  for (ad_idx e = r->nent; e < t->nent; e++) adj[t->ent[e].in] = 0;
  for (size_t j = 0; j < n; j++) adj[in[j]] = 0;
  adj[y] = 1;
  for (ad_idx e = t->nent; e-- > r->nent;) {
    ad_idx o = t->ent[e].out, i = t->ent[e].in;
    double a = adj[o], pe = t->par[e];
    adj[i] += a * pe;
    double *ai = p.adot + (size_t)i * K;
    const double *ao = p.adot + (size_t)o * K, *pd = PD(&p, e);
    for (size_t k = 0; k < K; k++) ai[k] += ao[k] * pe + a * pd[k];
  }
  for (size_t j = 0; j < n; j++) {
    if (g) g[j] = adj[in[j]];
    for (size_t k = 0; k < K; k++) HV[j * K + k] = p.adot[(size_t)in[j] * K + k];
  }
  free(p.tdot); free(p.adot); free(p.pdot);
  return 0;
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
