/* SPDX-License-Identifier: MIT */
/*
** Distributed FFT plans (README "FFTs"): mp.fft(layout, opts) makes, once
** and without communication, the plan of a complex-to-complex or
** real-to-complex transform of the global array along some of its
** dimensions: the chain of layouts (layout_fft.h), the transposes between
** them (mp.transpose plans) and the local transforms of each stage (plans of
** the FFT plug-in, fft_backend.h, made here for the places fft_run.c will
** run them on). FFTW's plan/execute split: planning costs, running does not.
**
**   mp.fft(layout, {kind = "c2c" | "r2c", dims = {...}, half = name,
**                   comm = c, effort = "estimate" | "measure" | "patient"})
**   plan.input, plan.output    the layouts (r2c: real in, complex out)
**   plan.transposes            the mp.Transpose plans, in forward order
**   plan:info()                what the forward transform does on this rank
**   plan:forward(a [, out]), plan:backward(b [, out]) and their nonblocking
**   iforward, ibackward: fft_run.c
*/
#include <stdlib.h>
#include <string.h>

#include "layout/fft_int.h"
#include "p2p/p2p.h"

#define FN "fft"

/* ------------------------------------------------------------ the plug-in */
/* The local transforms' provider: the plug-in's table, loaded on first use. */
static const mpb_fft_backend *backend(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_FFT_BACKEND_KEY);
  const mpb_fft_backend *be = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (be) return be;
  lua_getglobal(L, "require");
  lua_pushliteral(L, "mplua.fftw");
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    const char *why = lua_tostring(L, -1);
    mpb_lay_argerror(L, 0, FN, "no local FFT library: mp.fft needs its FFTW plug-in, the module "
                     "mplua.fftw (Debian packages: install lua-mplua-fftw; a rock or a source "
                     "build: install FFTW 3's headers, libfftw3-dev, and build again), which did "
                     "not load: %s", why ? why : "?");
  }
  lua_pop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_FFT_BACKEND_KEY);
  be = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (!be || be->version != MPB_FFT_BACKEND_VERSION)
    mpb_lay_argerror(L, 0, FN, "the FFT plug-in does not match this mplua (interface %d, "
                     "expected %d)", be ? be->version : -1, MPB_FFT_BACKEND_VERSION);
  return be;
}

/* ------------------------------------------------------------ options */
static int dim_arg(lua_State *L, const mpb_lay *y, int idx, const char *what) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    int k = mpb_layout_find(&y->l, lua_tostring(L, idx));
    if (k < 0) mpb_lay_argerror(L, 2, FN, "%s: no dimension '%s' in the layout", what,
                                lua_tostring(L, idx));
    return k;
  }
  int ok;
  lua_Integer k = lua_tointegerx(L, idx, &ok);
  if (!ok || k < 1 || k > y->l.ndim)
    mpb_lay_argerror(L, 2, FN, "%s: a dimension's name or its index 1..%d expected", what,
                     y->l.ndim);
  return (int)k - 1;
}

static const char *const kinds[] = {"c2c", "r2c", NULL};
static const char *const efforts[] = {"estimate", "measure", "patient", NULL};

static int option(lua_State *L, const char *key, const char *const *names, const char *dflt,
                  const char *allowed) {
  lua_getfield(L, 2, key);
  const char *s = lua_isnil(L, -1) ? dflt : lua_tostring(L, -1);
  for (int i = 0; s && names[i]; i++)
    if (strcmp(s, names[i]) == 0) return lua_pop(L, 1), i;
  return mpb_lay_argerror(L, 2, FN, "%s must be %s, got %s", key, allowed,
                          s ? s : luaL_typename(L, -1));
}

/* ------------------------------------------------------------ the program */
static void shape_of(const mpb_layout *l, int me, int64_t *d) { mpb_layout_local_shape(l, me, d); }

static void strides_of(int nd, const int64_t *d, int64_t *st) {
  int64_t s = 1;
  for (int k = 0; k < nd; k++) st[k] = s, s *= d[k];
}

static size_t block_bytes(const mpb_layout *l, int me, int dtype) {
  int64_t d[MPB_LAYOUT_MAXDIM], n = mpb_layout_local_shape(l, me, d);
  return (size_t)n * mpb_dtype_size(dtype);
}

/* The local transform of stage s in direction dir into op (its places set). */
static void local_plan(lua_State *L, fft_plan *p, fft_op *op, int s, int dir) {
  const mpb_fft_stage *st = &p->ch.st[s];
  int cplx = p->single ? MPB_C64 : MPB_C128, real = p->single ? MPB_F32 : MPB_F64;
  int halved = st->half >= 0, nd = st->in.ndim;
  const mpb_layout *src = dir ? &st->out : &st->in, *dst = dir ? &st->in : &st->out;
  op->what = FFT_OP_LOCAL;
  op->stage = s;
  op->kind = !halved ? MPB_FFT_C2C : dir ? MPB_FFT_C2R : MPB_FFT_R2C;
  op->sdtype = halved && !dir ? real : cplx;
  op->ddtype = halved && dir ? real : cplx;
  op->nd = nd;
  shape_of(src, p->me, op->sdims);
  shape_of(dst, p->me, op->ddims);
  int64_t is[MPB_LAYOUT_MAXDIM], os[MPB_LAYOUT_MAXDIM], n = 1;
  strides_of(nd, op->sdims, is);
  strides_of(nd, op->ddims, os);
  mpb_fft_dim dims[MPB_LAYOUT_MAXDIM], how[MPB_LAYOUT_MAXDIM];
  int nt = 0, nh = 0, tr[MPB_LAYOUT_MAXDIM] = {0};
  for (int i = 0; i < st->ndims; i++) {
    int k = st->dims[i];
    tr[k] = 1;
    dims[nt++] = (mpb_fft_dim){st->in.extent[k], is[k], os[k]};
  }
  for (int k = 0; k < nd; k++) {
    n *= op->sdims[k];
    if (!tr[k]) how[nh++] = (mpb_fft_dim){op->sdims[k], is[k], os[k]};
  }
  if (n == 0) return; /* an empty block: nothing to transform here */
  /* plan on the buffers that stand for the caller's arrays (aligned, free) */
  void *in = op->src <= FFT_B1 ? p->buf[op->src] : p->buf[op->dst == FFT_B0 ? FFT_B1 : FFT_B0];
  void *out = op->dst <= FFT_B1 ? p->buf[op->dst] : p->buf[in == p->buf[0] ? 1 : 0];
  char err[200];
  op->plan = p->be->plan(op->kind, p->single, dir ? 1 : -1, nt, dims, nh, how, in, out, p->effort,
                         err, sizeof err);
  if (!op->plan) mpb_lay_argerror(L, 0, FN, "%s", err);
}

static int other(int place) { return place == FFT_B0 ? FFT_B1 : FFT_B0; }

static fft_op *add_transpose(fft_plan *p, int dir, int t, int back, int src, int dst,
                             const mpb_layout *from, int fdt, const mpb_layout *to, int tdt) {
  fft_op *op = &p->op[dir][p->nop[dir]++];
  op->what = FFT_OP_TRANSPOSE;
  op->t = t, op->back = back, op->src = src, op->dst = dst;
  op->sdtype = fdt, op->ddtype = tdt, op->nd = from->ndim;
  shape_of(from, p->me, op->sdims);
  shape_of(to, p->me, op->ddims);
  return op;
}

/* Both directions' operations and places, and their local plans. */
static void program(lua_State *L, fft_plan *p, const mpb_layout *input, int in_dtype) {
  const mpb_fft_chain *c = &p->ch;
  int S = c->nstage, cplx = p->single ? MPB_C64 : MPB_C128;
  int at = FFT_IN;
  if (c->pre) {
    add_transpose(p, 0, 1, 0, FFT_IN, FFT_B0, input, in_dtype, &c->st[0].in, in_dtype);
    at = FFT_B0;
  }
  for (int s = 0; s < S; s++) {
    fft_op *op = &p->op[0][p->nop[0]++];
    op->src = at;
    op->dst = s == S - 1 ? FFT_OUT : at == FFT_IN ? FFT_B0
              : c->st[s].half >= 0 ? other(at) : at;
    local_plan(L, p, op, s, 0);
    at = op->dst;
    if (s < S - 1) {
      add_transpose(p, 0, c->pre + s + 1, 0, at, other(at), &c->st[s].out, cplx,
                    &c->st[s + 1].in, cplx);
      at = other(at);
    }
  }
  at = FFT_IN;
  for (int s = S - 1; s >= 0; s--) {
    fft_op *op = &p->op[1][p->nop[1]++];
    op->src = at;
    op->dst = s == 0 && !c->pre ? FFT_OUT : at == FFT_IN ? FFT_B0
              : c->st[s].half >= 0 ? other(at) : at;
    local_plan(L, p, op, s, 1);
    at = op->dst;
    int rdt = s == 0 ? in_dtype : cplx; /* the stage's input layout's dtype */
    if (s > 0) {
      add_transpose(p, 1, c->pre + s, 1, at, other(at), &c->st[s].in, cplx, &c->st[s - 1].out,
                    cplx);
      at = other(at);
    } else if (c->pre) {
      add_transpose(p, 1, 1, 1, at, FFT_OUT, &c->st[0].in, rdt, input, rdt);
    }
  }
}

/* ------------------------------------------------------------ mp.fft */
static int gc(lua_State *L) {
  fft_plan *p = luaL_checkudata(L, 1, MPB_FFT_MT);
  for (int d = 0; d < 2; d++)
    for (int i = 0; i < p->nop[d]; i++)
      if (p->op[d][i].plan) p->be->destroy(p->op[d][i].plan), p->op[d][i].plan = NULL;
  for (int b = 0; b < 2; b++) free(p->buf[b]), p->buf[b] = NULL;
  return 0;
}

static void push_layout(lua_State *L, const mpb_layout *l, int dtype) {
  mpb_lay y;
  memset(&y, 0, sizeof y);
  y.l = *l;
  y.dtype = dtype;
  mpb_lay_push(L, &y);
}

/* mp.fft(layout [, opts]) */
static int fft(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_lay *y = mpb_lay_check(L, 1, FN);
  lua_settop(L, 2);
  if (lua_isnil(L, 2)) lua_newtable(L), lua_replace(L, 2);
  if (!lua_istable(L, 2))
    mpb_lay_argerror(L, 2, FN, "options table expected, got %s", luaL_typename(L, 2));
  int r2c = option(L, "kind", kinds, "c2c", "\"c2c\" or \"r2c\"");
  int effort = option(L, "effort", efforts, "estimate", "\"estimate\", \"measure\" or \"patient\"");
  int cplx_in = MPB_DTYPE_COMPLEX(y->dtype), real_in = y->dtype == MPB_F64 || y->dtype == MPB_F32;
  if (!r2c && !cplx_in)
    mpb_lay_argerror(L, 1, FN, "a c2c transform takes a complex layout (c128 or c64), got %s",
                     mpb_dtype_name(y->dtype));
  if (r2c && !real_in)
    mpb_lay_argerror(L, 1, FN, "an r2c transform takes a real layout (f64 or f32), got %s",
                     mpb_dtype_name(y->dtype));
  int dims[MPB_LAYOUT_MAXDIM], ndims = 0, half = -1, bad;
  if (lua_getfield(L, 2, "dims") == LUA_TNIL) {
    for (int k = 0; k < y->l.ndim; k++) dims[ndims++] = k;
  } else {
    if (!lua_istable(L, -1)) mpb_lay_argerror(L, 2, FN, "dims must be a list of dimensions");
    lua_Integer n = luaL_len(L, -1);
    if (n < 1 || n > y->l.ndim)
      mpb_lay_argerror(L, 2, FN, "dims: 1 to %d dimensions expected, got %I", y->l.ndim,
                       (LUAI_UACINT)n);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_geti(L, -1, i);
      dims[ndims++] = dim_arg(L, y, lua_gettop(L), "dims");
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  if (r2c) {
    half = dims[ndims - 1];
    if (lua_getfield(L, 2, "half") != LUA_TNIL) half = dim_arg(L, y, lua_gettop(L), "half");
    lua_pop(L, 1);
  }
  if (lua_getfield(L, 2, "comm") == LUA_TNIL) lua_pop(L, 1), mpb_comm_pushworld(L);
  int cidx = lua_gettop(L); /* 3 */
  mpb_comm *c = mpb_comm_check(L, st, cidx, FN);
  if (c->size != y->l.nranks)
    mpb_lay_argerror(L, 2, FN, "the communicator has %d ranks, the layout %d", c->size,
                     y->l.nranks);
  const mpb_fft_backend *be = backend(L);
  fft_plan *p = lua_newuserdatauv(L, sizeof *p, 5); /* 4 */
  memset(p, 0, sizeof *p);
  luaL_setmetatable(L, MPB_FFT_MT);
  p->be = be;
  p->r2c = r2c;
  p->single = y->dtype == MPB_F32 || y->dtype == MPB_C64;
  p->effort = effort;
  p->me = c->rank;
  p->nranks = c->size;
  p->ndims = ndims;
  memcpy(p->dims, dims, sizeof dims);
  int rc = mpb_fft_chain_make(&y->l, ndims, dims, half, &p->ch, &bad);
  if (rc < 0 && bad >= 0)
    mpb_lay_argerror(L, 2, FN, "'%s': %s", y->l.name[bad], mpb_layout_strerror(rc));
  if (rc < 0) mpb_lay_argerror(L, 2, FN, "%s", mpb_layout_strerror(rc));
  int cplx = p->single ? MPB_C64 : MPB_C128, S = p->ch.nstage;
  /* the layouts: input, output, and each stage's (in, out) */
  lua_pushvalue(L, cidx);
  lua_setiuservalue(L, 4, 1);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, 4, 2);
  push_layout(L, &p->ch.st[S - 1].out, cplx);
  lua_setiuservalue(L, 4, 3);
  lua_createtable(L, S, 0); /* 5: stages */
  size_t most = block_bytes(&y->l, p->me, y->dtype);
  for (int s = 0; s < S; s++) {
    const mpb_fft_stage *g = &p->ch.st[s];
    int idt = g->half >= 0 ? y->dtype : cplx;
    lua_createtable(L, 2, 0);
    push_layout(L, &g->in, idt);
    lua_rawseti(L, -2, 1);
    push_layout(L, &g->out, cplx);
    lua_rawseti(L, -2, 2);
    lua_rawseti(L, 5, s + 1);
    size_t a = block_bytes(&g->in, p->me, idt), b = block_bytes(&g->out, p->me, cplx);
    if (a > most) most = a;
    if (b > most) most = b;
  }
  /* the transposes: the input to stage 0 (pre), then stage to stage */
  p->ntrans = p->ch.pre + S - 1;
  lua_createtable(L, p->ntrans, 0); /* 6 */
  int t = 0;
  if (p->ch.pre) {
    lua_rawgeti(L, 5, 1);
    lua_rawgeti(L, -1, 1);
    mpb_transpose_push(L, 1, -1, cidx, FN);
    lua_rawseti(L, 6, ++t);
    lua_pop(L, 2);
  }
  for (int s = 0; s + 1 < S; s++) {
    lua_rawgeti(L, 5, s + 1);
    lua_rawgeti(L, -1, 2);
    lua_rawgeti(L, 5, s + 2);
    lua_rawgeti(L, -1, 1);
    mpb_transpose_push(L, -3, -1, cidx, FN);
    lua_rawseti(L, 6, ++t);
    lua_pop(L, 4);
  }
  lua_setiuservalue(L, 4, 4);
  lua_setiuservalue(L, 4, 5);
  /* the buffers, then the local plans made on them */
  p->bufbytes = most ? most : 64;
  for (int b = 0; b < 2; b++)
    if (posix_memalign(&p->buf[b], 64, p->bufbytes) != 0) {
      p->buf[b] = NULL;
      mpb_lay_argerror(L, 0, FN, "out of memory (2 buffers of %I bytes)", (LUAI_UACINT)p->bufbytes);
    }
  program(L, p, &y->l, y->dtype);
  lua_settop(L, 4);
  return 1;
}

/* ------------------------------------------------------------ reporting */
static fft_plan *check_plan(lua_State *L, const char *fname) {
  fft_plan *p = luaL_testudata(L, 1, MPB_FFT_MT);
  if (!p) mpb_lay_argerror(L, 1, fname, "FFT plan expected, got %s", luaL_typename(L, 1));
  return p;
}

static void push_names(lua_State *L, const mpb_layout *l, int n, const int *dims) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, l->name[dims[i]]);
    lua_rawseti(L, -2, i + 1);
  }
}

static void push_spec(lua_State *L, int uv, int k) {
  lua_getiuservalue(L, 1, uv);
  if (k) lua_rawgeti(L, -1, k), lua_remove(L, -2);
  lua_getfield(L, -1, "spec");
  lua_remove(L, -2);
}

/* p:info(): kind, dims, half, library, stages {{transform, layout}},
** transposes (their :info()), and the sums over them: messages, send_bytes,
** recv_bytes, self_bytes; peers and peak_extra: the most of one transpose. */
static int info(lua_State *L) {
  fft_plan *p = check_plan(L, "FFT.info");
  const mpb_layout *l = &p->ch.st[0].in;
  lua_settop(L, 1);
  lua_createtable(L, 0, 16);
  lua_pushstring(L, kinds[p->r2c]);
  lua_setfield(L, 2, "kind");
  push_names(L, l, p->ndims, p->dims);
  lua_setfield(L, 2, "dims");
  if (p->r2c) {
    for (int s = 0; s < p->ch.nstage; s++)
      if (p->ch.st[s].half >= 0) lua_pushstring(L, l->name[p->ch.st[s].half]);
    lua_setfield(L, 2, "half");
  }
  lua_pushstring(L, p->be->name);
  lua_setfield(L, 2, "library");
  lua_pushstring(L, efforts[p->effort]);
  lua_setfield(L, 2, "effort");
  lua_createtable(L, p->ch.nstage, 0);
  for (int s = 0; s < p->ch.nstage; s++) {
    lua_createtable(L, 0, 2);
    push_names(L, l, p->ch.st[s].ndims, p->ch.st[s].dims);
    lua_setfield(L, -2, "transform");
    lua_getiuservalue(L, 1, 5);
    lua_rawgeti(L, -1, s + 1);
    lua_rawgeti(L, -1, 1);
    lua_getfield(L, -1, "spec");
    lua_setfield(L, -5, "layout");
    lua_pop(L, 3);
    lua_rawseti(L, -2, s + 1);
  }
  lua_setfield(L, 2, "stages");
  int64_t sum[4] = {0, 0, 0, 0}, most[2] = {0, 0};
  static const char *const sums[4] = {"messages", "send_bytes", "recv_bytes", "self_bytes"};
  static const char *const maxes[2] = {"peers", "peak_extra"};
  lua_createtable(L, p->ntrans, 0);
  lua_getiuservalue(L, 1, 4);
  for (int t = 1; t <= p->ntrans; t++) {
    lua_rawgeti(L, -1, t);
    lua_getfield(L, -1, "info");
    lua_insert(L, -2);
    lua_call(L, 1, 1);
    for (int k = 0; k < 4; k++) {
      lua_getfield(L, -1, sums[k]);
      sum[k] += lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
    for (int k = 0; k < 2; k++) {
      lua_getfield(L, -1, maxes[k]);
      if (lua_tointeger(L, -1) > most[k]) most[k] = lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
    lua_rawseti(L, -3, t);
  }
  lua_pop(L, 1);
  lua_setfield(L, 2, "transposes");
  for (int k = 0; k < 4; k++) lua_pushinteger(L, sum[k]), lua_setfield(L, 2, sums[k]);
  for (int k = 0; k < 2; k++) lua_pushinteger(L, most[k]), lua_setfield(L, 2, maxes[k]);
  push_spec(L, 2, 0);
  lua_setfield(L, 2, "input");
  push_spec(L, 3, 0);
  lua_setfield(L, 2, "output");
  lua_pushinteger(L, (lua_Integer)(2 * p->bufbytes));
  lua_setfield(L, 2, "work_bytes");
  return 1;
}

static int tostr(lua_State *L) {
  fft_plan *p = check_plan(L, "FFT.__tostring");
  lua_settop(L, 1);
  info(L);
  lua_getfield(L, 2, "input");
  lua_getfield(L, 2, "output");
  lua_getfield(L, 2, "messages");
  lua_getfield(L, 2, "send_bytes");
  lua_pushfstring(L, "mp.FFT %s %s -> %s (%d stage%s, %d transpose%s; rank %d sends %I messages, "
                  "%I bytes)", kinds[p->r2c], lua_tostring(L, 3), lua_tostring(L, 4),
                  p->ch.nstage, p->ch.nstage == 1 ? "" : "s", p->ntrans,
                  p->ntrans == 1 ? "" : "s", p->me, (LUAI_UACINT)lua_tointeger(L, 5),
                  (LUAI_UACINT)lua_tointeger(L, 6));
  return 1;
}

static int index_(lua_State *L) {
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1; /* a method */
  fft_plan *p = check_plan(L, "FFT.__index");
  const char *k = lua_tostring(L, 2);
  if (!k) return 1;
  if (strcmp(k, "input") == 0) lua_getiuservalue(L, 1, 2);
  else if (strcmp(k, "output") == 0) lua_getiuservalue(L, 1, 3);
  else if (strcmp(k, "transposes") == 0) {
    lua_getiuservalue(L, 1, 4);
    lua_createtable(L, p->ntrans, 0); /* a copy: the plan's own list stays as it is */
    for (int t = 1; t <= p->ntrans; t++) lua_rawgeti(L, -2, t), lua_rawseti(L, -2, t);
  } else if (strcmp(k, "kind") == 0) lua_pushstring(L, kinds[p->r2c]);
  return 1;
}

void mpb_open_fft(lua_State *L) {
  static const luaL_Reg methods[] = {{"info", info}, {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__tostring", tostr}, {"__gc", gc}, {NULL, NULL}};
  mpb_class_begin(L, MPB_FFT_MT, methods);
  mpb_fft_run_methods(L, lua_gettop(L));
  mpb_class_end(L, index_, meta);
  lua_pushcfunction(L, fft);
  lua_setfield(L, -2, "fft");
}
