/* SPDX-License-Identifier: MIT */
/*
** Running an FFT plan (fft_int.h): its operations in order, each local
** transform on the places chosen when the plan was made, each transpose an
** exchange of the plan's mp.Transpose (collective over the plan's
** communicator). Unnormalised, as FFTW: backward(forward(a)) is a times the
** product of the transformed extents.
**
**   p:forward(a [, out])     a: this rank's block of p.input; out: of p.output
**   p:backward(b [, out])    the inverse direction (b of p.output, out of p.input)
**   p:iforward(a [, out]), p:ibackward(b [, out])   nonblocking: an
**                            "mp.FFTRequest" whose transposes run as
**                            nonblocking exchanges; req:test() does the local
**                            transforms whose data has come and starts the
**                            next exchange (false, or true and out);
**                            req:wait() runs the rest and returns out
** A request belongs to its task, as an mp.Exchange does: a fault anywhere
** stops it through the abort protocol; using it later is an error. The input
** is only read (a caller's array is never a work buffer) and may be written
** once a nonblocking call has returned when the plan starts with a transpose;
** otherwise keep it until the request is complete.
*/
#include <string.h>

#include "array/array_iter.h"
#include "layout/fft_int.h"
#include "p2p/p2p.h"

/* ------------------------------------------------------------ operations */
/* The array of a place: the caller's input or output (at iidx, oidx), or a
** view of a work buffer with the block's shape (pushed). */
static int place_array(lua_State *L, int pidx, const fft_plan *p, int place, int dtype, int nd,
                       const int64_t *dims, int iidx, int oidx) {
  if (place == FFT_IN) return iidx;
  if (place == FFT_OUT) return oidx;
  mpb_array_view(L, pidx, p->buf[place], dtype, nd, dims);
  return lua_gettop(L);
}

/* Whether the local plans can run on a caller's array as it is (else it
** is staged through the free buffer). */
static int direct(const fft_plan *p, const mpb_array *a) {
  return a->contig && p->be->alignment_of(a->data, p->single) == 0;
}

static void run_local(lua_State *L, fft_plan *p, const fft_op *op, int iidx, int oidx) {
  if (!op->plan) return;
  void *in, *out;
  if (op->src <= FFT_B1) {
    in = p->buf[op->src];
  } else {
    mpb_array *a = lua_touserdata(L, iidx);
    /* complex to real destroys its input: never the caller's */
    if (!direct(p, a) || op->kind == MPB_FFT_C2R) {
      in = p->buf[op->dst == FFT_B0 ? FFT_B1 : FFT_B0];
      mpb_array_pack(a, in);
    } else {
      in = a->data;
    }
  }
  mpb_array *o = NULL;
  if (op->dst <= FFT_B1) {
    out = p->buf[op->dst];
  } else {
    o = lua_touserdata(L, oidx);
    if (direct(p, o)) out = o->data, o = NULL;
    else out = p->buf[in == p->buf[0] ? 1 : 0];
  }
  p->be->execute(op->plan, in, out);
  if (o) mpb_array_unpack(o, out);
}

/* Start (wait 0: its request is pushed) or run a transpose of the plan. */
static void run_transpose(lua_State *L, int pidx, const fft_plan *p, const fft_op *op, int iidx,
                          int oidx, int wait, const char *fname) {
  int top = lua_gettop(L);
  int s = place_array(L, pidx, p, op->src, op->sdtype, op->nd, op->sdims, iidx, oidx);
  int d = place_array(L, pidx, p, op->dst, op->ddtype, op->nd, op->ddims, iidx, oidx);
  lua_getiuservalue(L, pidx, 4);
  lua_rawgeti(L, -1, op->t);
  mpb_transpose_run(L, lua_gettop(L), op->back, s, d, wait, fname);
  if (wait) {
    lua_settop(L, top);
  } else {
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
  }
}

/* ------------------------------------------------------------ arguments */
static fft_plan *check_plan(lua_State *L, const char *fname) {
  fft_plan *p = luaL_testudata(L, 1, MPB_FFT_MT);
  if (!p) mpb_lay_argerror(L, 1, fname, "FFT plan expected, got %s", luaL_typename(L, 1));
  return p;
}

/* Check the input at 2 and the output at 3 (a new array if none) of
** direction dir. */
static void arrays(lua_State *L, fft_plan *p, int dir, const char *fname) {
  lua_settop(L, 3);
  lua_getiuservalue(L, 1, dir ? 3 : 2);
  lua_getiuservalue(L, 1, dir ? 2 : 3);
  const mpb_lay *from = lua_touserdata(L, 4), *to = lua_touserdata(L, 5);
  mpb_array *a = mpb_lay_check_block(L, from, p->me, NULL, NULL, 2, fname);
  if (lua_isnil(L, 3)) {
    int64_t dims[MPB_LAYOUT_MAXDIM];
    int nd = mpb_lay_block_shape(to, p->me, NULL, dims);
    mpb_array_new(L, to->dtype, nd, dims);
    if (mpb_darray_test(L, 2)) { /* the result keeps the layout: the output's */
      lua_getiuservalue(L, 1, 1);
      mpb_darray_attach(L, -2, 5, NULL, lua_gettop(L));
      lua_pop(L, 1);
    }
    lua_replace(L, 3);
  } else {
    mpb_array *o = mpb_lay_check_block(L, to, p->me, NULL, NULL, 3, fname);
    if (mpb_array_overlap(a, o) != MPB_DISJOINT)
      mpb_lay_argerror(L, 3, fname, "the output shares memory with the input");
  }
  lua_settop(L, 3);
}

/* ------------------------------------------------------------ blocking */
static int apply(lua_State *L, int dir, const char *fname) {
  fft_plan *p = check_plan(L, fname);
  arrays(L, p, dir, fname);
  for (int i = 0; i < p->nop[dir]; i++) {
    const fft_op *op = &p->op[dir][i];
    if (op->what == FFT_OP_LOCAL) run_local(L, p, op, 2, 3);
    else run_transpose(L, 1, p, op, 2, 3, 1, fname);
  }
  lua_pushvalue(L, 3);
  return 1;
}

static int forward(lua_State *L) { return apply(L, 0, "FFT.forward"); }
static int backward(lua_State *L) { return apply(L, 1, "FFT.backward"); }

/* ------------------------------------------------------------ requests */
enum { R_PENDING, R_READY, R_USED };
static const char *const state_names[] = {"pending", "complete", "used"};

/* user values: 1 plan, 2 input, 3 output, 4 the exchange in flight (or nil) */
typedef struct fft_req {
  int dir, next, state;
  int64_t task, naborts;
} fft_req;

/* The request's arrays on the stack: plan, input, output at top+1.. */
static int push_parts(lua_State *L, int ridx) {
  for (int k = 1; k <= 3; k++) lua_getiuservalue(L, ridx, k);
  return lua_gettop(L) - 2;
}

/* Run what can run: local transforms, and the exchange in flight when it is
** complete (wait: to the end). Returns 1 when the transform is complete. */
static int progress(lua_State *L, int ridx, int wait, const char *fname) {
  fft_req *q = lua_touserdata(L, ridx);
  int top = lua_gettop(L), base = push_parts(L, ridx);
  fft_plan *p = lua_touserdata(L, base);
  for (;;) {
    if (lua_getiuservalue(L, ridx, 4) != LUA_TNIL) { /* an exchange in flight */
      lua_getfield(L, -1, wait ? "wait" : "test");
      lua_insert(L, -2);
      lua_call(L, 1, 1);
      int done = wait || lua_toboolean(L, -1);
      lua_pop(L, 1);
      if (!done) break;
      lua_pushnil(L);
      lua_setiuservalue(L, ridx, 4);
      q->next++;
      continue;
    }
    lua_pop(L, 1);
    if (q->next == p->nop[q->dir]) {
      q->state = R_READY;
      break;
    }
    const fft_op *op = &p->op[q->dir][q->next];
    if (op->what == FFT_OP_LOCAL) {
      run_local(L, p, op, base + 1, base + 2);
      q->next++;
    } else {
      run_transpose(L, base, p, op, base + 1, base + 2, 0, fname);
      lua_setiuservalue(L, ridx, 4);
    }
  }
  lua_settop(L, top);
  return q->state == R_READY;
}

static int start(lua_State *L, int dir, const char *fname) {
  mpb_state *st = mpb_get(L);
  fft_plan *p = check_plan(L, fname);
  arrays(L, p, dir, fname);
  fft_req *q = lua_newuserdatauv(L, sizeof *q, 4);
  memset(q, 0, sizeof *q);
  luaL_setmetatable(L, MPB_FFTREQ_MT);
  q->dir = dir;
  q->task = st->task;
  q->naborts = st->naborts;
  for (int k = 1; k <= 3; k++) {
    lua_pushvalue(L, k);
    lua_setiuservalue(L, 4, k);
  }
  progress(L, 4, 0, fname);
  return 1;
}

static int iforward(lua_State *L) { return start(L, 0, "FFT.iforward"); }
static int ibackward(lua_State *L) { return start(L, 1, "FFT.ibackward"); }

static fft_req *check_req(lua_State *L, const char *fname) {
  fft_req *q = luaL_testudata(L, 1, MPB_FFTREQ_MT);
  if (!q) mpb_lay_argerror(L, 1, fname, "FFT request expected, got %s", luaL_typename(L, 1));
  mpb_lay_check_request(L, q->task, q->naborts, q->state == R_USED, fname);
  return q;
}

static int deliver(lua_State *L, fft_req *q) {
  q->state = R_USED;
  lua_getiuservalue(L, 1, 3);
  return 1;
}

/* req:wait() */
static int rwait(lua_State *L) {
  fft_req *q = check_req(L, "FFTRequest.wait");
  if (q->state == R_PENDING) progress(L, 1, 1, "FFTRequest.wait");
  return deliver(L, q);
}

/* req:test() */
static int rtest(lua_State *L) {
  fft_req *q = check_req(L, "FFTRequest.test");
  if (q->state == R_PENDING && !progress(L, 1, 0, "FFTRequest.test")) {
    lua_pushboolean(L, 0);
    return 1;
  }
  lua_pushboolean(L, 1);
  return 1 + deliver(L, q);
}

static int rtostring(lua_State *L) {
  fft_req *q = luaL_checkudata(L, 1, MPB_FFTREQ_MT);
  lua_pushfstring(L, "mp.FFTRequest (%s, task %I, %s)", q->dir ? "backward" : "forward",
                  (LUAI_UACINT)q->task, state_names[q->state]);
  return 1;
}

void mpb_fft_run_methods(lua_State *L, int idx) {
  static const luaL_Reg methods[] = {{"forward", forward}, {"backward", backward},
                                     {"iforward", iforward}, {"ibackward", ibackward},
                                     {NULL, NULL}};
  lua_pushvalue(L, idx);
  luaL_setfuncs(L, methods, 0);
  lua_pop(L, 1);
  static const luaL_Reg rmethods[] = {{"wait", rwait}, {"test", rtest}, {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__tostring", rtostring}, {NULL, NULL}};
  mpb_class(L, MPB_FFTREQ_MT, rmethods, NULL, meta);
}
