/* SPDX-License-Identifier: MIT */
/*
** Sending: encoding into the reusable buffer, the framing of a message (a
** header, and its large arrays and strings as parts sent in place: see
** chan_int.h), forwarding a received message unchanged, and the sends in
** flight.
**
** A send hands MPI a copy of the encoded bytes (MPI_Isend) and returns, so
** the sender may change its tables at once; while any rank waits it keeps
** receiving into its inboxes, so symmetric exchanges never deadlock. Parts
** are sent in place: mpb_send waits until MPI is done with them unless the
** caller takes the ids (nonblocking sends), in which case the sends anchor
** the arrays and strings they read. Sizes are MPI_Count all the way (the
** large-count calls of MPI 4): a message may be as large as memory allows.
** With MPLUA_ZERO_COPY=0 every message is flattened and sent as one
** piece, so the fast paths can be checked against the plain one.
**
** Every message larger than HEADER_MAX reaches its receiver as a small
** header first (the table of its parts): a receiver without the memory for
** the message still learns its size and drains it (arrive.c), where a large
** whole message could only be lost with what follows it. A flat message
** (the plain path, or one whose inline bytes alone exceed HEADER_MAX: it is
** flattened) goes as one part after a header of its user header alone.
*/
#include <stdlib.h>
#include <string.h>

#include "chan/codec.h"
#include "chan/frame.h"
#include "chan/mailbox.h"
#include "chan/outbox.h"
#include "chan/send.h"
#include "chan/trace.h"
#include "chan/wait.h"
#include "chan/wake.h"
#include "wire/wire.h"

#define HEADER_MAX ((size_t)64 << 10) /* larger messages reach a receiver header first */

/* ------------------------------------------------------------- sending */
static void raise_send(lua_State *L, mpb_state *st, int rc, int dst) {
  char what[64];
  snprintf(what, sizeof what, "sending to rank %d", dst);
  mpb_mpi_raise(L, st, rc, "send", what);
}

/* A user message posted to dst: counted, traced, and its receiver woken if
** it naps. */
static void posted(mpb_state *st, int dst, int chan, const char *buf, size_t len) {
  st->sent_to[dst]++;
  mpb_trace_sent(st, dst, chan, buf, len);
  mpb_wake(st, dst, 0);
}

/* A message to this very rank: queued at once, as one flat block. */
static void send_self(lua_State *L, mpb_state *st, int chan, const struct mpb_wbuf *b,
                      const char *flat, size_t len) {
  mpb_msg *m = mpb_msg_new(&st->msgmem, len);
  if (!m) luaL_error(L, "mp.send: " MPB_RANKFMT " out of memory", st->rank, st->size);
  if (b) mpb_wbuf_flatten(b, m->buf);
  else memcpy(m->buf, flat, len);
  m->src = st->rank;
  m->chan = chan;
  st->sent_to[st->rank]++;
  mpb_trace_sent(st, st->rank, chan, m->buf, len);
  st->recvd_from[st->rank]++;
  mpb_user_arrived(st, m);
}

/* ------------------------------------------------------ messages in parts */
/* The header of a message in parts (frame.h), malloc'ed; NULL: no memory. */
static char *split_header(const char *inl, size_t inlen, uint64_t n, const size_t *at,
                          const size_t *plen, const char *isstr, uint64_t tag, size_t *len) {
  *len = mpb_frame_size(inlen, n);
  char *buf = malloc(*len);
  if (buf) mpb_frame_write(buf, inl, inlen, n, at, plen, isstr, tag);
  return buf;
}

static uint64_t next_tag(mpb_state *st, int dst) {
  uint32_t t = st->part_tag[dst]++;
  return (uint64_t)(t % (uint32_t)st->tag_ub);
}

/* Post the parts after their header, each anchoring (when anchor is a
** registry ref) what it reads; own: with one part, the block it lies in,
** freed when it is done. A part MPI refuses is replaced by an empty message,
** so that the receiver finds the message short instead of waiting for ever;
** the first failure is returned once all are posted. */
static int post_parts(mpb_state *st, int dst, uint64_t tag, uint64_t n, const void *const *ptr,
                      const size_t *plen, int anchor, void *own) {
  lua_State *L = st->L;
  int first_rc = MPI_SUCCESS;
  for (uint64_t i = 0; i < n; i++) {
    int r = LUA_NOREF;
    if (anchor != LUA_NOREF) {
      lua_rawgeti(L, LUA_REGISTRYINDEX, anchor);
      r = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    int rc = mpb_post_send(st, &st->sends, ptr[i], plen[i], own, r, dst, (int)tag, st->bulk);
    if (rc != MPI_SUCCESS) {
      luaL_unref(L, LUA_REGISTRYINDEX, r);
      if (first_rc == MPI_SUCCESS) first_rc = rc;
      if ((rc = mpb_post_send(st, &st->sends, "", 0, NULL, LUA_NOREF, dst, (int)tag,
                              st->bulk)) != MPI_SUCCESS)
        mpb_fatal_mpi(st, rc, "cannot send the parts of a message");
    }
  }
  return first_rc;
}

/* A flat message of len (> HEADER_MAX) bytes at buf: its user header, then
** the rest as one part. own: the block buf lies in (freed when the part is
** done), or NULL when the caller keeps buf alive until then. */
static void send_flat_parts(lua_State *L, mpb_state *st, int dst, int chan, const char *buf,
                            size_t len, void *own) {
  size_t at = sizeof(mpb_uhdr), plen = len - at, hlen;
  const void *ptr = buf + at;
  char isstr = 0;
  uint64_t tag = next_tag(st, dst);
  char *hdr = split_header(buf, at, 1, &at, &plen, &isstr, tag, &hlen);
  if (!hdr) {
    free(own);
    luaL_error(L, "mp.send: " MPB_RANKFMT " out of memory", st->rank, st->size);
  }
  int rc = mpb_post_send(st, &st->sends, hdr, hlen, hdr, LUA_NOREF, dst, chan, st->user);
  if (rc != MPI_SUCCESS) {
    free(own);
    raise_send(L, st, rc, dst);
  }
  posted(st, dst, chan, buf, len); /* once: the parts are one message */
  if ((rc = post_parts(st, dst, tag, 1, &ptr, &plen, LUA_NOREF, own)) != MPI_SUCCESS)
    raise_send(L, st, rc, dst);
}

/* ------------------------------------------------------------- sending */
void mpb_send_bytes(lua_State *L, mpb_state *st, int dst, int chan, char *buf, size_t len,
                    int own) {
  if (dst == st->rank || !st->use_mpi) {
    send_self(L, st, chan, NULL, buf, len);
    if (own) free(buf);
    return;
  }
  char *copy = own ? buf : malloc(len ? len : 1);
  if (!copy) luaL_error(L, "mp.send: " MPB_RANKFMT " out of memory", st->rank, st->size);
  if (!own) memcpy(copy, buf, len);
  if (len > HEADER_MAX) {
    send_flat_parts(L, st, dst, chan, copy, len, copy);
  } else {
    int rc = mpb_post_send(st, &st->sends, copy, len, copy, LUA_NOREF, dst, chan, st->user);
    if (rc != MPI_SUCCESS) raise_send(L, st, rc, dst);
    posted(st, dst, chan, copy, len);
  }
  /* The send completes in the next poll's progress: a test now would be a
  ** progress call of its own, a good part of a small round trip. A burst of
  ** sends with no poll between them tests as it goes: the list stays short. */
  if (st->sends->next) mpb_sends_progress(st);
  if (st->send_bytes > MPB_PENDING_MAX_BYTES) mpb_wait(L, st, mpb_sends_below_max, NULL, 0);
}

int mpb_send_quiet(mpb_state *st, int dst, int chan, const void *buf, size_t len) {
  char *copy = len <= HEADER_MAX ? malloc(len ? len : 1) : NULL;
  if (!copy) return mpb_mpi_note(st, MPI_ERR_NO_MEM, "a small send failed");
  memcpy(copy, buf, len);
  int rc = mpb_post_send(st, &st->sends, copy, len, copy, LUA_NOREF, dst, chan, st->user);
  if (rc != MPI_SUCCESS) return mpb_mpi_note(st, rc, "a small send failed");
  posted(st, dst, chan, copy, len);
  return MPI_SUCCESS;
}

/* A small message goes to MPI straight from the encoding buffer. MPI copies
** an eager message out before MPI_Isend returns, so the request is complete
** at once, and nothing is allocated or copied: no copy, no record, no test
** in the next poll (MPI_Request_get_status runs no progress on a complete
** request; MPI_Test does, in MPICH 4.0). The one MPI_Wait on a user path is
** here, on a request already complete: it cannot block. When MPI still
** reads the bytes (the peer's queue is full) the send's record, kept ready
** so that nothing can fail once the send is posted, takes the buffer over,
** and the encoder starts a new one. */
#define DIRECT_MAX 8192

static void send_direct(lua_State *L, mpb_state *st, int dst, int chan, mpb_wbuf *b) {
  if (!st->spare_send && !(st->spare_send = malloc(sizeof *st->spare_send)))
    luaL_error(L, "mp.send: " MPB_RANKFMT " out of memory", st->rank, st->size);
  size_t len = b->len;
  MPI_Request req;
  int rc = MPI_Isend_c(b->data, (MPI_Count)len, MPI_BYTE, dst, chan, st->user, &req);
  if (rc != MPI_SUCCESS) raise_send(L, st, rc, dst);
  st->bytes_sent += len;
  posted(st, dst, chan, b->data, len);
  int done = 0;
  rc = MPI_Request_get_status(req, &done, MPI_STATUS_IGNORE);
  if (done) { /* MPI_Wait only frees it; MPI_Request_free would run a whole
              ** progress pass first (MPICH 4.0) */
    if (rc != MPI_SUCCESS) mpb_mpi_note(st, rc, "a send failed");
    if ((rc = MPI_Wait(&req, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
      mpb_mpi_note(st, rc, "a send failed");
  } else { /* a failed status is seen by the record's test, in the next poll */
    size_t n;
    char *data = mpb_wbuf_steal(b, &n);
    mpb_sends_record(st, &st->sends, st->spare_send, req, data, LUA_NOREF, len, dst);
    st->spare_send = NULL;
    if (st->sends->next) mpb_sends_progress(st);
  }
  if (st->send_bytes > MPB_PENDING_MAX_BYTES) mpb_wait(L, st, mpb_sends_below_max, NULL, 0);
}

/* Scratch arrays for the part table, owned by a userdata (pushed). */
typedef struct { size_t *at, *len; const void **ptr; char *str; } parts_tab;

static parts_tab parts_alloc(lua_State *L, uint64_t n) {
  parts_tab p;
  size_t one = 2 * sizeof(size_t) + sizeof(void *) + 1;
  char *m = lua_newuserdatauv(L, n ? (size_t)n * one : 1, 0);
  p.at = (size_t *)(void *)m;
  p.len = p.at + n;
  p.ptr = (const void **)(void *)(p.len + n);
  p.str = (char *)(p.ptr + n);
  return p;
}

/* The header and the parts of b (inline bytes and segments) to dst. The
** parts anchor the table of b's user value (the arrays and strings), not b:
** the reusable buffer may be reset for the next message before they are done. */
static void send_split(lua_State *L, mpb_state *st, int dst, int chan, mpb_wbuf *b, int bidx) {
  uint64_t n = (uint64_t)b->nseg;
  parts_tab p = parts_alloc(L, n);
  for (uint64_t i = 0; i < n; i++) {
    p.at[i] = b->seg[i].at;
    p.len[i] = b->seg[i].len;
    p.ptr[i] = b->seg[i].ptr;
    p.str[i] = (char)b->seg[i].str;
  }
  uint64_t tag = next_tag(st, dst);
  size_t len;
  char *hdr = split_header(b->data, b->len, n, p.at, p.len, p.str, tag, &len);
  if (!hdr) luaL_error(L, "mp.send: " MPB_RANKFMT " out of memory", st->rank, st->size);
  int rc = mpb_post_send(st, &st->sends, hdr, len, hdr, LUA_NOREF, dst, chan, st->user);
  if (rc != MPI_SUCCESS) raise_send(L, st, rc, dst);
  posted(st, dst, chan, b->data, b->len + b->extlen); /* once: the parts are one message */
  lua_getiuservalue(L, bidx, 1);
  int anchor = luaL_ref(L, LUA_REGISTRYINDEX);
  rc = post_parts(st, dst, tag, n, p.ptr, p.len, anchor, NULL);
  luaL_unref(L, LUA_REGISTRYINDEX, anchor);
  lua_pop(L, 1); /* the table of parts */
  if (rc != MPI_SUCCESS) raise_send(L, st, rc, dst);
}

/* Every other send: in parts, to this rank, or through a copy. */
static void send_other(lua_State *L, mpb_state *st, int dst, int chan, struct mpb_wbuf *b,
                       int last, uint64_t ids[2]) {
  uint64_t mine[2];
  int wait = ids == NULL;
  if (wait) ids = mine;
  ids[0] = st->send_ids + 1;
  ids[1] = st->send_ids; /* none yet */
  if (b->nseg && dst != st->rank && st->use_mpi && st->zero_copy && b->len <= HEADER_MAX) {
    send_split(L, st, dst, chan, b, lua_gettop(L)); /* b's userdata is on top (mpb_encode_msg) */
    if (last) mpb_encode_done(st, b);
    ids[1] = st->send_ids;
    if (wait) mpb_wait(L, st, mpb_sends_gone, mine, 0);
    else if (st->send_bytes > MPB_PENDING_MAX_BYTES) mpb_wait(L, st, mpb_sends_below_max, NULL, 0);
    return;
  }
  if (dst == st->rank || !st->use_mpi) {
    send_self(L, st, chan, b, NULL, b->len + b->extlen);
    if (last) mpb_encode_done(st, b);
    return;
  }
  size_t len = b->len + b->extlen;
  char *buf;
  if (b->nseg) { /* the plain path: one flat copy (b may serve more destinations) */
    buf = malloc(len ? len : 1);
    if (buf) mpb_wbuf_flatten(b, buf);
  } else if (last && len >= (64 << 10)) { /* large: hand the bytes over, no copy */
    buf = mpb_wbuf_steal(b, &len);
  } else {
    buf = NULL;
  }
  if (last) mpb_encode_done(st, b);
  if (buf) mpb_send_bytes(L, st, dst, chan, buf, len, 1);
  else if (b->nseg || (last && len >= (64 << 10)))
    luaL_error(L, "mp.send: " MPB_RANKFMT " out of memory", st->rank, st->size);
  else mpb_send_bytes(L, st, dst, chan, b->data, b->len, 0);
  ids[1] = st->send_ids;
}

void mpb_send(lua_State *L, mpb_state *st, int dst, int chan, struct mpb_wbuf *b, int last,
              const mpb_uhdr *hdr, uint64_t ids[2]) {
  mpb_uhdr h;
  if (hdr) h = *hdr;
  else memset(&h, 0, sizeof h);
  h.task = st->task;
  memcpy(b->data, &h, sizeof h);
  if (b->nseg || !last || b->len + b->extlen > DIRECT_MAX || !st->zero_copy || dst == st->rank ||
      !st->use_mpi) {
    send_other(L, st, dst, chan, b, last, ids);
    return;
  }
  if (ids) ids[0] = st->send_ids + 1;
  mpb_encode_done(st, b);
  send_direct(L, st, dst, chan, b);
  if (ids) ids[1] = st->send_ids;
}

/* ---------------------------------------------------------- forwarding */
/* A received message is flat in its buffer, its parts in place: it goes on
** whole, or as one part when it is large. */
void mpb_msg_forward(lua_State *L, mpb_state *st, const mpb_msg *m, int dst, int chan,
                     uint64_t ids[2]) {
  ids[0] = st->send_ids + 1;
  ids[1] = st->send_ids;
  mpb_msg_check_lost(L, st, m, NULL);
  if (m->nstrs) luaL_error(L, "mp: internal error: a message forwarded without its strings");
  if (m->len > HEADER_MAX) {
    send_flat_parts(L, st, dst, chan, m->buf, m->len, NULL);
  } else {
    int rc = mpb_post_send(st, &st->sends, m->buf, m->len, NULL, LUA_NOREF, dst, chan, st->user);
    if (rc != MPI_SUCCESS) raise_send(L, st, rc, dst);
    posted(st, dst, chan, m->buf, m->len);
  }
  ids[1] = st->send_ids;
}
