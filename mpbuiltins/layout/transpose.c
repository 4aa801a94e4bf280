/* SPDX-License-Identifier: MIT */
/*
** Transpose plans (README "Transposes"): mp.transpose(from, to [, comm])
** makes, once and without communication, the plan that moves an array from
** layout `from` to layout `to` (the same dimensions by name and extent, the
** same dtype and number of ranks, any splits, grids, balance and memory
** orders) and back. Method: general box intersection (layout_box.h): what
** rank p sends to rank q is p's block of `from` met with q's block of `to`,
** so any two layouts move in one exchange, never through a gather. The
** data movement is xchg.c's: pack each box into its message and send it,
** copy the part that stays view to view, unpack arrivals as they come.
**
**   p:forward(a [, out])     a (this rank's block of from) -> out (block of to);
**                            out may be a, or share its memory (xchg.h)
**   p:back(b [, out])        the reverse
**   p:iforward(a [, out]), p:iback(b [, out])   the same, returning an
**                            mp.Exchange request (req:wait() returns out)
**   p:info()                 {method, peers, messages, send_bytes, recv_bytes,
**                            self_bytes, peak_extra, plan_bytes, from, to}
**                            (forward; the back direction moves the same
**                            bytes reversed; plan_bytes: the plan's memory,
**                            one box per peer and direction)
**   p.from, p.to             the layouts
*/
#include <string.h>

#include "array/array.h"
#include "layout/laylib.h"
#include "layout/layout_box.h"
#include "layout/xchg.h"
#include "p2p/p2p.h"

#define PLAN_MT "mp.Transpose"

/* One direction: boxes against the local arrays. */
typedef struct {
  mpb_xphase ph;
  mpb_xbox *send, *recv, self[2];
} tdir;

/* user values: 1 communicator, 2 from layout, 3 to layout */
typedef struct {
  mpb_lay from, to;
  int me, nranks, nbox;
  tdir dir[2];              /* 0 forward, 1 back */
  mpb_xbox boxes[];         /* send/recv of both directions: one per peer */
} tplan;

/* A global box (in src's dim order) as a box of the local array of lay on
** rank me; dim[j] of the pack order is the array dim of src dim j. */
static void to_local(const mpb_layout *lay, const int *perm, int me, const mpb_box *g,
                     mpb_xbox *b) {
  int64_t lo[MPB_LAYOUT_MAXDIM], len[MPB_LAYOUT_MAXDIM];
  mpb_layout_range(lay, me, lo, len);
  memset(b, 0, sizeof *b);
  b->peer = g->peer;
  b->nd = lay->ndim;
  b->n = g->n;
  for (int j = 0; j < lay->ndim; j++) {
    int d = perm ? perm[j] : j;
    b->dim[j] = d;
    b->off[j] = g->lo[j] - lo[d];
    b->len[j] = g->len[j];
  }
}

/* How many boxes of src -> dst rank me sends (*ns) and receives (*nr),
** the part it keeps left out. */
static void count_dir(const mpb_layout *src, const mpb_layout *dst, int me, mpb_box *tmp,
                      int *ns, int *nr) {
  int perm[MPB_LAYOUT_MAXDIM], bad;
  mpb_layout_match(src, dst, perm, &bad);
  *ns = *nr = 0;
  for (int recv = 0; recv < 2; recv++) {
    int n = mpb_transpose_boxes(src, dst, perm, me, recv, tmp);
    for (int i = 0; i < n; i++)
      if (tmp[i].peer != me) ++*(recv ? nr : ns);
  }
}

/* The plan of src -> dst on rank me into d (send and recv have room for
** the boxes count_dir counted). */
static void plan_dir(const mpb_layout *src, const mpb_layout *dst, int me, tdir *d,
                     mpb_box *tmp) {
  int perm[MPB_LAYOUT_MAXDIM], bad;
  mpb_layout_match(src, dst, perm, &bad);
  int ns = mpb_transpose_boxes(src, dst, perm, me, 0, tmp);
  int nself = 0, k = 0;
  for (int i = 0; i < ns; i++) {
    if (tmp[i].peer == me) {
      to_local(src, NULL, me, &tmp[i], &d->self[0]);
      to_local(dst, perm, me, &tmp[i], &d->self[1]);
      nself = 1;
    } else {
      to_local(src, NULL, me, &tmp[i], &d->send[k++]);
    }
  }
  d->ph.nsend = k;
  d->ph.nself = nself;
  int nr = mpb_transpose_boxes(src, dst, perm, me, 1, tmp);
  k = 0;
  for (int i = 0; i < nr; i++)
    if (tmp[i].peer != me) to_local(dst, perm, me, &tmp[i], &d->recv[k++]);
  d->ph.nrecv = k;
  d->ph.send = d->send;
  d->ph.recv = d->recv;
  d->ph.self = d->self;
}

/* The plan from layout a (at aidx) to b (at bidx) on the communicator at
** cidx, pushed; errors name argument 2 (the layouts) and 3 (comm) of fname. */
void mpb_transpose_push(lua_State *L, int aidx, int bidx, int cidx, const char *fn) {
  mpb_state *st = mpb_get(L);
  aidx = lua_absindex(L, aidx), bidx = lua_absindex(L, bidx), cidx = lua_absindex(L, cidx);
  mpb_lay *a = mpb_lay_check(L, aidx, fn), *b = mpb_lay_check(L, bidx, fn);
  mpb_comm *c = mpb_comm_check(L, st, cidx, fn);
  int perm[MPB_LAYOUT_MAXDIM], bad;
  int rc = mpb_layout_match(&a->l, &b->l, perm, &bad);
  if (rc == MPB_LAYOUT_ENRANKS)
    mpb_lay_argerror(L, 2, fn, "the layouts are for %d and %d ranks", a->l.nranks, b->l.nranks);
  if (rc < 0 && bad >= 0)
    mpb_lay_argerror(L, 2, fn, "no dimension '%s' of extent %I (%s)", a->l.name[bad],
                     (LUAI_UACINT)a->l.extent[bad], mpb_layout_strerror(rc));
  if (rc < 0) mpb_lay_argerror(L, 2, fn, "%s", mpb_layout_strerror(rc));
  if (a->dtype != b->dtype)
    mpb_lay_argerror(L, 2, fn, "dtype %s, but the first layout's is %s", mpb_dtype_name(b->dtype),
                     mpb_dtype_name(a->dtype));
  if (c->size != a->l.nranks)
    mpb_lay_argerror(L, 3, fn, "the communicator has %d ranks, the layouts %d", c->size,
                     a->l.nranks);
  int P = a->l.nranks, ns, nr;
  mpb_box *tmp = lua_newuserdatauv(L, (size_t)P * sizeof *tmp, 0);
  count_dir(&a->l, &b->l, c->rank, tmp, &ns, &nr);
  /* memory for the peers this rank exchanges with, not for every rank */
  tplan *p = lua_newuserdatauv(L, sizeof *p + 2 * (size_t)(ns + nr) * sizeof(mpb_xbox), 3);
  memset(p, 0, sizeof *p);
  p->nbox = 2 * (ns + nr);
  luaL_setmetatable(L, PLAN_MT);
  const int slots[3] = {cidx, aidx, bidx};
  for (int i = 0; i < 3; i++) {
    lua_pushvalue(L, slots[i]);
    lua_setiuservalue(L, -2, i + 1);
  }
  p->from = *a;
  p->to = *b;
  p->me = c->rank;
  p->nranks = P;
  p->dir[0].send = p->boxes;            /* forward: ns sends, nr receives */
  p->dir[0].recv = p->boxes + ns;
  p->dir[1].send = p->boxes + ns + nr;  /* back: the other way round */
  p->dir[1].recv = p->boxes + ns + 2 * nr;
  for (int d = 0; d < 2; d++)
    plan_dir(d ? &b->l : &a->l, d ? &a->l : &b->l, p->me, &p->dir[d], tmp);
  lua_remove(L, -2); /* tmp */
}

/* mp.transpose(from, to [, comm]) */
static int transpose(lua_State *L) {
  if (lua_isnoneornil(L, 3)) {
    lua_settop(L, 2);
    mpb_comm_pushworld(L);
  }
  mpb_transpose_push(L, 1, 2, 3, "transpose");
  return 1;
}

static tplan *check_plan(lua_State *L, const char *fname) {
  tplan *p = luaL_testudata(L, 1, PLAN_MT);
  if (!p) mpb_lay_argerror(L, 1, fname, "transpose plan expected, got %s", luaL_typename(L, 1));
  return p;
}

/* Apply direction d to the array at 2 into the one at 3 (or a new one). */
static int apply(lua_State *L, int d, int wait, const char *fname) {
  tplan *p = check_plan(L, fname);
  const mpb_lay *src = d ? &p->to : &p->from, *dst = d ? &p->from : &p->to;
  mpb_lay_check_block(L, src, p->me, NULL, NULL, 2, fname);
  lua_settop(L, 3);
  if (lua_isnil(L, 3)) {
    int64_t dims[MPB_LAYOUT_MAXDIM];
    int nd = mpb_lay_block_shape(dst, p->me, NULL, dims);
    mpb_array_new(L, dst->dtype, nd, dims);
    if (mpb_darray_test(L, 2)) { /* the result keeps the layout: the destination's */
      lua_getiuservalue(L, 1, d ? 2 : 3);
      lua_getiuservalue(L, 1, 1);
      mpb_darray_attach(L, -3, -2, NULL, lua_gettop(L));
      lua_pop(L, 2);
    }
    lua_replace(L, 3);
  } else {
    mpb_lay_check_block(L, dst, p->me, NULL, NULL, 3, fname); /* it may share a's memory */
  }
  lua_getiuservalue(L, 1, 1);
  mpb_xchg_apply(L, 4, 1, &p->dir[d].ph, 1, 2, 3, MPB_COLL_TRANSPOSE, fname, wait);
  if (!wait) return 1;
  lua_pushvalue(L, 3);
  return 1;
}

void mpb_transpose_run(lua_State *L, int pidx, int dir, int sidx, int didx, int wait,
                       const char *fname) {
  pidx = lua_absindex(L, pidx), sidx = lua_absindex(L, sidx), didx = lua_absindex(L, didx);
  tplan *p = lua_touserdata(L, pidx);
  lua_getiuservalue(L, pidx, 1);
  int top = lua_gettop(L);
  mpb_xchg_apply(L, top, pidx, &p->dir[dir].ph, 1, sidx, didx, MPB_COLL_TRANSPOSE, fname, wait);
  if (wait) lua_settop(L, top - 1); /* the communicator, and a spent request if any */
  else lua_remove(L, top);          /* the request stays */
}

static int forward(lua_State *L) { return apply(L, 0, 1, "Transpose.forward"); }
static int back(lua_State *L) { return apply(L, 1, 1, "Transpose.back"); }
static int iforward(lua_State *L) { return apply(L, 0, 0, "Transpose.iforward"); }
static int iback(lua_State *L) { return apply(L, 1, 0, "Transpose.iback"); }

static void push_spec(lua_State *L, const mpb_lay *y) {
  char buf[512];
  mpb_layout_format(&y->l, mpb_dtype_name(y->dtype), 1, buf, sizeof buf);
  lua_pushstring(L, buf);
}

/* p:info() */
static int info(lua_State *L) {
  tplan *p = check_plan(L, "Transpose.info");
  mpb_xstats s;
  mpb_xchg_stats(&p->dir[0].ph, 1, mpb_dtype_size(p->from.dtype), sizeof(mpb_uhdr), &s);
  mpb_xchg_push_info(L, &s, MPB_TRANSPOSE_METHOD, 3);
  lua_pushinteger(L, (lua_Integer)(sizeof *p + (size_t)p->nbox * sizeof(mpb_xbox)));
  lua_setfield(L, -2, "plan_bytes");
  push_spec(L, &p->from);
  lua_setfield(L, -2, "from");
  push_spec(L, &p->to);
  lua_setfield(L, -2, "to");
  return 1;
}

static int tostr(lua_State *L) {
  tplan *p = check_plan(L, "Transpose.__tostring");
  mpb_xstats s;
  mpb_xchg_stats(&p->dir[0].ph, 1, mpb_dtype_size(p->from.dtype), sizeof(mpb_uhdr), &s);
  char a[512], b[512];
  mpb_layout_format(&p->from.l, mpb_dtype_name(p->from.dtype), 0, a, sizeof a);
  mpb_layout_format(&p->to.l, mpb_dtype_name(p->to.dtype), 0, b, sizeof b);
  lua_pushfstring(L, "mp.Transpose %s -> %s (rank %d: %d peers, sends %I bytes, keeps %I, "
                  "peak extra %I)", a, b, p->me, s.peers, (LUAI_UACINT)s.send_bytes,
                  (LUAI_UACINT)s.self_bytes, (LUAI_UACINT)s.peak_extra);
  return 1;
}

static int index_(lua_State *L) {
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1; /* a method: the usual case */
  check_plan(L, "Transpose.__index");
  const char *k = lua_tostring(L, 2);
  if (k && strcmp(k, "from") == 0) lua_getiuservalue(L, 1, 2);
  else if (k && strcmp(k, "to") == 0) lua_getiuservalue(L, 1, 3);
  return 1;
}

void mpb_open_transpose(lua_State *L) {
  static const luaL_Reg methods[] = {{"forward", forward}, {"back", back},
                                     {"iforward", iforward}, {"iback", iback},
                                     {"info", info}, {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__tostring", tostr}, {NULL, NULL}};
  mpb_class(L, PLAN_MT, methods, index_, meta);
  lua_pushcfunction(L, transpose);
  lua_setfield(L, -2, "transpose");
}
