/* SPDX-License-Identifier: MIT */
/*
** Allreduce of typed arrays with a named op, in C loops: ranks fold into a
** power of two first, then recursive doubling, or for large arrays
** Rabenseifner's reduce-scatter + allgather; chunks travel as typed arrays
** (in place) and are combined from views into the received buffers.
*/
#include <string.h>

#include "array/array.h"
#include "array/array_ops.h"
#include "coll/coll.h"
#include "wire/wire.h"

/* Large arrays (bytes) use reduce-scatter + allgather. */
#define RABEN_MIN ((size_t)64 << 10)

static void send_chunk(lua_State *L, mpb_coll *x, int r, int owner, const mpb_array *a,
                       int64_t lo, int64_t len) {
  int64_t dims[1] = {len};
  char *p = (char *)a->data + (size_t)lo * mpb_dtype_size(a->dtype);
  mpb_array_view(L, owner, p, a->dtype, 1, dims);
  mpb_coll_send_vals(L, x, r, lua_gettop(L), 1, NULL);
  lua_pop(L, 1);
}

/* Take a chunk of len elements of dtype from r: pushes its holder and a view
** into the received buffer (no copy); returns the view. */
static mpb_array *take_chunk(lua_State *L, mpb_coll *x, int r, int dtype, int64_t len) {
  mpb_msg *m = mpb_msg_inline_strs(mpb_coll_take(L, x, r)); /* a string would be an error */
  if (!m)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory receiving from rank %d", x->fname,
               x->st->rank, x->st->size, r);
  mpb_msg_hold(L, m);
  mpb_msg_check_lost(L, x->st, m, x->fname);
  char err[MPB_ERRLEN];
  int n = mpb_wire_decode(L, m->buf + sizeof(mpb_uhdr), m->len - sizeof(mpb_uhdr),
                          lua_gettop(L), err, sizeof err);
  if (n < 0)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " malformed message from rank %d: %s", x->fname,
               x->st->rank, x->st->size, r, err);
  mpb_array *v = n == 1 ? mpb_array_test(L, -1) : NULL;
  if (!v || v->dtype != dtype || (len >= 0 && v->n != len))
    luaL_error(L, "mp.%s: " MPB_RANKFMT " rank %d sent %s where a %s array of %I elements was "
               "expected (do all ranks pass the same kind of array?)", x->fname, x->st->rank,
               x->st->size, r, v ? mpb_dtype_name(v->dtype) : "something else",
               mpb_dtype_name(dtype), (LUAI_UACINT)len);
  return v;
}

/* Pop a chunk pushed by take_chunk and free its buffer now. */
static void drop_chunk(lua_State *L) {
  mpb_msg_release(L, -2);
  lua_pop(L, 2);
}

static void apply(lua_State *L, mpb_coll *x, int op, mpb_array *o, int64_t lo, const void *a,
                  const void *b, int64_t len) {
  size_t es = mpb_dtype_size(o->dtype);
  if (mpb_red_apply(op, o->dtype, (char *)o->data + lo * es, a, b, len) != 0)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " '%s' is not defined on %s arrays", x->fname,
               x->st->rank, x->st->size, mpb_red_name(op), mpb_dtype_name(o->dtype));
}

/* The array at 2 reduced with op over the comm: pushes the result. Ranks fold
** into a power of two p2 first (the first 2*rem ranks pair up), run recursive
** doubling or Rabenseifner among p2, and hand the result back. */
void mpb_coll_allreduce_array(lua_State *L, mpb_coll *x) {
  int op = x->op;
  mpb_array *a = mpb_array_test(L, 2);
  int n = x->c->size, me = x->c->rank, p2 = 1;
  while (p2 * 2 <= n) p2 *= 2;
  int rem = n - p2, nr;
  size_t es = mpb_dtype_size(a->dtype);
  int64_t N = a->n;
  mpb_array *o = mpb_coll_push_uninit(L, a);
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

