/*
** Collectives on communicators: bcast, reduce, allreduce, scan, barrier
** (methods of mp.Comm, and mp.X on mp.world); gather, allgather, scatter and
** alltoall are in coll_move.c.
**
** Built on the p2p machinery (MPB_CH_COLL, filtered by communicator id), not
** on MPI collectives: an MPI collective interrupted by an abort can be
** neither completed nor cancelled, while p2p messages are drained by the
** abort protocol. Every wait is the one wait, so all of them are abortable.
** Each message's header flags name the collective that sent it: a rank that
** calls a different collective than its peers gets an error, not garbage.
**
** Reduction order (reproducible): reduce folds with a binomial tree on the
** ranks 0..n-1 (for 4 ranks: (v0 op v1) op (v2 op v3)), then rank 0 hands the
** result to the root; allreduce of anything but a typed array with a named
** op is that reduce then a bcast; scan folds left to right. Typed arrays with
** a named op take the fast path (recursive doubling, or for large arrays
** Rabenseifner's reduce-scatter + allgather) with C loops.
*/
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "array/array_ops.h"
#include "coll/coll_int.h"
#include "wire/wire.h"

static const char *const kind_names[K_NKIND] = {
    "?", "bcast", "reduce", "allreduce", "scan", "gather", "allgather", "scatter",
    "alltoall", "barrier", "split"};

/* Large arrays (bytes) use reduce-scatter + allgather. */
#define RABEN_MIN ((size_t)64 << 10)

ctx mpb_coll_begin(lua_State *L, const char *fname, int kind) {
  ctx x;
  x.st = mpb_get(L);
  x.c = mpb_comm_check(L, x.st, 1, fname);
  x.fname = fname;
  x.kind = kind;
  return x;
}

/* ------------------------------------------------------ message holder */
/* A received message owned by a userdata, so an error raised while we use it
** leaks nothing, and released as soon as we are done (multi-MiB buffers
** should not wait for the GC). */
typedef struct { mpb_msg *m; } holder;

static int holder_gc(lua_State *L) {
  holder *h = lua_touserdata(L, 1);
  mpb_msg_free(h->m);
  h->m = NULL;
  return 0;
}

static holder *hold(lua_State *L, mpb_msg *m) {
  holder *h = lua_newuserdatauv(L, sizeof *h, 0);
  h->m = NULL;
  if (luaL_newmetatable(L, "mp.CollMsg")) {
    lua_pushcfunction(L, holder_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  h->m = m;
  return h;
}

/* ------------------------------------------------------ send and take */
void mpb_coll_send_vals(lua_State *L, ctx *x, int r, int first, int n) {
  mpb_wbuf *b = mpb_encode_msg(L, first, n, x->fname, 0, sizeof(mpb_uhdr));
  mpb_comm_send(L, x->st, x->c, r, MPB_CH_COLL, (uint32_t)x->kind, b, 1);
  lua_pop(L, 1);
}

mpb_msg *mpb_coll_take(lua_State *L, ctx *x, int r) {
  mpb_msg *m = mpb_comm_take(L, x->st, x->c, MPB_CH_COLL, r, x->fname);
  uint32_t k = mpb_msg_flags(m) & 0xffffu; /* high bits: p2p framing */
  if ((int)k != x->kind) {
    mpb_msg_free(m);
    luaL_error(L, "mp.%s: [rank %d/%d] mismatched collectives: rank %d called mp.%s", x->fname,
               x->st->rank, x->st->size, r, k < K_NKIND ? kind_names[k] : "?");
  }
  return m;
}

/* Take one value from comm rank r and push it. */
void mpb_coll_recv_val(lua_State *L, ctx *x, int r) {
  int top = lua_gettop(L);
  int n = mpb_push_msg(L, x->st, mpb_coll_take(L, x, r), x->fname);
  if (n == 0) lua_pushnil(L);
  lua_settop(L, top + 1);
}

/* Push an uninitialized array (no zero fill: it is about to be overwritten). */
static mpb_array *push_uninit(lua_State *L, const mpb_array *like) {
  size_t bytes = mpb_array_bytes(like);
  void *mem = lua_newuserdatauv(L, bytes ? bytes : 1, 0);
  mpb_array *o = mpb_array_view(L, -1, mem, like->dtype, like->ndim, like->dims);
  lua_remove(L, -2);
  return o;
}

/* ----------------------------------------------------------- combining */
typedef struct { int op; int fidx; } opspec; /* op < 0: the function at fidx */

static opspec check_op(lua_State *L, ctx *x, int idx) {
  opspec o = {-1, idx};
  if (lua_isfunction(L, idx)) return o;
  const char *s = lua_tostring(L, idx);
  if (s && lua_type(L, idx) == LUA_TSTRING && (o.op = mpb_red_from_name(s)) >= 0) {
    /* refuse an op the array's dtype lacks here, before any message: every
    ** rank raises the same error, so no peer is left waiting */
    mpb_array *a = mpb_array_test(L, 2);
    if (a && mpb_red_apply(o.op, a->dtype, NULL, NULL, NULL, 0) != 0)
      luaL_error(L, "mp.%s: [rank %d/%d] '%s' is not defined on %s arrays", x->fname,
                 x->st->rank, x->st->size, s, mpb_dtype_name(a->dtype));
    return o;
  }
  luaL_error(L, "bad argument #%d to 'mp.%s' ([rank %d/%d] op must be sum, prod, min, max, "
             "land, lor, band, bor or a function)", idx - 1, x->fname, x->st->rank, x->st->size);
  return o;
}

static int truth(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TNUMBER) return lua_tonumber(L, idx) != 0;
  return lua_toboolean(L, idx);
}

static void cannot(lua_State *L, ctx *x, int op, int from) {
  luaL_error(L, "mp.%s: [rank %d/%d] cannot combine a %s and a %s (from rank %d) with '%s'",
             x->fname, x->st->rank, x->st->size, luaL_typename(L, -2), luaL_typename(L, -1),
             from, mpb_red_name(op));
}

/* acc (at -2) op v (at -1) -> result at -2, v popped. With own, acc may be
** updated in place (it is ours: decoded or made here). */
static void combine_named(lua_State *L, ctx *x, int op, int from, int own, int depth) {
  int ta = lua_type(L, -2), tv = lua_type(L, -1);
  if (ta == LUA_TNUMBER && tv == LUA_TNUMBER) {
    switch (op) {
      case MPB_RED_SUM: lua_arith(L, LUA_OPADD); return;
      case MPB_RED_PROD: lua_arith(L, LUA_OPMUL); return;
      case MPB_RED_BAND: lua_arith(L, LUA_OPBAND); return;
      case MPB_RED_BOR: lua_arith(L, LUA_OPBOR); return;
      case MPB_RED_MIN:
      case MPB_RED_MAX: {
        int lt = lua_compare(L, -1, -2, LUA_OPLT); /* v < acc */
        if ((op == MPB_RED_MIN) == lt) lua_replace(L, -2);
        else lua_pop(L, 1);
        return;
      }
    }
  }
  if ((op == MPB_RED_LAND || op == MPB_RED_LOR) && ta != LUA_TTABLE && ta != LUA_TUSERDATA &&
      tv != LUA_TTABLE && tv != LUA_TUSERDATA) {
    int r = op == MPB_RED_LAND ? (truth(L, -2) && truth(L, -1)) : (truth(L, -2) || truth(L, -1));
    lua_pop(L, 2);
    lua_pushboolean(L, r);
    return;
  }
  mpb_array *a = mpb_array_test(L, -2), *b = mpb_array_test(L, -1);
  if (a && b) {
    if (a->dtype != b->dtype || a->n != b->n)
      luaL_error(L, "mp.%s: [rank %d/%d] %s array of %I elements from rank %d, %s of %I here",
                 x->fname, x->st->rank, x->st->size, mpb_dtype_name(b->dtype),
                 (LUAI_UACINT)b->n, from, mpb_dtype_name(a->dtype), (LUAI_UACINT)a->n);
    mpb_array *o = own ? a : push_uninit(L, a);
    if (mpb_red_apply(op, a->dtype, o->data, a->data, b->data, a->n) != 0)
      luaL_error(L, "mp.%s: [rank %d/%d] '%s' is not defined on %s arrays", x->fname,
                 x->st->rank, x->st->size, mpb_red_name(op), mpb_dtype_name(a->dtype));
    if (!own) lua_replace(L, -3);
    lua_pop(L, 1);
    return;
  }
  if (ta == LUA_TTABLE && tv == LUA_TTABLE && depth < MPB_WIRE_MAXDEPTH) {
    int ai = lua_absindex(L, -2), vi = lua_absindex(L, -1);
    int oi = ai;
    if (!own) {
      lua_newtable(L);
      oi = lua_gettop(L);
    }
    lua_Integer na = 0, nv = 0;
    lua_pushnil(L);
    while (lua_next(L, vi)) { nv++; lua_pop(L, 1); }
    lua_pushnil(L);
    while (lua_next(L, ai)) {
      na++;
      lua_pushvalue(L, -2);
      if (lua_rawget(L, vi) == LUA_TNIL) cannot(L, x, op, from);
      combine_named(L, x, op, from, own, depth + 1);
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, oi);
    }
    if (na != nv) {
      lua_settop(L, vi);
      luaL_error(L, "mp.%s: [rank %d/%d] table of %I fields from rank %d, %I here", x->fname,
                 x->st->rank, x->st->size, (LUAI_UACINT)nv, from, (LUAI_UACINT)na);
    }
    if (!own) lua_replace(L, ai);
    lua_settop(L, ai);
    return;
  }
  cannot(L, x, op, from);
}

/* acc (at -2) op v (at -1): a Lua function is called as op(acc, v). */
static void combine(lua_State *L, ctx *x, opspec o, int from, int own) {
  if (o.op < 0) {
    lua_pushvalue(L, o.fidx);
    lua_insert(L, -3);
    lua_call(L, 2, 1);
  } else {
    combine_named(L, x, o.op, from, own, 0);
  }
}

/* -------------------------------------------------------------- bcast */
/* Binomial tree from root; inner ranks forward the bytes they got. Leaves
** the value on top (root: its own value at vidx). */
static void bcast_at(lua_State *L, ctx *x, int vidx, int root) {
  int n = x->c->size, vr = (x->c->rank - root + n) % n, mask = 1;
  holder *h = NULL;
  if (vr != 0) {
    for (; mask < n; mask <<= 1)
      if (vr & mask) {
        h = hold(L, mpb_coll_take(L, x, (vr - mask + root) % n));
        break;
      }
  } else {
    while (mask < n) mask <<= 1;
  }
  int sent = 0;
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask >= n) continue;
    int dst = (vr + mask + root) % n;
    if (h) {
      mpb_user_send_bytes(L, x->st, x->c->ranks[dst], MPB_CH_COLL, h->m->buf, h->m->len, 0);
    } else {
      if (!sent) mpb_encode_msg(L, vidx, 1, x->fname, 1, sizeof(mpb_uhdr));
      mpb_comm_send(L, x->st, x->c, dst, MPB_CH_COLL, (uint32_t)x->kind,
                    mpb_wbuf_check(L, -1), 0);
      sent = 1;
    }
  }
  if (sent) lua_pop(L, 1);
  if (!h) {
    lua_pushvalue(L, vidx);
    return;
  }
  mpb_msg *m = h->m;
  h->m = NULL;
  lua_pop(L, 1);
  int top = lua_gettop(L);
  if (mpb_push_msg(L, x->st, m, x->fname) == 0) lua_pushnil(L);
  lua_settop(L, top + 1);
}

/* comm:bcast(v, root=0) */
static int c_bcast(lua_State *L) {
  ctx x = mpb_coll_begin(L, "bcast", K_BCAST);
  int root = lua_isnoneornil(L, 3) ? 0 : mpb_comm_checkrank(L, x.st, x.c, 3, "bcast");
  lua_settop(L, 2);
  bcast_at(L, &x, 2, root);
  return 1;
}

/* ------------------------------------------------------------- reduce */
/* Binomial fold to rank 0 of v (at vidx); leaves the result on top at rank
** 0, nothing elsewhere. Returns 1 at rank 0. */
static int reduce0(lua_State *L, ctx *x, int vidx, opspec o) {
  int n = x->c->size, me = x->c->rank, own = 0;
  lua_pushvalue(L, vidx);
  for (int mask = 1; mask < n; mask <<= 1) {
    if (me & mask) {
      mpb_coll_send_vals(L, x, me & ~mask, lua_gettop(L), 1);
      lua_pop(L, 1);
      return 0;
    }
    if ((me | mask) < n) {
      mpb_coll_recv_val(L, x, me | mask);
      combine(L, x, o, me | mask, own);
      own = o.op >= 0;
    }
  }
  if (!own && mpb_array_test(L, -1)) { /* never hand back the caller's own array */
    lua_getfield(L, -1, "copy");
    lua_insert(L, -2);
    lua_call(L, 1, 1);
  }
  return 1;
}

/* comm:reduce(v, op, root=0): the result at root, nil elsewhere. */
static int c_reduce(lua_State *L) {
  ctx x = mpb_coll_begin(L, "reduce", K_REDUCE);
  opspec o = check_op(L, &x, 3);
  int root = lua_isnoneornil(L, 4) ? 0 : mpb_comm_checkrank(L, x.st, x.c, 4, "reduce");
  lua_settop(L, 3);
  int have = reduce0(L, &x, 2, o);
  if (root == 0) return have;
  if (x.c->rank == 0) {
    mpb_coll_send_vals(L, &x, root, lua_gettop(L), 1);
    return 0;
  }
  if (x.c->rank != root) return 0;
  mpb_coll_recv_val(L, &x, 0);
  return 1;
}

/* --------------------------------------------- allreduce of typed arrays */
static void send_chunk(lua_State *L, ctx *x, int r, int owner, const mpb_array *a,
                       int64_t lo, int64_t len) {
  int64_t dims[1] = {len};
  char *p = (char *)a->data + (size_t)lo * mpb_dtype_size(a->dtype);
  mpb_array_view(L, owner, p, a->dtype, 1, dims);
  mpb_coll_send_vals(L, x, r, lua_gettop(L), 1);
  lua_pop(L, 1);
}

/* Take a chunk of len elements of dtype from r: pushes its holder and a view
** into the received buffer (no copy); returns the view. */
static mpb_array *take_chunk(lua_State *L, ctx *x, int r, int dtype, int64_t len) {
  hold(L, mpb_coll_take(L, x, r));
  holder *h = lua_touserdata(L, -1);
  char err[MPB_ERRLEN];
  int n = mpb_wire_decode(L, h->m->buf + sizeof(mpb_uhdr), h->m->len - sizeof(mpb_uhdr),
                          lua_gettop(L), err, sizeof err);
  if (n < 0)
    luaL_error(L, "mp.%s: [rank %d/%d] malformed message from rank %d: %s", x->fname,
               x->st->rank, x->st->size, r, err);
  mpb_array *v = n == 1 ? mpb_array_test(L, -1) : NULL;
  if (!v || v->dtype != dtype || (len >= 0 && v->n != len))
    luaL_error(L, "mp.%s: [rank %d/%d] rank %d sent %s where a %s array of %I elements was "
               "expected (do all ranks pass the same kind of array?)", x->fname, x->st->rank,
               x->st->size, r, v ? mpb_dtype_name(v->dtype) : "something else",
               mpb_dtype_name(dtype), (LUAI_UACINT)len);
  return v;
}

/* Pop a chunk pushed by take_chunk and free its buffer now. */
static void drop_chunk(lua_State *L) {
  holder *h = lua_touserdata(L, -2);
  free(h->m);
  h->m = NULL;
  lua_pop(L, 2);
}

static void apply(lua_State *L, ctx *x, int op, mpb_array *o, int64_t lo, const void *a,
                  const void *b, int64_t len) {
  size_t es = mpb_dtype_size(o->dtype);
  if (mpb_red_apply(op, o->dtype, (char *)o->data + lo * es, a, b, len) != 0)
    luaL_error(L, "mp.%s: [rank %d/%d] '%s' is not defined on %s arrays", x->fname,
               x->st->rank, x->st->size, mpb_red_name(op), mpb_dtype_name(o->dtype));
}

/* The array at 2 reduced with op over the comm: pushes the result. Ranks fold
** into a power of two p2 first (the first 2*rem ranks pair up), run recursive
** doubling or Rabenseifner among p2, and hand the result back. */
static void allreduce_array(lua_State *L, ctx *x, int op) {
  mpb_array *a = mpb_array_test(L, 2);
  int n = x->c->size, me = x->c->rank, p2 = 1;
  while (p2 * 2 <= n) p2 *= 2;
  int rem = n - p2, nr;
  size_t es = mpb_dtype_size(a->dtype);
  int64_t N = a->n;
  mpb_array *o = push_uninit(L, a);
  int oidx = lua_gettop(L);
  const mpb_array *cur = a; /* the data this rank holds so far */
  int curidx = 2;
  if (me < 2 * rem) {
    if (me % 2 == 0) {
      send_chunk(L, x, me + 1, 2, a, 0, N);
      nr = -1;
    } else {
      mpb_array *r = take_chunk(L, x, me - 1, a->dtype, N);
      apply(L, x, op, o, 0, r->data, a->data, N);
      drop_chunk(L);
      cur = o, curidx = oidx;
      nr = me / 2;
    }
  } else {
    nr = me - rem;
  }
#define REAL(q) ((q) < rem ? 2 * (q) + 1 : (q) + rem)
  if (nr >= 0 && ((size_t)N * es < RABEN_MIN || N < p2)) {
    for (int mask = 1; mask < p2; mask <<= 1) { /* recursive doubling */
      int peer = REAL(nr ^ mask);
      send_chunk(L, x, peer, curidx, cur, 0, N);
      mpb_array *r = take_chunk(L, x, peer, a->dtype, N);
      if ((nr ^ mask) < nr) apply(L, x, op, o, 0, r->data, cur->data, N);
      else apply(L, x, op, o, 0, cur->data, r->data, N);
      drop_chunk(L);
      cur = o, curidx = oidx;
    }
  } else if (nr >= 0) {
    int64_t los[32], his[32], lo = 0, hi = N;
    int lv = 0;
    for (int mask = p2 / 2; mask >= 1; mask >>= 1, lv++) { /* reduce-scatter */
      int peer = REAL(nr ^ mask);
      int64_t mid = lo + (hi - lo) / 2;
      int low = (nr & mask) == 0;
      int64_t klo = low ? lo : mid, khi = low ? mid : hi;
      send_chunk(L, x, peer, curidx, cur, low ? mid : lo, low ? hi - mid : mid - lo);
      mpb_array *r = take_chunk(L, x, peer, a->dtype, khi - klo);
      const char *mine = (const char *)cur->data + klo * es;
      if (low) apply(L, x, op, o, klo, mine, r->data, khi - klo);
      else apply(L, x, op, o, klo, r->data, mine, khi - klo);
      drop_chunk(L);
      los[lv] = lo, his[lv] = hi;
      lo = klo, hi = khi;
      cur = o, curidx = oidx;
    }
    for (int mask = 1; mask < p2; mask <<= 1) { /* allgather, in reverse */
      int peer = REAL(nr ^ mask);
      lv--;
      int64_t plo = los[lv], phi = his[lv];
      int64_t rlo = lo == plo ? hi : plo, rhi = lo == plo ? phi : lo;
      send_chunk(L, x, peer, oidx, o, lo, hi - lo);
      mpb_array *r = take_chunk(L, x, peer, a->dtype, rhi - rlo);
      memcpy((char *)o->data + rlo * es, r->data, (size_t)(rhi - rlo) * es);
      drop_chunk(L);
      lo = plo, hi = phi;
    }
  }
#undef REAL
  if (me < 2 * rem) {
    if (me % 2) {
      send_chunk(L, x, me - 1, oidx, o, 0, N);
    } else { /* the result is the received buffer itself, reshaped */
      mpb_array *r = take_chunk(L, x, me + 1, a->dtype, N);
      memcpy(o->data, r->data, (size_t)N * es);
      drop_chunk(L);
    }
  }
  lua_settop(L, oidx);
}

/* comm:allreduce(v, op): the reduction on every rank. */
static int c_allreduce(lua_State *L) {
  ctx x = mpb_coll_begin(L, "allreduce", K_ALLRED);
  opspec o = check_op(L, &x, 3);
  lua_settop(L, 3);
  mpb_array *a = mpb_array_test(L, 2);
  if (a && o.op >= 0 && x.c->size > 1) {
    allreduce_array(L, &x, o.op);
    return 1;
  }
  x.kind = K_REDUCE;
  if (!reduce0(L, &x, 2, o)) lua_pushnil(L);
  x.kind = K_BCAST;
  bcast_at(L, &x, 4, 0);
  return 1;
}

/* comm:scan(v, op): inclusive prefix v0 op v1 op ... op v(rank), folded left
** to right along the ranks. */
static int c_scan(lua_State *L) {
  ctx x = mpb_coll_begin(L, "scan", K_SCAN);
  opspec o = check_op(L, &x, 3);
  lua_settop(L, 3);
  int me = x.c->rank;
  if (me > 0) {
    mpb_coll_recv_val(L, &x, me - 1);
    lua_pushvalue(L, 2);
    combine(L, &x, o, me - 1, 1);
  } else {
    lua_pushvalue(L, 2);
  }
  if (me + 1 < x.c->size) mpb_coll_send_vals(L, &x, me + 1, lua_gettop(L), 1);
  return 1;
}

/* ------------------------------------------------------ raw exchanges */
static void send_raw(lua_State *L, ctx *x, int r, const void *p, size_t len) {
  char buf[sizeof(mpb_uhdr) + 64];
  mpb_uhdr h = {x->st->task, x->c->id, (uint32_t)x->kind};
  memcpy(buf, &h, sizeof h);
  if (len) memcpy(buf + sizeof h, p, len);
  mpb_user_send_bytes(L, x->st, x->c->ranks[r], MPB_CH_COLL, buf, sizeof h + len, 0);
}

static void take_raw(lua_State *L, ctx *x, int r, void *out, size_t len) {
  mpb_msg *m = mpb_coll_take(L, x, r);
  size_t got = m->len - sizeof(mpb_uhdr);
  if (got == len && len) memcpy(out, m->buf + sizeof(mpb_uhdr), len);
  mpb_msg_free(m);
  if (got != len)
    luaL_error(L, "mp.%s: [rank %d/%d] malformed message from rank %d", x->fname, x->st->rank,
               x->st->size, r);
}

void mpb_coll_allgather_raw(lua_State *L, mpb_state *st, const mpb_comm *c,
                            const void *mine, size_t len, void *out, const char *fname) {
  ctx x = {st, (mpb_comm *)c, fname, K_SPLIT};
  int n = c->size, me = c->rank;
  for (int k = 1; k < n; k++) send_raw(L, &x, (me + k) % n, mine, len);
  memcpy((char *)out + (size_t)me * len, mine, len);
  for (int k = 1; k < n; k++) {
    int r = (me - k + n) % n;
    take_raw(L, &x, r, (char *)out + (size_t)r * len, len);
  }
}

/* comm:barrier(): dissemination, ceil(log2 n) rounds of empty messages. */
static int c_barrier(lua_State *L) {
  ctx x = mpb_coll_begin(L, "barrier", K_BARRIER);
  int n = x.c->size, me = x.c->rank;
  for (int k = 1; k < n; k <<= 1) {
    send_raw(L, &x, (me + k) % n, NULL, 0);
    take_raw(L, &x, (me - k + n) % n, NULL, 0);
  }
  return 0;
}

void mpb_coll_methods(lua_State *L, int mpt) {
  static const luaL_Reg funcs[] = {
      {"bcast", c_bcast}, {"reduce", c_reduce},   {"allreduce", c_allreduce},
      {"scan", c_scan},   {"barrier", c_barrier}, {NULL, NULL}};
  for (const luaL_Reg *f = funcs; f->name; f++) mpb_comm_setboth(L, mpt, f->name, f->func);
  mpb_coll_move_methods(L, mpt);
}
