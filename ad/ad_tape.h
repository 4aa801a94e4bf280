/* SPDX-License-Identifier: MIT */
/*
** The tape. Vars live in arrays indexed by ad_idx: values and adjoints (two
** contiguous arrays), and, parallel to them, one slot per var and one op code
** per var. A scalar operation (unary, binary, or binary with one constant
** operand) records nothing but its output var: the slot holds its operands
** and the partials w.r.t. them, computed at record time, and the op code
** (with which operand is a constant) serves the second-order passes.
** Vectorized and reducing operations instead record a node (one per call, in
** recording order) with entries (out, in, partial); their outputs' slots are
** never written and every pass skips them.
**
** Slot operand indices are stored as var + 1: index 0 is the trash slot, one
** double in front of val[0] and adj[0] (val[-1], adj[-1]), which absorbs the
** unused operand of a unary op (partial 0) and of a var-constant op (whose
** constant is kept in pb). So the first-order reverse sweep over a run of
** scalar vars is branch-free:
**   w = adj[k]; adj[a[k]-1] += pa[k]*w; adj[b[k]-1] += pb[k]*w
** for k from last to first, with the entries of each node swept between the
** runs it separates. adj[-1] is garbage afterwards; a forward pass must not
** read pb of a slot whose b is 0 (it may be a constant, even inf).
**
** Each array grows geometrically and is kept when the tape is rewound, so a
** warm tape records without calling malloc.
**
** Regions nest: ad_region_begin remembers the sizes (O(1)); ad_region_end
** truncates back to them (O(1)) and the vars created inside become stale.
** Region 0 (the base) is always open.
*/
#ifndef AD_TAPE_H
#define AD_TAPE_H

#include <stddef.h>
#include <stdint.h>
#include "ad_arena.h"
#include "ad_error.h"
#include "ad_ops.h"

typedef uint32_t ad_idx;
#define AD_NOVAR ((ad_idx)0xffffffffu)
#define AD_MAXIDX ((ad_idx)0xfffffffeu)
#define AD_MAXDEPTH 64

typedef struct ad_entry {
  ad_idx out, in;
} ad_entry;

/* Operands (as var + 1; 0: the trash slot) and partials of a scalar var. */
typedef struct ad_slot {
  ad_idx a, b;
  double pa, pb;
} ad_slot;

/* Op code of a var (t->op[k]): the op in the low bits, and for a binary op
** with one constant operand which side is the constant. The var operand is
** then always in slot a, the constant in pb, and b is 0. Leaves: AD_OP_NONE. */
#define AD_SLOT_OPMASK 0x3f
#define AD_SLOT_ACONST 0x40
#define AD_SLOT_BCONST 0x80

/* Node flags (binary ops: which operands are constants / vectors). */
enum {
  AD_NF_ACONST = 1, AD_NF_BCONST = 2, AD_NF_AVEC = 4, AD_NF_BVEC = 8,
  AD_NF_AUX = 16,   /* u.aux holds an ad_vec_aux */
  AD_NF_CUSTOM = 32 /* u.aux starts with an ad_custom: sweeps by function */
};

typedef struct ad_node {
  uint16_t op, flags;
  ad_idx out, nout; /* outputs out..out+nout-1 */
  ad_idx e0, ne;    /* entries e0..e0+ne-1 */
  union {
    void *aux;      /* op data in the arena */
  } u;
} ad_node;

/* A node whose first-order sweeps are functions rather than entries: matrix
** operations (products, Cholesky, triangular solves) whose Jacobians would
** take O(n^3) or O(n^4) stored partials, while their adjoints are O(n^3)
** products. The node has no entries; u.aux points at op data that begins
** with this header, listing the var ranges the node reads. The Hessian
** passes refuse such nodes (AD_ENOSECOND_OP). */
struct ad_tape;
typedef struct ad_custom_ops {
  /* adj[inputs] += J^T adj[outputs] */
  void (*reverse)(struct ad_tape *t, const struct ad_node *nd);
  /* tan[outputs] += J tan[inputs] (tan indexed like val) */
  void (*forward)(const struct ad_tape *t, const struct ad_node *nd, double *tan);
  /* Second order (ad_hess.c), K directions at once. The tangents of var v
  ** are tdot[(v + 1) K + k], the adjoints' tangents adot likewise.
  ** tangent: tdot[outputs] = J tdot[inputs]. adjoint_dot: adot[inputs] +=
  ** J^T adot[outputs] + (dJ^T) adj[outputs]. 0 or AD_ENOMEM. NULL: the
  ** operation has no second order (ad_hvp refuses it). */
  int (*tangent)(const struct ad_tape *t, const struct ad_node *nd, double *tdot, size_t K);
  int (*adjoint_dot)(const struct ad_tape *t, const struct ad_node *nd, const double *tdot,
                     double *adot, size_t K);
} ad_custom_ops;

#define AD_CUSTOM_MAXIN 2
typedef struct ad_custom {
  const ad_custom_ops *ops;
  ad_idx in[AD_CUSTOM_MAXIN];   /* first var of each input read, or AD_NOVAR */
  size_t nin[AD_CUSTOM_MAXIN];  /* its length */
} ad_custom;

typedef struct ad_region {
  ad_idx nvar, nent, nnode;
  ad_arena_mark mark;
  uint32_t serial;
} ad_region;

typedef struct ad_tape {
  double *val, *adj;    /* val[-1] and adj[-1] exist: the trash slot */
  ad_slot *slot;
  uint8_t *op;
  ad_idx nvar, capvar;
  ad_entry *ent;
  double *par;
  ad_idx nent, capent;
  ad_node *node;
  ad_idx nnode, capnode;
  ad_arena arena;
  ad_region reg[AD_MAXDEPTH];
  int depth;            /* index of the innermost open region (0 = base) */
  uint32_t serial;      /* last serial handed out */
} ad_tape;

/* Lifecycle. A zeroed ad_tape after ad_tape_init is usable (no allocation
** happens until the first record). ad_tape_free releases everything. */
void ad_tape_init(ad_tape *t);
void ad_tape_free(ad_tape *t);
/* Rewind everything (all regions closed, base emptied, serial moves on). */
void ad_tape_reset(ad_tape *t);

/* Make room for nv vars, ne entries and nn nodes. 0 or AD_ENOMEM/AD_ETOOBIG.
** On failure the tape is unchanged (arrays may have grown). */
int ad_tape_grow(ad_tape *t, size_t nv, size_t ne, size_t nn);
static inline int ad_reserve(ad_tape *t, size_t nv, size_t ne, size_t nn) {
  if ((size_t)(t->capvar - t->nvar) >= nv && (size_t)(t->capent - t->nent) >= ne &&
      (size_t)(t->capnode - t->nnode) >= nn)
    return 0;
  return ad_tape_grow(t, nv, ne, nn);
}

/* Append a node (room reserved by the caller: ad_reserve). */
static inline ad_node *ad_push_node(ad_tape *t, int op, int flags, ad_idx out, ad_idx nout,
                                    ad_idx e0, ad_idx ne, void *aux) {
  ad_node *nd = &t->node[t->nnode++];
  nd->op = (uint16_t)op;
  nd->flags = (uint16_t)flags;
  nd->out = out; nd->nout = nout; nd->e0 = e0; nd->ne = ne;
  nd->u.aux = aux;
  return nd;
}

/* A new leaf var (no partials) with value v. */
int ad_var_new(ad_tape *t, double v, ad_idx *out);
/* n new contiguous leaf vars out..out+n-1 with values v (v may be NULL: 0).
** More than a few become one node (op AD_OP_NONE, no entries) that the
** passes skip. */
int ad_vars_new(ad_tape *t, size_t n, const double *v, ad_idx *out);
static inline double ad_value(const ad_tape *t, ad_idx v) { return t->val[v]; }

/* Side data owned by the tape, released when its region ends. */
void *ad_tape_alloc(ad_tape *t, size_t bytes);

/* Regions. begin: 0 or AD_EDEPTH. end: 0 or AD_ENOREGION (base can't end). */
int ad_region_begin(ad_tape *t);
int ad_region_end(ad_tape *t);
/* Serial of the region var v belongs to: a var handle remembers it, and is
** live iff ad_var_live says so. */
uint32_t ad_var_serial(const ad_tape *t, ad_idx v);
int ad_var_live(const ad_tape *t, ad_idx v, uint32_t serial);

/* First-order sweeps over the innermost region (its scalar vars and nodes).
** ad_sweep_reverse: adj[in] += adj[out]*p, last to first.
** ad_sweep_forward: tan[out] += p*tan[in], first to last; tan is indexed like
** val (tan[-1] must exist and be 0).
** Callers seed and clear the arrays (t->adj, or their own tan). */
void ad_sweep_reverse(ad_tape *t);
void ad_sweep_forward(const ad_tape *t, double *tan);
/* Zero x (indexed like val, x[-1] included) over the innermost region's vars
** and every older var the region reads. */
void ad_clear_region(const ad_tape *t, double *x);

/* A var created before the innermost region that the region reads (an
** operand of one of its ops), or AD_NOVAR: a job whose inputs are all
** leaves of its region must not depend on anything else. */
ad_idx ad_region_outer_read(const ad_tape *t);

/* Gradient of y w.r.t. the n vars in[] inside the innermost region: g[j].
** Clobbers adjoints. */
int ad_grad(ad_tape *t, ad_idx y, size_t n, const ad_idx *in, double *g);
/* Vector-Jacobian product: g = sum_i u[i] d y[i] / d in. */
int ad_vjp(ad_tape *t, size_t m, const ad_idx *y, const double *u, size_t n,
           const ad_idx *in, double *g);
/* Jacobian-vector product by one forward pass: jv[i] = sum_j dy_i/din_j v[j].
** The inputs must be leaves created in the innermost region or before it. */
int ad_jvp(ad_tape *t, size_t m, const ad_idx *y, size_t n, const ad_idx *in,
           const double *v, double *jv);
/* Jacobian J[i*n + j] = d y[i] / d in[j] (row-major), in the innermost region:
** m reverse sweeps if m <= n, else n forward passes. */
int ad_jacobian(ad_tape *t, size_t m, const ad_idx *y, size_t n,
                const ad_idx *in, double *J);

#endif
