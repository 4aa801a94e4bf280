/* SPDX-License-Identifier: MIT */
/*
** Distributed arrays (README "Distributed arrays"): an mp.Array (this rank's
** block, halo included) carrying its layout as the array's attribute
** (array.h), so that everything taking an array takes it (messages, views,
** transposes, halos, array math) and the operations that mean the whole
** array are its own:
**
**   mp.darray(layout [, opts])   layout:alloc([halo])   a zero block
**   mp.darray(layout, a)         a view of a (this rank's block), distributed
**   layout:scatter(t [, root])   root's global array t, each rank its block
**   d:gather([root])             the global array at root (nil elsewhere)
**   d:redistribute(other)        a transpose into other's blocks
**   d:sum() d:prod() d:min() d:max() d:mean() d:norm([p]) d:dot(e)
**                                over the whole array (the owned elements:
**                                halos are not counted), on every rank
**   d:block()                    this rank's owned block as a plain view
**   d.layout, d.halo, d.comm     tostring(d): the global shape and the block
** Element-wise results, copies and *_like keep the layout (array.h's rule).
** The collectives run on d.comm (default mp.world, whose size must then be
** the layout's ranks); a layout of one rank reduces locally.
*/
#include <math.h>
#include <string.h>

#include "array/array.h"
#include "layout/laylib.h"
#include "layout/xchg.h"
#include "p2p/p2p.h"

#define ATTR_MT "mp.DArrayAttr"

/* ------------------------------------------------------------ attaching */
void mpb_darray_attach(lua_State *L, int aidx, int layidx, const int64_t *halo, int cidx) {
  aidx = lua_absindex(L, aidx), layidx = lua_absindex(L, layidx);
  cidx = cidx ? lua_absindex(L, cidx) : 0;
  const mpb_lay *y = lua_touserdata(L, layidx);
  lua_createtable(L, 0, 3);
  lua_pushvalue(L, layidx);
  lua_setfield(L, -2, "layout");
  int any = 0;
  for (int k = 0; halo && k < y->l.ndim; k++) any |= halo[k] > 0;
  if (any) {
    lua_createtable(L, y->l.ndim, 0);
    for (int k = 0; k < y->l.ndim; k++) lua_pushinteger(L, halo[k]), lua_rawseti(L, -2, k + 1);
    lua_setfield(L, -2, "halo");
  }
  if (cidx) {
    lua_pushvalue(L, cidx);
    lua_setfield(L, -2, "comm");
  }
  luaL_setmetatable(L, ATTR_MT);
  mpb_array_setattr(L, aidx);
}

/* Whether the value on top is a distributed array's attribute. */
static int is_attr(lua_State *L) {
  if (!lua_istable(L, -1) || !lua_getmetatable(L, -1)) return 0;
  luaL_getmetatable(L, ATTR_MT);
  int r = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return r;
}

int mpb_darray_test(lua_State *L, int idx) {
  if (!mpb_array_testv(L, idx)) return 0;
  mpb_array_getattr(L, idx);
  int r = is_attr(L);
  lua_pop(L, 1);
  return r;
}

/* What a method needs of the distributed array at idx. */
typedef struct {
  mpb_array *a;
  mpb_lay lay;                      /* its layout with the array's dtype */
  int64_t halo[MPB_LAYOUT_MAXDIM];
  int me;
} darr;

static void dcheck(lua_State *L, int idx, darr *d, const char *fname) {
  d->a = mpb_array_testv(L, idx);
  if (d->a) mpb_array_getattr(L, idx);
  else lua_pushnil(L);
  if (!is_attr(L))
    mpb_lay_argerror(L, idx, fname, "distributed array expected, got %s",
                     d->a ? "a plain mp.Array" : luaL_typename(L, idx));
  lua_getfield(L, -1, "layout");
  d->lay = *(mpb_lay *)lua_touserdata(L, -1);
  d->lay.dtype = d->a->dtype;
  memset(d->halo, 0, sizeof d->halo);
  if (lua_getfield(L, -2, "halo") == LUA_TTABLE)
    for (int k = 0; k < d->lay.l.ndim; k++)
      lua_rawgeti(L, -1, k + 1), d->halo[k] = lua_tointeger(L, -1), lua_pop(L, 1);
  d->me = mpb_get(L)->rank;
  if (lua_getfield(L, -3, "comm") != LUA_TNIL) d->me = ((const mpb_comm *)lua_touserdata(L, -1))->rank;
  lua_pop(L, 4);
}

/* The communicator of the array at idx (pushed): its own, or mp.world. */
static mpb_comm *dcomm(lua_State *L, int idx, const darr *d, const char *fname) {
  mpb_array_getattr(L, idx);
  if (lua_getfield(L, -1, "comm") == LUA_TNIL) lua_pop(L, 1), mpb_comm_pushworld(L);
  lua_remove(L, -2);
  mpb_comm *c = mpb_comm_check(L, mpb_get(L), -1, fname);
  if (c->size != d->lay.l.nranks)
    mpb_lay_argerror(L, 0, fname, "the layout has %d ranks, the communicator %d (give "
                     "mp.darray the communicator: opts.comm)", d->lay.l.nranks, c->size);
  return c;
}

/* Push this rank's owned block of d (the array without its halo) as a plain view. */
static mpb_array *owned(lua_State *L, int idx, const darr *d) {
  int64_t dims[MPB_ARRAY_MAXDIM], off = 0;
  const mpb_array *a = d->a;
  for (int k = 0; k < a->ndim; k++) {
    dims[k] = a->dims[k] - 2 * d->halo[k];
    off += d->halo[k] * a->strides[k];
  }
  int64_t n = mpb_array_count(a->dtype, a->ndim, dims);
  char *data = (char *)a->data + (n > 0 ? off * (int64_t)mpb_dtype_size(a->dtype) : 0);
  lua_getiuservalue(L, idx, 1); /* the memory's owner, or the array itself */
  if (lua_isnil(L, -1)) lua_pop(L, 1), lua_pushvalue(L, idx);
  mpb_array *v = mpb_array_strided(L, -1, data, a->dtype, a->ndim, dims, a->strides);
  lua_remove(L, -2);
  return v;
}

mpb_array *mpb_darray_parts(lua_State *L, int idx, mpb_lay *y, const char *fname) {
  darr d;
  idx = lua_absindex(L, idx);
  dcheck(L, idx, &d, fname);
  mpb_array *v = owned(L, idx, &d);
  dcomm(L, idx, &d, fname);
  *y = d.lay;
  return v;
}

/* ------------------------------------------------------------ reductions */
/* Call the plain array method name (mp.Array, upvalue 1) on the view on top
** (replaced by the result), with one more argument at extra (0: none). */
static void local_call(lua_State *L, const char *name, int extra) {
  lua_getfield(L, lua_upvalueindex(1), name);
  lua_insert(L, -2);
  if (extra) lua_pushvalue(L, extra);
  lua_call(L, extra ? 2 : 1, 1);
}

/* comm:allreduce(value on top, op): the result replaces it (comm at cidx). */
static void allreduce(lua_State *L, int cidx, const char *op) {
  lua_getfield(L, cidx, "allreduce");
  lua_pushvalue(L, cidx);
  lua_pushvalue(L, -3);
  lua_pushstring(L, op);
  lua_call(L, 3, 1);
  lua_replace(L, -2);
}

static int reduce(lua_State *L, const char *name, const char *op) {
  darr d;
  char fname[32];
  snprintf(fname, sizeof fname, "DArray.%s", name);
  dcheck(L, 1, &d, fname);
  lua_settop(L, 2);
  dcomm(L, 1, &d, fname); /* 3 */
  owned(L, 1, &d);
  local_call(L, name, 0);
  allreduce(L, 3, op);
  return 1;
}

static int d_sum(lua_State *L) { return reduce(L, "sum", "sum"); }
static int d_prod(lua_State *L) { return reduce(L, "prod", "prod"); }

/* min and max: ranks with an empty block have nothing to say; NaN wins. */
static int extreme(lua_State *L, int max) {
  const char *fname = max ? "DArray.max" : "DArray.min";
  darr d;
  dcheck(L, 1, &d, fname);
  lua_settop(L, 1);
  mpb_comm *c = dcomm(L, 1, &d, fname); /* 2 */
  mpb_array *v = owned(L, 1, &d);
  if (v->n > 0) local_call(L, max ? "max" : "min", 0);
  else lua_pop(L, 1), lua_pushboolean(L, 0); /* nothing here */
  lua_getfield(L, 2, "allgather");
  lua_pushvalue(L, 2);
  lua_pushvalue(L, -3);
  lua_call(L, 2, 1); /* 4: every rank's */
  int best = 0;
  for (int r = 1; r <= c->size; r++) {
    if (lua_rawgeti(L, 4, r) == LUA_TBOOLEAN) {
      lua_pop(L, 1);
      continue;
    }
    lua_Number x = lua_tonumber(L, -1);
    if (!best) {
      best = lua_gettop(L);
    } else if (x != x || (max ? lua_compare(L, best, -1, LUA_OPLT)
                              : lua_compare(L, -1, best, LUA_OPLT))) {
      lua_replace(L, best);
    } else {
      lua_pop(L, 1);
    }
    if (x != x) break;
  }
  if (!best) mpb_lay_argerror(L, 1, fname, "empty array");
  lua_pushvalue(L, best);
  return 1;
}

static int d_min(lua_State *L) { return extreme(L, 0); }
static int d_max(lua_State *L) { return extreme(L, 1); }

/* The number of elements of the global array. */
static double global_count(const darr *d) {
  double n = 1;
  for (int k = 0; k < d->lay.l.ndim; k++) n *= (double)d->lay.l.extent[k];
  return n;
}

static int d_mean(lua_State *L) {
  darr d;
  dcheck(L, 1, &d, "DArray.mean");
  d_sum(L);
  lua_pushnumber(L, global_count(&d));
  lua_arith(L, LUA_OPDIV);
  return 1;
}

/* d:norm([p]): p = 2 scaled by the largest local norm (no overflow where
** the result does not), 1 a sum, math.huge a max. */
static int d_norm(lua_State *L) {
  darr d;
  dcheck(L, 1, &d, "DArray.norm");
  lua_settop(L, 2);
  double p = luaL_optnumber(L, 2, 2);
  dcomm(L, 1, &d, "DArray.norm"); /* 3 */
  owned(L, 1, &d);
  local_call(L, "norm", 2);
  if (p == 1) {
    allreduce(L, 3, "sum");
    return 1;
  }
  double mine = lua_tonumber(L, -1);
  allreduce(L, 3, "max");
  double m = lua_tonumber(L, -1);
  if (p != 2 || m == 0 || !isfinite(m)) return 1;
  lua_pushnumber(L, (mine / m) * (mine / m));
  allreduce(L, 3, "sum");
  lua_pushnumber(L, m * sqrt(lua_tonumber(L, -1)));
  return 1;
}

/* d:dot(e): the sum over the whole array of d[i] * e[i] (same layout). */
static int d_dot(lua_State *L) {
  darr d, e;
  dcheck(L, 1, &d, "DArray.dot");
  dcheck(L, 2, &e, "DArray.dot");
  lua_settop(L, 2);
  if (d.lay.l.ndim != e.lay.l.ndim || memcmp(&d.lay.l, &e.lay.l, sizeof d.lay.l) != 0)
    mpb_lay_argerror(L, 2, "DArray.dot", "another layout than the first array's");
  dcomm(L, 1, &d, "DArray.dot"); /* 3 */
  lua_getfield(L, lua_upvalueindex(1), "dot");
  owned(L, 1, &d);
  owned(L, 2, &e);
  lua_call(L, 2, 1);
  allreduce(L, 3, "sum");
  return 1;
}

/* ------------------------------------------------------------ gather, scatter */
/* One phase moving each rank's owned block to or from root's global array
** g: boxes in the local arrays (with their halo offsets) and in g. */
typedef struct {
  mpb_xphase ph;
  mpb_xbox self[2];
  mpb_xbox boxes[];                 /* root: one per other rank; others: one */
} gphase;

static void box_of(mpb_xbox *b, int peer, int nd, const int64_t *off, const int64_t *len) {
  memset(b, 0, sizeof *b);
  b->peer = peer;
  b->nd = nd;
  b->n = 1;
  for (int j = 0; j < nd; j++) {
    b->dim[j] = j;
    b->off[j] = off[j];
    b->len[j] = len[j];
    b->n *= len[j];
  }
}

/* Push the phase: to root (gather) or from root (scatter); halo: the local
** arrays' halo widths. */
static gphase *gather_phase(lua_State *L, const mpb_lay *y, const int64_t *halo, int me, int root,
                            int scatter) {
  int P = y->l.nranks, nd = y->l.ndim;
  gphase *g = lua_newuserdatauv(L, sizeof *g + (size_t)(me == root ? P : 1) * sizeof(mpb_xbox), 0);
  memset(g, 0, sizeof *g);
  int64_t lo[MPB_LAYOUT_MAXDIM], len[MPB_LAYOUT_MAXDIM];
  int k = 0;
  mpb_xbox *mine = scatter ? &g->self[1] : &g->self[0], *there = scatter ? &g->self[0] : &g->self[1];
  for (int r = 0; r < P; r++) {
    if (r != me && me != root) continue;
    mpb_layout_range(&y->l, r, lo, len);
    int64_t n = 1;
    for (int j = 0; j < nd; j++) n *= len[j];
    if (n == 0) continue;
    if (r == me) {
      box_of(mine, me, nd, halo, len);
      if (me == root) {
        box_of(there, me, nd, lo, len);
        g->ph.nself = 1;
      } else {
        box_of(&g->boxes[k++], root, nd, halo, len);
      }
    } else {
      box_of(&g->boxes[k++], r, nd, lo, len);
    }
  }
  g->ph.self = g->self;
  int to_root = me != root;
  if (to_root != scatter) g->ph.send = g->boxes, g->ph.nsend = k;
  else g->ph.recv = g->boxes, g->ph.nrecv = k;
  return g;
}

static int rootarg(lua_State *L, int arg, const mpb_comm *c, const char *fname) {
  if (lua_isnoneornil(L, arg)) return 0;
  int ok;
  lua_Integer r = lua_tointegerx(L, arg, &ok);
  if (!ok || r < 0 || r >= c->size)
    mpb_lay_argerror(L, arg, fname, "root must be a rank 0..%d", c->size - 1);
  return (int)r;
}

/* d:gather([root]) */
static int d_gather(lua_State *L) {
  const char *fn = "DArray.gather";
  darr d;
  dcheck(L, 1, &d, fn);
  lua_settop(L, 2);
  mpb_comm *c = dcomm(L, 1, &d, fn); /* 3 */
  int root = rootarg(L, 2, c, fn);
  int me = c->rank;
  gather_phase(L, &d.lay, d.halo, me, root, 0); /* 4 */
  gphase *g = lua_touserdata(L, 4);
  if (me == root) mpb_array_new(L, d.a->dtype, d.lay.l.ndim, d.lay.l.extent);
  else lua_pushvalue(L, 1);
  mpb_xchg_apply(L, 3, 4, &g->ph, 1, 1, 5, MPB_COLL_DGATHER, fn, 1);
  lua_settop(L, 5);
  if (me != root) lua_pushnil(L);
  return 1;
}

/* layout:scatter(t [, root [, comm]]): root's global array t (other ranks:
** nil), converted to the layout's dtype; each rank gets its block. */
static int l_scatter(lua_State *L) {
  const char *fn = "Layout.scatter";
  mpb_state *st = mpb_get(L);
  mpb_lay *y = mpb_lay_check(L, 1, fn);
  lua_settop(L, 4);
  if (lua_isnil(L, 4)) mpb_comm_pushworld(L), lua_replace(L, 4);
  mpb_comm *c = mpb_comm_check(L, st, 4, fn);
  if (c->size != y->l.nranks)
    mpb_lay_argerror(L, 4, fn, "the communicator has %d ranks, the layout %d", c->size, y->l.nranks);
  int root = rootarg(L, 3, c, fn), me = c->rank;
  if (me == root) {
    mpb_array *t = mpb_array_testv(L, 2);
    if (!t) mpb_lay_argerror(L, 2, fn, "the global array expected at the root, got %s",
                             luaL_typename(L, 2));
    if (t->ndim != y->l.ndim || memcmp(t->dims, y->l.extent, sizeof(int64_t) * (size_t)t->ndim))
      mpb_lay_argerror(L, 2, fn, "the global array has %d dimensions (%I x ...), the layout's "
                       "shape is %I x ...", t->ndim, (LUAI_UACINT)t->dims[0],
                       (LUAI_UACINT)y->l.extent[0]);
    if (t->dtype != y->dtype) {
      mpb_array *u = mpb_array_new(L, y->dtype, t->ndim, t->dims);
      const char *msg = mpb_array_convert(L, u, t);
      if (msg) mpb_lay_argerror(L, 2, fn, "%s", msg);
      lua_replace(L, 2);
    }
  }
  int64_t dims[MPB_LAYOUT_MAXDIM], none[MPB_LAYOUT_MAXDIM] = {0};
  int nd = mpb_lay_block_shape(y, me, NULL, dims);
  gather_phase(L, y, none, me, root, 1); /* 5 */
  gphase *g = lua_touserdata(L, 5);
  mpb_array_new(L, y->dtype, nd, dims); /* 6 */
  mpb_darray_attach(L, 6, 1, NULL, 4);
  mpb_xchg_apply(L, 4, 5, &g->ph, 1, me == root ? 2 : 6, 6, MPB_COLL_DSCATTER, fn, 1);
  lua_settop(L, 6);
  return 1;
}

/* ------------------------------------------------------------ the rest */
/* d:redistribute(other): this array in the blocks of layout other. */
static int d_redistribute(lua_State *L) {
  const char *fn = "DArray.redistribute";
  darr d;
  dcheck(L, 1, &d, fn);
  mpb_lay *o = mpb_lay_check(L, 2, fn);
  lua_settop(L, 2);
  mpb_comm *c = dcomm(L, 1, &d, fn); /* 3 */
  mpb_lay_push(L, &d.lay); /* 4: the layout with the array's dtype */
  if (o->dtype != d.a->dtype) {
    mpb_lay w = *o;
    w.dtype = d.a->dtype;
    mpb_lay_push(L, &w);
    lua_replace(L, 2);
  }
  mpb_transpose_push(L, 4, 2, 3, fn); /* 5 */
  owned(L, 1, &d);                    /* 6 */
  int64_t dims[MPB_LAYOUT_MAXDIM];
  int nd = mpb_lay_block_shape(lua_touserdata(L, 2), c->rank, NULL, dims);
  mpb_array_new(L, d.a->dtype, nd, dims); /* 7 */
  mpb_darray_attach(L, 7, 2, NULL, 3);
  mpb_transpose_run(L, 5, 0, 6, 7, 1, fn);
  return 1;
}

/* d:block(): this rank's owned block, a plain view (halo left out). */
static int d_block(lua_State *L) {
  darr d;
  dcheck(L, 1, &d, "DArray.block");
  owned(L, 1, &d);
  return 1;
}

/* "mp.DArray(f64, 8x6) f64[x=8@1, y=6] over 2: rank 0's block x 1:4, y 1:6
** (4x6, halo 1)", then the block's elements when there are 8 or fewer. */
static int d_tostring(lua_State *L) {
  darr d;
  dcheck(L, 1, &d, "DArray.__tostring");
  const mpb_layout *l = &d.lay.l;
  char spec[512];
  mpb_layout_format(l, mpb_dtype_name(d.a->dtype), 1, spec, sizeof spec);
  int64_t lo[MPB_LAYOUT_MAXDIM], len[MPB_LAYOUT_MAXDIM];
  int me = d.me < l->nranks ? d.me : 0;
  mpb_layout_range(l, me, lo, len);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "mp.DArray(%s, ", mpb_dtype_name(d.a->dtype));
  luaL_addvalue(&b);
  for (int k = 0; k < l->ndim; k++) {
    lua_pushfstring(L, k ? "x%I" : "%I", (LUAI_UACINT)l->extent[k]);
    luaL_addvalue(&b);
  }
  lua_pushfstring(L, ") %s: rank %d's block ", spec, me);
  luaL_addvalue(&b);
  for (int k = 0; k < l->ndim; k++) {
    lua_pushfstring(L, "%s%s %I:%I", k ? ", " : "", l->name[k], (LUAI_UACINT)lo[k] + 1,
                    (LUAI_UACINT)(lo[k] + len[k]));
    luaL_addvalue(&b);
  }
  luaL_addstring(&b, " (");
  for (int k = 0; k < l->ndim; k++) {
    lua_pushfstring(L, k ? "x%I" : "%I", (LUAI_UACINT)len[k]);
    luaL_addvalue(&b);
  }
  int halo = 0;
  for (int k = 0; k < l->ndim; k++) halo |= d.halo[k] > 0;
  luaL_addstring(&b, halo ? ", with a halo)" : ")");
  mpb_array *v = owned(L, 1, &d);
  if (v->n > 0 && v->n <= 8) {
    for (int64_t i = 0; i < v->n; i++) {
      luaL_addstring(&b, i ? ", " : " {");
      mpb_array_pushelem(L, v, mpb_array_offset(v, i));
      luaL_tolstring(L, -1, NULL);
      lua_remove(L, -2);
      luaL_addvalue(&b);
    }
    luaL_addchar(&b, '}');
  }
  lua_pop(L, 1);
  luaL_pushresult(&b);
  return 1;
}

/* mp.darray(layout [, opts | a]): opts.halo, opts.comm; or a view of the
** array a (this rank's block, checked). */
static int darray(lua_State *L) {
  const char *fn = "darray";
  mpb_lay *y = mpb_lay_check(L, 1, fn);
  lua_settop(L, 2);
  int64_t w[MPB_LAYOUT_MAXDIM], dims[MPB_LAYOUT_MAXDIM];
  int cidx = 0, me;
  memset(w, 0, sizeof w);
  if (lua_istable(L, 2) && lua_getfield(L, 2, "comm") != LUA_TNIL) {
    me = mpb_comm_check(L, mpb_get(L), -1, fn)->rank;
    cidx = lua_gettop(L);
  } else {
    me = mpb_lay_rankarg(L, y, 3, fn);
  }
  if (mpb_array_testv(L, 2)) {
    mpb_array *a = mpb_lay_check_block(L, y, me, NULL, NULL, 2, fn);
    lua_getiuservalue(L, 2, 1);
    if (lua_isnil(L, -1)) lua_pop(L, 1), lua_pushvalue(L, 2);
    mpb_array_strided(L, -1, a->data, a->dtype, a->ndim, a->dims, a->strides);
  } else {
    if (!lua_isnil(L, 2) && !lua_istable(L, 2))
      mpb_lay_argerror(L, 2, fn, "options table or mp.Array expected, got %s", luaL_typename(L, 2));
    if (lua_istable(L, 2)) {
      lua_getfield(L, 2, "halo");
      mpb_lay_halo_arg(L, y, lua_gettop(L), fn, w);
    }
    int nd = mpb_lay_block_shape(y, me, w, dims);
    mpb_array_new(L, y->dtype, nd, dims);
  }
  mpb_darray_attach(L, -1, 1, w, cidx);
  return 1;
}

void mpb_open_darray(lua_State *L, int mpt, int laymethods) {
  static const luaL_Reg methods[] = {
      {"sum", d_sum}, {"prod", d_prod}, {"min", d_min}, {"max", d_max}, {"mean", d_mean},
      {"norm", d_norm}, {"dot", d_dot}, {"gather", d_gather}, {"redistribute", d_redistribute},
      {"block", d_block}, {"tostring", d_tostring}, {NULL, NULL}};
  luaL_newmetatable(L, ATTR_MT);
  lua_newtable(L);
  lua_getfield(L, mpt, "Array"); /* the plain methods: the local parts of these */
  luaL_setfuncs(L, methods, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, darray);
  lua_setfield(L, mpt, "darray");
  lua_pushcfunction(L, l_scatter);
  lua_setfield(L, laymethods, "scatter");
}
