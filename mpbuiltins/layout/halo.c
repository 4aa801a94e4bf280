/* SPDX-License-Identifier: MIT */
/*
** Halo exchanges (README "Halos"): mp.halo(layout, width [, topo | opts])
** makes, once and without communication, the plan that fills the halo of
** this rank's block (an array of the layout's local shape plus width on each
** side of each dimension with a width: l:alloc(width)) from its grid
** neighbours' interiors. Periodic dimensions wrap (to this rank itself when
** the grid has one rank along them); at the edge of a non-periodic one the
** halo is left alone (the boundary condition is the user's).
**
** One phase per dimension with a width, in order, each box spanning the
** whole array (halos included) along the other dimensions, so the corners
** are right after the last phase (what 9-point stencils need). Data moves
** through xchg.c: pack, tagged point-to-point messages, unpack on arrival.
**
**   h:exchange(a)    fills a's halo in place; returns a
**   h:iexchange(a)   the same as an mp.Exchange request
**   h:info()         {method, peers, messages, send_bytes, recv_bytes,
**                    self_bytes, peak_extra}
**   h.layout, h.width, h.periodic
** width: a number (every split dimension) or a list per dimension.
** periodic: from a topology t (mp.cart, whose grid must be the layout's) or
** opts.periodic (true, or a list of booleans per dimension); opts.comm.
*/
#include <string.h>

#include "array/array.h"
#include "layout/laylib.h"
#include "layout/xchg.h"
#include "p2p/p2p.h"

#define HALO_MT "mp.Halo"

typedef struct {
  mpb_lay lay;
  int me, periodic[MPB_LAYOUT_MAXDIM];
  int64_t w[MPB_LAYOUT_MAXDIM];
  int64_t shape[MPB_LAYOUT_MAXDIM]; /* this rank's block with its halo (checked per call) */
  int nphase;
  mpb_xphase ph[MPB_LAYOUT_MAXDIM];
  mpb_xbox send[MPB_LAYOUT_MAXDIM][2], recv[MPB_LAYOUT_MAXDIM][2], self[MPB_LAYOUT_MAXDIM][4];
} hplan;

/* The box of the whole array but [off, off + len) along dimension k. */
static void slab(const int64_t *shape, int nd, int k, int64_t off, int64_t len, int peer,
                 int tag, mpb_xbox *b) {
  memset(b, 0, sizeof *b);
  b->peer = peer;
  b->tag = tag;
  b->nd = nd;
  b->n = 1;
  for (int j = 0; j < nd; j++) {
    b->dim[j] = j;
    b->off[j] = j == k ? off : 0;
    b->len[j] = j == k ? len : shape[j];
    b->n *= b->len[j];
  }
}

/* The neighbour of rank me one step (dir -1 or +1) along dimension k, or -1. */
static int neighbour(const hplan *h, int k, int dir) {
  const mpb_layout *l = &h->lay.l;
  int a = l->axis[k];
  int P = a >= 0 ? l->grid[a] : 1;
  int c[MPB_LAYOUT_MAXDIM];
  mpb_layout_coords(l, h->me, c);
  int ck = a >= 0 ? c[a] : 0;
  int v = ck + dir;
  if (v < 0 || v >= P) {
    if (!h->periodic[k]) return -1;
    v = (v + P) % P;
  }
  if (a < 0) return h->me;
  c[a] = v;
  return mpb_layout_rank(l, c);
}

static void plan(lua_State *L, hplan *h) {
  const mpb_layout *l = &h->lay.l;
  int nd = l->ndim;
  int64_t shape[MPB_LAYOUT_MAXDIM];
  mpb_lay_block_shape(&h->lay, h->me, h->w, shape);
  for (int k = 0; k < nd; k++) {
    int64_t w = h->w[k];
    if (w == 0) continue;
    /* every block along k must be at least w long, or a halo would reach past a neighbour */
    int a = l->axis[k];
    int P = a >= 0 ? l->grid[a] : 1;
    int64_t lo, len, minlen = INT64_MAX;
    for (int i = 0; i < P; i++) {
      mpb_block(l->extent[k], P, i, l->balanced, &lo, &len);
      if (len < minlen) minlen = len;
    }
    if (w > minlen)
      mpb_lay_argerror(L, 2, "halo", "width %I along '%s' exceeds its smallest block (%I)",
                       (LUAI_UACINT)w, l->name[k], (LUAI_UACINT)minlen);
    int64_t n = shape[k] - 2 * w;
    mpb_xphase *p = &h->ph[h->nphase];
    mpb_xbox *sd = h->send[h->nphase], *rv = h->recv[h->nphase], *sf = h->self[h->nphase];
    int ns = 0, nr = 0, nf = 0;
    int down = neighbour(h, k, -1), up = neighbour(h, k, 1);
    /* tag 2k: my first w interior cells, to the lower neighbour's upper halo;
    ** tag 2k+1: my last w, to the upper neighbour's lower halo */
    if (down == h->me) { /* one rank along k, periodic: wrap in place */
      slab(shape, nd, k, w, w, h->me, 0, &sf[2 * nf]);
      slab(shape, nd, k, n + w, w, h->me, 0, &sf[2 * nf + 1]);
      nf++;
      slab(shape, nd, k, n, w, h->me, 0, &sf[2 * nf]);
      slab(shape, nd, k, 0, w, h->me, 0, &sf[2 * nf + 1]);
      nf++;
    } else {
      if (down >= 0) {
        slab(shape, nd, k, w, w, down, 2 * k, &sd[ns++]);
        slab(shape, nd, k, 0, w, down, 2 * k + 1, &rv[nr++]);
      }
      if (up >= 0) {
        slab(shape, nd, k, n, w, up, 2 * k + 1, &sd[ns++]);
        slab(shape, nd, k, n + w, w, up, 2 * k, &rv[nr++]);
      }
    }
    mpb_xchg_sort(sd, ns); /* one message per neighbour */
    mpb_xchg_sort(rv, nr);
    p->nsend = ns;
    p->nrecv = nr;
    p->nself = nf;
    p->send = sd;
    p->recv = rv;
    p->self = sf;
    h->nphase++;
  }
}

/* mp.halo(layout, width [, topo | opts]) */
static int halo(lua_State *L) {
  const char *fn = "halo";
  mpb_state *st = mpb_get(L);
  mpb_lay *y = mpb_lay_check(L, 1, fn);
  lua_settop(L, 3);
  hplan h;
  memset(&h, 0, sizeof h);
  h.lay = *y;
  int nd = y->l.ndim;
  if (lua_isnil(L, 2)) mpb_lay_argerror(L, 2, fn, "halo width expected");
  mpb_lay_halo_arg(L, y, 2, fn, h.w);
  mpb_lay_grid t;
  int cidx = 0;
  if (mpb_lay_grid_of(L, 3, &t)) {
    int same = t.ndim == y->l.naxes;
    for (int a = 0; same && a < t.ndim; a++) same = t.dims[a] == y->l.grid[a];
    if (!same) mpb_lay_argerror(L, 3, fn, "the topology's grid is not the layout's");
    for (int k = 0; k < nd; k++) h.periodic[k] = y->l.axis[k] >= 0 && t.periodic[y->l.axis[k]];
  } else if (lua_istable(L, 3)) {
    int ty = lua_getfield(L, 3, "periodic");
    if (ty == LUA_TBOOLEAN) {
      for (int k = 0; k < nd; k++) h.periodic[k] = lua_toboolean(L, -1);
    } else if (ty == LUA_TTABLE) {
      if (luaL_len(L, -1) != nd)
        mpb_lay_argerror(L, 3, fn, "periodic: one boolean per dimension (%d) expected", nd);
      for (int k = 0; k < nd; k++) {
        lua_geti(L, -1, k + 1);
        h.periodic[k] = lua_toboolean(L, -1);
        lua_pop(L, 1);
      }
    } else if (ty != LUA_TNIL) {
      mpb_lay_argerror(L, 3, fn, "periodic: boolean or list expected, got %s",
                       luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 3, "comm") != LUA_TNIL) cidx = lua_gettop(L);
    else lua_pop(L, 1);
  } else if (!lua_isnil(L, 3)) {
    mpb_lay_argerror(L, 3, fn, "topology or options table expected, got %s",
                     luaL_typename(L, 3));
  }
  if (!cidx) {
    mpb_comm_pushworld(L);
    cidx = lua_gettop(L);
  }
  mpb_comm *c = mpb_comm_check(L, st, cidx, fn);
  if (c->size != y->l.nranks)
    mpb_lay_argerror(L, 0, fn, "the communicator has %d ranks, the layout %d", c->size,
                     y->l.nranks);
  h.me = c->rank;
  mpb_lay_block_shape(&h.lay, h.me, h.w, h.shape);
  plan(L, &h);
  hplan *u = lua_newuserdatauv(L, sizeof *u, 2);
  *u = h;
  for (int i = 0; i < h.nphase; i++) { /* point into the userdata, not the stack copy */
    u->ph[i].send = u->send[i];
    u->ph[i].recv = u->recv[i];
    u->ph[i].self = u->self[i];
  }
  luaL_setmetatable(L, HALO_MT);
  lua_pushvalue(L, cidx);
  lua_setiuservalue(L, -2, 1);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 2);
  return 1;
}

static hplan *check_plan(lua_State *L, const char *fname) {
  hplan *h = luaL_testudata(L, 1, HALO_MT);
  if (!h) mpb_lay_argerror(L, 1, fname, "halo plan expected, got %s", luaL_typename(L, 1));
  return h;
}

static int apply(lua_State *L, int wait, const char *fname) {
  hplan *h = check_plan(L, fname);
  mpb_lay_check_block(L, &h->lay, h->me, h->w, h->shape, 2, fname);
  lua_settop(L, 2);
  lua_getiuservalue(L, 1, 1);
  mpb_xchg_apply(L, 3, 1, h->ph, h->nphase, 2, 2, MPB_COLL_HALO, fname, wait);
  if (wait) lua_pushvalue(L, 2);
  return 1;
}

static int exchange(lua_State *L) { return apply(L, 1, "Halo.exchange"); }
static int iexchange(lua_State *L) { return apply(L, 0, "Halo.iexchange"); }

static int info(lua_State *L) {
  hplan *h = check_plan(L, "Halo.info");
  mpb_xstats s;
  mpb_xchg_stats(h->ph, h->nphase, mpb_dtype_size(h->lay.dtype), sizeof(mpb_uhdr), &s);
  mpb_xchg_push_info(L, &s, MPB_HALO_METHOD, 1);
  lua_pushinteger(L, h->nphase);
  lua_setfield(L, -2, "phases");
  return 1;
}

static int index_(lua_State *L) {
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1; /* a method: the usual case */
  hplan *h = check_plan(L, "Halo.__index");
  const char *k = lua_tostring(L, 2);
  int nd = h->lay.l.ndim;
  if (k && strcmp(k, "layout") == 0) {
    lua_getiuservalue(L, 1, 2);
  } else if (k && (strcmp(k, "width") == 0 || strcmp(k, "periodic") == 0)) {
    lua_createtable(L, nd, 0);
    for (int j = 0; j < nd; j++) {
      if (k[0] == 'w') lua_pushinteger(L, h->w[j]);
      else lua_pushboolean(L, h->periodic[j]);
      lua_rawseti(L, -2, j + 1);
    }
  }
  return 1;
}

static int tostr(lua_State *L) {
  hplan *h = check_plan(L, "Halo.__tostring");
  char spec[512];
  mpb_layout_format(&h->lay.l, mpb_dtype_name(h->lay.dtype), 1, spec, sizeof spec);
  lua_pushfstring(L, "mp.Halo of %s (rank %d, %d phases)", spec, h->me, h->nphase);
  return 1;
}

void mpb_open_halo(lua_State *L) {
  static const luaL_Reg methods[] = {{"exchange", exchange}, {"iexchange", iexchange},
                                     {"info", info}, {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__tostring", tostr}, {NULL, NULL}};
  mpb_class(L, HALO_MT, methods, index_, meta);
  lua_pushcfunction(L, halo);
  lua_setfield(L, -2, "halo");
}
