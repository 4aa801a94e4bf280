/* SPDX-License-Identifier: MIT */
/*
** The codec's entry points for messages (wire/ is the codec): encoding Lua
** values into the reusable buffer, the one Lua type that owns a received
** message ("mp.Msg": an error raised while a message is in use leaks
** nothing, and a big buffer can be released at once rather than by the GC),
** and turning a message into Lua values.
**
** Small messages are decoded from a per-rank buffer (copying their few
** arrays), so no collectable owner is made per message; large ones are
** owned by an mp.Msg and their arrays are views into it (no copy). Strings
** are copied once into Lua strings (Lua makes a string only by copying its
** bytes): a large message whose values took no view is freed at once, so
** its buffer serves the next one while it is still warm.
*/
#include <string.h>

#include "chan/codec.h"
#include "wire/wire.h"

#define MSG_MT "mp.Msg"
#define SMALL_MSG 4096

/* ------------------------------------------------------------ encoding */
/* Encoding reuses one buffer per rank (allocating a collectable buffer per
** message costs more than encoding a small one); a nested use while it holds
** a message (a __gc handler that sends) gets a fresh buffer. */
/* Claim the reusable buffer (its userdata pushed), emptied, hdrlen bytes of
** header room in it. */
static mpb_wbuf *claim(lua_State *L, mpb_state *st, const char *fname, size_t hdrlen) {
  mpb_wbuf *b;
  if (st->wbusy) {
    b = mpb_wbuf_push(L);
  } else {
    if (st->wref == 0 || st->wref == LUA_NOREF) {
      mpb_wbuf_push(L);
      st->wref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->wref);
    b = st->wscratch ? st->wscratch : mpb_wbuf_check(L, -1);
    mpb_wbuf_reset(L, b, lua_gettop(L));
    st->wscratch = b;
    st->wbusy = 1;
  }
  if (!mpb_wbuf_reserve(b, hdrlen)) {
    mpb_encode_done(st, b);
    luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory", fname, st->rank, st->size);
  }
  b->len += hdrlen;
  return b;
}

struct mpb_wbuf *mpb_encode_msg(lua_State *L, int first, int n, const char *fname, int arg,
                                size_t hdrlen) {
  char err[MPB_ERRLEN];
  mpb_state *st = mpb_get(L);
  mpb_wbuf *b = claim(L, st, fname, hdrlen);
  if (mpb_wire_encode(L, first, n, b, lua_gettop(L), err, sizeof err) != 0) {
    mpb_encode_done(st, b);
    if (arg > 0)
      luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " %s)", arg, fname, st->rank,
                 st->size, err);
    luaL_error(L, "mp.%s: " MPB_RANKFMT " %s", fname, st->rank, st->size, err);
  }
  return b;
}

struct mpb_wbuf *mpb_encode_items(lua_State *L, mpb_wire_items *it, const char *fname,
                                  size_t hdrlen) {
  mpb_state *st = mpb_get(L);
  mpb_wbuf *b = claim(L, st, fname, hdrlen);
  if (mpb_wire_items_open(b, it) != 0) {
    mpb_encode_done(st, b);
    luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory", fname, st->rank, st->size);
  }
  return b;
}

int mpb_encode_item(lua_State *L, mpb_wbuf *b, int bidx, mpb_wire_items *it, int first, int n,
                    char *err, size_t errlen) {
  if (mpb_wire_items_add(L, first, n, b, bidx, it, err, errlen) == 0) return 0;
  mpb_encode_done(mpb_get(L), b);
  return -1;
}

/* Scalars take the codec's short way into the reusable buffer as it is:
** nothing is pushed or looked up. A buffer that anchors arrays from its last
** message is reset by the general way first. */
struct mpb_wbuf *mpb_encode_small(lua_State *L, mpb_state *st, int first, int n,
                                  const char *fname, size_t hdrlen) {
  mpb_wbuf *b = st->wscratch;
  if (!b || st->wbusy || b->nseg) return NULL;
  b->len = hdrlen;
  b->extlen = 0;
  int rc = mpb_wire_encode_scalars(L, first, n, b);
  if (rc < 0) luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory", fname, st->rank, st->size);
  if (rc > 0) return NULL;
  st->wbusy = 1;
  return b;
}

void mpb_encode_done(mpb_state *st, struct mpb_wbuf *b) {
  if (b == st->wscratch) st->wbusy = 0;
}

void mpb_push_copy(lua_State *L, mpb_state *st, int idx, const char *fname, int arg) {
  idx = lua_absindex(L, idx);
  int top = lua_gettop(L);
  mpb_wbuf *b = mpb_encode_msg(L, idx, 1, fname, arg, 0);
  if (mpb_push_encoded(L, st, b, top + 1, fname) != 1)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " internal error: not one value", fname, st->rank, st->size);
}

int mpb_push_encoded(lua_State *L, mpb_state *st, mpb_wbuf *b, int bidx, const char *fname) {
  char err[MPB_ERRLEN];
  bidx = lua_absindex(L, bidx);
  size_t len = b->len + b->extlen;
  const char *body = b->data;
  if (b->nseg) { /* large arrays and strings are referenced: one block for the decoder */
    char *flat = lua_newuserdatauv(L, len, 0);
    mpb_wbuf_flatten(b, flat);
    body = flat;
  }
  int top = lua_gettop(L);
  int n = mpb_wire_decode(L, body, len, 0, err, sizeof err);
  mpb_encode_done(st, b);
  if (n < 0)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " internal error: %s", fname, st->rank, st->size, err);
  for (int k = top; k >= bidx; k--) lua_remove(L, k); /* b's userdata, the flat copy */
  return n;
}

/* ------------------------------------------------------------- owning */
static int msg_gc(lua_State *L) {
  mpb_msg **h = luaL_checkudata(L, 1, MSG_MT);
  mpb_msg_free(*h);
  *h = NULL;
  return 0;
}

mpb_msg **mpb_msg_hold(lua_State *L, mpb_msg *m) {
  mpb_msg **h = lua_newuserdatauv(L, sizeof *h, 0);
  *h = NULL; /* inert until the metatable is set */
  if (luaL_newmetatable(L, MSG_MT)) {
    lua_pushcfunction(L, msg_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  *h = m;
  return h;
}

void mpb_msg_release(lua_State *L, int idx) {
  mpb_msg **h = luaL_checkudata(L, idx, MSG_MT);
  mpb_msg_free(*h);
  *h = NULL;
}

/* ------------------------------------------------------------ decoding */
static void malformed(lua_State *L, mpb_state *st, const char *fname, int src, const char *err) {
  luaL_error(L, "mp.%s: " MPB_RANKFMT " malformed message from rank %d: %s", fname, st->rank,
             st->size, src, err);
}

void mpb_msg_check_lost(lua_State *L, mpb_state *st, const mpb_msg *m, const char *fname) {
  if (!m->lost) return;
  const char *pre = fname ? "mp." : "mp", *name = fname ? fname : "";
  if (m->lost_why == MPB_LOST_MEMORY)
    luaL_error(L, "%s%s: " MPB_RANKFMT " out of memory receiving a message of %I bytes from "
               "rank %d (the message was dropped)", pre, name, st->rank, st->size,
               (LUAI_UACINT)m->lost, m->src);
  luaL_error(L, "%s%s: " MPB_RANKFMT " malformed message in parts (%I bytes) from rank %d: %s",
             pre, name, st->rank, st->size, (LUAI_UACINT)m->lost, m->src,
             m->lost_why == MPB_LOST_FRAME ? "its table of parts is malformed"
                                           : "a part is not the size its header announced");
}

/* The values of a large message, decoded in a protected call so that a
** memory error names the message: pushes them (their owner at 2). */
typedef struct { mpb_msg *m; size_t len; int n, views; char *err; } decoding;

static int decode_held(lua_State *L) {
  decoding *d = lua_touserdata(L, 1);
  mpb_msg *m = d->m;
  d->n = mpb_wire_decode_strs(L, m->buf + sizeof(mpb_uhdr), d->len, 2, m->strs, m->nstrs,
                              m->lstr, &d->views, d->err, MPB_ERRLEN);
  return d->n > 0 ? d->n : 0;
}

int mpb_push_msg(lua_State *L, mpb_state *st, mpb_msg *m, const char *fname) {
  char err[MPB_ERRLEN];
  int src = m->src;
  if (m->lost || m->len < sizeof(mpb_uhdr)) {
    mpb_msg gone = *m; /* its size and sender, for the error */
    mpb_msg_free(m);
    mpb_msg_check_lost(L, st, &gone, fname);
    malformed(L, st, fname, src, "no header");
  }
  size_t len = m->len - sizeof(mpb_uhdr);
  if (len <= SMALL_MSG && !m->nparts && !st->rbusy) {
    memcpy(st->rbuf, m->buf + sizeof(mpb_uhdr), len);
    mpb_msg_free(m);
    st->rbusy = 1; /* a __gc handler that receives meanwhile takes the other path */
    int n = mpb_wire_decode_scalars(L, st->rbuf, len);
    if (n < 0) n = mpb_wire_decode(L, st->rbuf, len, 0, err, sizeof err);
    st->rbusy = 0;
    if (n < 0) malformed(L, st, fname, src, err);
    return n;
  }
  mpb_msg_hold(L, m);
  int hidx = lua_gettop(L), views;
  decoding d = {m, len, 0, 0, err};
  lua_pushcfunction(L, decode_held);
  lua_pushlightuserdata(L, &d);
  lua_pushvalue(L, hidx);
  int status = lua_pcall(L, 2, LUA_MULTRET, 0);
  if (status == LUA_ERRMEM) /* say which message */
    luaL_error(L, "mp.%s: " MPB_RANKFMT " not enough memory for the values of a message of %I "
               "bytes from rank %d", fname, st->rank, st->size, (LUAI_UACINT)m->len, src);
  if (status != LUA_OK) lua_error(L);
  int n = d.n;
  views = d.views;
  if (n < 0) malformed(L, st, fname, src, err);
  if (!views) {
    mpb_msg_release(L, hidx); /* all copied: the buffer serves the next message */
  } else if (len >= (256 << 10) && !m->gc_paid) {
    /* Lua cannot see the bytes an mp.Msg holds: collect as if it allocated
    ** them, so the buffers of many large messages do not pile up */
    lua_gc(L, LUA_GCSTEP, (int)(len >> 10));
  }
  lua_remove(L, hidx); /* views into it keep it alive */
  return n;
}
