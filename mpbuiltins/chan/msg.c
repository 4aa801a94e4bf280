/* SPDX-License-Identifier: MIT */
/*
** Received messages: allocation, queues, the one Lua type that owns a
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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "chan/chan.h"
#include "wire/wire.h"

#define MSG_MT "mp.Msg"
#define SMALL_MSG 4096

/* Large messages. Fresh memory costs a page fault per 4 KiB, which in a VM
** takes longer than the transfer itself (0.25 GB/s against 5 GB/s into warm
** memory), and programs send big blocks again and again. So the buffer of
** the last large message freed is kept for the next large one that fits
** (a spare), and fresh large buffers ask for huge pages. */
#define SPARE_MIN ((size_t)64 << 20)
#define LIVE_MIN ((size_t)1 << 20)
static mpb_msg *spare;
static int live_big; /* buffers of LIVE_MIN bytes or more that messages hold */

void mpb_bigmem_advise(void *p, size_t len) {
#ifdef MADV_HUGEPAGE
  uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + len) & ~(uintptr_t)4095;
  if (len >= SPARE_MIN && e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
  (void)p, (void)len;
#endif
}

size_t mpb_msg_spare(void) { return spare ? spare->cap : 0; }

int mpb_msg_live_big(void) { return live_big; }

void mpb_msg_drop_spare(void) {
  free(spare);
  spare = NULL;
}

mpb_msg *mpb_msg_new(size_t len) {
  if (len > SIZE_MAX - sizeof(mpb_msg)) return NULL;
  mpb_msg *m = NULL;
  size_t cap = len;
  if (len >= SPARE_MIN && spare && spare->cap >= len && spare->cap / 4 <= len) {
    m = spare; /* warm memory */
    cap = spare->cap;
    spare = NULL;
  } else {
    m = malloc(sizeof *m + len);
    if (!m && spare) { /* the spare's memory is better spent here */
      mpb_msg_drop_spare();
      m = malloc(sizeof *m + len);
    }
    if (!m) return NULL;
    mpb_bigmem_advise(m, sizeof *m + len);
  }
  memset(m, 0, sizeof *m);
  m->len = len;
  m->cap = cap;
  live_big += cap >= LIVE_MIN;
  return m;
}

/* ------------------------------------------------------------ reserve */
/* A rank short of memory must still read the small messages that say what
** comes next (headers of messages in parts, commands): a buffer is kept for
** one of them, lent when malloc fails (arrive.c) and back when freed. */
int mpb_msg_reserve_init(mpb_msg_reserve *r) {
  r->kept = malloc(sizeof *r->kept + MPB_MSG_RESERVE);
  r->out = 0;
  return r->kept ? 0 : -1;
}

void mpb_msg_reserve_free(mpb_msg_reserve *r) {
  if (r->out) r->kept->home = NULL; /* the message lent it frees it */
  else free(r->kept);
  r->kept = NULL;
}

mpb_msg *mpb_msg_new_or_reserve(mpb_msg_reserve *r, size_t len) {
  mpb_msg *m = mpb_msg_new(len);
  if (m || len > MPB_MSG_RESERVE || !r->kept || r->out) return m;
  m = r->kept;
  r->out = 1;
  memset(m, 0, sizeof *m);
  m->len = len;
  m->cap = MPB_MSG_RESERVE;
  m->home = r;
  return m;
}

void mpb_msg_free(mpb_msg *m) {
  if (!m) return;
  free(m->parts);
  if (m->home) { /* the reserve, back */
    m->home->out = 0;
    return;
  }
  live_big -= m->cap >= LIVE_MIN;
  if (m->cap >= SPARE_MIN && (!spare || spare->cap <= m->cap)) {
    free(spare);
    spare = m;
    return;
  }
  free(m);
}

void mpb_queue_push(mpb_queue *q, mpb_msg *m) {
  m->next = NULL;
  if (q->tail) q->tail->next = m;
  else q->head = m;
  q->tail = m;
}

mpb_msg *mpb_queue_pop(mpb_queue *q) {
  mpb_msg *m = q->head;
  if (m) {
    q->head = m->next;
    if (!q->head) q->tail = NULL;
  }
  return m;
}

void mpb_queue_clear(mpb_queue *q) {
  mpb_msg *m;
  while ((m = mpb_queue_pop(q))) mpb_msg_free(m);
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
typedef struct { const mpb_msg *m; size_t len; int n, views; char *err; } decoding;

static int decode_held(lua_State *L) {
  decoding *d = lua_touserdata(L, 1);
  d->n = mpb_wire_decode_views(L, d->m->buf + sizeof(mpb_uhdr), d->len, 2, &d->views, d->err,
                               MPB_ERRLEN);
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
    int n = mpb_wire_decode(L, st->rbuf, len, 0, err, sizeof err);
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
