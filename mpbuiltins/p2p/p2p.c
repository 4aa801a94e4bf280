/*
** Point-to-point messages: mp.send, mp.recv, mp.probe, and the machinery the
** tree operations and collectives share (per-channel, per-sender inboxes).
**
** mp.send hands an encoded copy to MPI (MPI_Isend) and returns: the sender
** may change its tables at once, and while any rank waits it keeps receiving
** into its inboxes, so symmetric exchanges never deadlock. Typed arrays of
** MPB_WIRE_EXTMIN bytes or more are sent in place (no copy) and the send
** waits for completion, since the caller may write the array afterwards.
*/
#include <stdlib.h>
#include <string.h>

#include "chan/chan.h"
#include "wire/wire.h"

/* -------------------------------------------------------------- queues */
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

void mpb_msg_free(mpb_msg *m) {
  if (!m) return;
  if (m->adopt) {
    for (int i = 0; i < m->adopt->n; i++) free(m->adopt->s[i].block);
    free(m->adopt);
  }
  free(m);
}

void mpb_queue_clear(mpb_queue *q) {
  mpb_msg *m;
  while ((m = mpb_queue_pop(q))) mpb_msg_free(m);
}

mpb_queue *mpb_inbox(mpb_state *st, int chan, int src) {
  return &st->inbox[chan * st->size + src];
}

static int64_t msg_task(const mpb_msg *m) {
  mpb_uhdr h;
  memcpy(&h, m->buf, sizeof h);
  return h.task;
}

void mpb_user_arrived(mpb_state *st, mpb_msg *m) {
  st->recvd_from[m->src]++;
  if (m->len < sizeof(mpb_uhdr) || m->chan < 0 || m->chan >= MPB_NCHAN ||
      msg_task(m) < st->task) {
    if (m->chan == MPB_CH_USER) st->dropped++;
    mpb_msg_free(m);
    return;
  }
  m->seq = ++st->seq;
  if (st->posted && mpb_req_arrived(st, m)) return; /* a posted irecv takes it */
  if (m->chan == MPB_CH_USER) st->user_arrivals++;
  mpb_queue_push(mpb_inbox(st, m->chan, m->src), m);
}

void mpb_inbox_clear(mpb_state *st, int all) {
  for (int i = 0; i < st->size * MPB_NCHAN; i++) {
    mpb_queue *q = &st->inbox[i], keep = {NULL, NULL};
    mpb_msg *m;
    while ((m = mpb_queue_pop(q))) {
      if (!all && msg_task(m) >= st->task) {
        mpb_queue_push(&keep, m);
      } else {
        if (i < st->size) st->dropped++; /* MPB_CH_USER == 0 */
        mpb_msg_free(m);
      }
    }
    *q = keep;
  }
}

/* -------------------------------------------------------------- checks */
void mpb_check_rank(lua_State *L, mpb_state *st, int arg, lua_Integer r,
                    const char *fname) {
  if (r < 0 || r >= st->size)
    luaL_error(L, "bad argument #%d to 'mp.%s' ([rank %d/%d] rank %I out of range 0..%d)",
               arg, fname, st->rank, st->size, (LUAI_UACINT)r, st->size - 1);
}

void mpb_check_task(lua_State *L, mpb_state *st, const char *fname) {
  mpb_check_abort(L, st);
  if (!st->in_task)
    luaL_error(L, "mp.%s: [rank %d/%d] not inside a parallel task (start one with mp.exec)",
               fname, st->rank, st->size);
}

/* ------------------------------------------------------------- sending */
/* Encoding reuses one buffer per rank (allocating a collectable buffer per
** message costs more than encoding a small one); a nested use while it holds
** a message (a __gc handler that sends) gets a fresh buffer. */
struct mpb_wbuf *mpb_encode_msg(lua_State *L, int first, int n, const char *fname,
                                int arg, size_t hdrlen) {
  char err[MPB_ERRLEN];
  mpb_state *st = mpb_get(L);
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
  int bidx = lua_gettop(L);
  if (!mpb_wbuf_reserve(b, hdrlen)) luaL_error(L, "mp.%s: out of memory", fname);
  b->len += hdrlen;
  if (mpb_wire_encode(L, first, n, b, bidx, err, sizeof err) != 0) {
    mpb_encode_done(st, b);
    if (arg > 0)
      luaL_error(L, "bad argument #%d to 'mp.%s' ([rank %d/%d] %s)", arg, fname, st->rank,
                 st->size, err);
    luaL_error(L, "mp.%s: [rank %d/%d] %s", fname, st->rank, st->size, err);
  }
  return b;
}

void mpb_encode_done(mpb_state *st, struct mpb_wbuf *b) {
  if (b == st->wscratch) st->wbusy = 0;
}

static int below_max(mpb_state *st, void *ud) {
  (void)ud;
  return st->send_bytes <= MPB_PENDING_MAX_BYTES;
}

int mpb_sends_gone(mpb_state *st, void *ud) {
  const uint64_t *ids = ud;
  for (mpb_send *s = st->sends; s; s = s->next)
    if (s->id >= ids[0] && s->id <= ids[1]) return 0;
  return 1;
}

int mpb_sends_done(mpb_state *st, void *ud) {
  (void)ud;
  return st->sends == NULL;
}

static void push_send(mpb_state *st, mpb_send *s) {
  s->next = st->sends;
  st->sends = s;
  st->send_bytes += s->len;
  st->sent_to[s->dst]++;
}

/* Zero-copy path. A message with external segments (large arrays and
** strings) goes as one message holding the inline bytes plus a table of
** where the segments go, followed by each segment as a contiguous message of
** its own on the same tag: MPI's ordering keeps them together, and contiguous
** buffers get UCX's zero-copy rendezvous (a noncontiguous datatype is packed
** in fragments instead, several times slower). The receiver lands each
** segment directly in place (mpb_user_unsplit). */
#define SEG_STR ((uint64_t)1 << 63) /* in a part's length: the bytes of a string */

static void send_segments(lua_State *L, mpb_state *st, int dst, int chan,
                          mpb_wbuf *b, int bidx) {
  /* the parts anchor the table that anchors the arrays and strings, not b:
  ** the reusable buffer may be reset for the next message before they are
  ** done (nonblocking sends) */
  lua_getiuservalue(L, bidx, 1);
  int aidx = lua_gettop(L);
  size_t tab = (size_t)b->nseg * 2 * sizeof(uint64_t) + sizeof(uint64_t);
  size_t len = b->len + tab;
  mpb_send *s = malloc(sizeof *s);
  char *buf = malloc(len);
  if (!s || !buf) {
    free(s), free(buf);
    luaL_error(L, "mp.send: out of memory");
    return;
  }
  memcpy(buf, b->data, b->len);
  mpb_uhdr h;
  memcpy(&h, buf, sizeof h);
  h.flags |= MPB_UF_SPLIT;
  memcpy(buf, &h, sizeof h);
  uint64_t *t = (uint64_t *)(void *)(buf + b->len), nseg = (uint64_t)b->nseg;
  for (int i = 0; i < b->nseg; i++) {
    uint64_t at = b->seg[i].at, sl = b->seg[i].len | (b->seg[i].str ? SEG_STR : 0);
    memcpy(&t[2 * i], &at, sizeof at);
    memcpy(&t[2 * i + 1], &sl, sizeof sl);
  }
  memcpy(buf + len - sizeof nseg, &nseg, sizeof nseg);
  s->buf = buf;
  s->ref = LUA_NOREF;
  s->len = len;
  s->dst = dst;
  s->id = ++st->send_ids;
  MPI_Isend(buf, (int)len, MPI_BYTE, dst, chan, st->user, &s->req);
  st->bytes_sent += len;
  push_send(st, s); /* counted once: the parts are one message */
  for (int i = 0; i < b->nseg; i++) {
    mpb_send *p = malloc(sizeof *p);
    if (!p) luaL_error(L, "mp.send: out of memory"); /* sent parts keep theirs anchored */
    p->buf = NULL;
    p->len = b->seg[i].len;
    p->dst = dst;
    p->id = ++st->send_ids;
    lua_pushvalue(L, aidx);
    p->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    MPI_Isend(b->seg[i].ptr, (int)b->seg[i].len, MPI_BYTE, dst, chan, st->user, &p->req);
    st->bytes_sent += p->len;
    p->next = st->sends;
    st->sends = p;
    st->send_bytes += p->len;
  }
  lua_pop(L, 1);
}

mpb_msg *mpb_user_unsplit(mpb_state *st, mpb_msg *m) {
  uint64_t nseg, total = 0;
  if (m->len < sizeof(mpb_uhdr) + sizeof nseg) return m; /* malformed: dropped later */
  memcpy(&nseg, m->buf + m->len - sizeof nseg, sizeof nseg);
  size_t tab = (size_t)nseg * 2 * sizeof(uint64_t) + sizeof nseg;
  if (nseg > (1u << 20) || tab > m->len - sizeof(mpb_uhdr)) return m;
  size_t inl = m->len - tab;
  const char *t = m->buf + inl;
  int nstr = 0;
  for (uint64_t i = 0; i < nseg; i++) {
    uint64_t sl;
    memcpy(&sl, t + 16 * i + 8, sizeof sl);
    nstr += (sl & SEG_STR) != 0;
    total += sl & ~SEG_STR;
  }
  mpb_msg *w = malloc(sizeof *w + inl + total);
  if (!w) {
    fprintf(stderr, "mplua: [rank %d] out of memory receiving %llu bytes\n", st->rank,
            (unsigned long long)(inl + total));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  *w = *m;
  w->len = inl + total;
  w->adopt = NULL;
  if (nstr && st->stroff) {
    w->adopt = malloc(sizeof *w->adopt + (size_t)nstr * sizeof w->adopt->s[0]);
    if (w->adopt) w->adopt->n = 0;
  }
  size_t from = 0, to = 0;
  for (uint64_t i = 0; i <= nseg; i++) {
    uint64_t at = inl, sl = 0;
    int str = 0;
    if (i < nseg) {
      memcpy(&at, t + 16 * i, sizeof at);
      memcpy(&sl, t + 16 * i + 8, sizeof sl);
      str = (sl & SEG_STR) != 0;
      sl &= ~SEG_STR;
    }
    if (at > inl || at < from) at = from; /* malformed table: keep going safely */
    memcpy(w->buf + to, m->buf + from, at - from);
    to += at - from;
    from = at;
    if (sl) { /* posted by the sender before it waits: this completes */
      char *into = w->buf + to;
      void *block = str && w->adopt ? mpb_adopt_block(st, sl) : NULL;
      if (block) { /* a long string lands where Lua can adopt it */
        into = (char *)block + st->stroff;
        int k = w->adopt->n++;
        w->adopt->s[k].pos = to;
        w->adopt->s[k].len = sl;
        w->adopt->s[k].block = block;
      }
      MPI_Recv(into, (int)sl, MPI_BYTE, m->src, m->chan, st->user, MPI_STATUS_IGNORE);
      st->bytes_recv += sl;
      to += sl;
    }
  }
  mpb_uhdr h;
  memcpy(&h, w->buf, sizeof h);
  h.flags &= ~MPB_UF_SPLIT;
  memcpy(w->buf, &h, sizeof h);
  free(m);
  return w;
}

/* Send len bytes (a whole message, header first) to dst on chan. Takes buf
** (malloc'ed) when own, else copies it. */
void mpb_user_send_bytes(lua_State *L, mpb_state *st, int dst, int chan, char *buf,
                         size_t len, int own) {
  if (dst == st->rank || !st->use_mpi) {
    mpb_msg *m = malloc(sizeof *m + len);
    if (m) m->adopt = NULL;
    if (!m) {
      if (own) free(buf);
      luaL_error(L, "mp: out of memory");
      return;
    }
    memcpy(m->buf, buf, len);
    if (own) free(buf);
    m->src = st->rank;
    m->chan = chan;
    m->len = len;
    st->sent_to[dst]++;
    mpb_user_arrived(st, m);
    return;
  }
  mpb_send *s = malloc(sizeof *s);
  char *copy = own ? buf : malloc(len ? len : 1);
  if (!s || !copy) {
    free(s);
    free(copy);
    luaL_error(L, "mp: out of memory");
  }
  if (!own) memcpy(copy, buf, len);
  s->buf = copy;
  s->ref = LUA_NOREF;
  s->len = len;
  s->dst = dst;
  s->id = ++st->send_ids;
  MPI_Isend(copy, (int)len, MPI_BYTE, dst, chan, st->user, &s->req);
  st->bytes_sent += len;
  push_send(st, s);
  int done; /* one test makes MPI push an eager message out now */
  MPI_Test(&s->req, &done, MPI_STATUS_IGNORE);
  if (st->send_bytes > MPB_PENDING_MAX_BYTES) mpb_wait(L, st, below_max, NULL, 0);
}

void mpb_user_send(lua_State *L, mpb_state *st, int dst, int chan, struct mpb_wbuf *b,
                   int last) {
  mpb_user_send_hdr(L, st, dst, chan, b, last, 0, 0);
}

/* ids: NULL to wait until MPI is done with the zero-copy parts (mp.send),
** else where the range of send ids made here goes (nonblocking sends). */
static void send_msg(lua_State *L, mpb_state *st, int dst, int chan, struct mpb_wbuf *b,
                     int last, uint32_t comm, uint32_t flags, uint64_t *ids) {
  int bidx = lua_gettop(L); /* b's userdata is on top (mpb_encode_msg) */
  mpb_uhdr h = {st->task, comm, flags};
  memcpy(b->data, &h, sizeof h);
  uint64_t mine[2] = {st->send_ids + 1, st->send_ids}; /* none yet */
  if (!ids) ids = mine;
  ids[0] = mine[0], ids[1] = mine[1];
  if (b->nseg) {
    if (dst != st->rank && st->use_mpi) {
      send_segments(L, st, dst, chan, b, bidx);
      if (last) mpb_encode_done(st, b);
      ids[1] = st->send_ids;
      if (ids == mine) mpb_wait(L, st, mpb_sends_gone, mine, 0);
      return;
    }
    size_t total = b->len + b->extlen;
    char *flat = malloc(total);
    if (!flat) luaL_error(L, "mp: out of memory");
    mpb_wbuf_flatten(b, flat);
    if (last) mpb_encode_done(st, b);
    mpb_user_send_bytes(L, st, dst, chan, flat, total, 1);
    return;
  }
  if (last) mpb_encode_done(st, b); /* the bytes are copied or taken below */
  if (last && b->len >= (64 << 10)) { /* large: hand the bytes over, no copy */
    size_t len;
    char *buf = mpb_wbuf_steal(b, &len);
    mpb_user_send_bytes(L, st, dst, chan, buf, len, 1);
  } else {
    mpb_user_send_bytes(L, st, dst, chan, b->data, b->len, 0);
  }
  ids[1] = st->send_ids;
}

void mpb_user_send_hdr(lua_State *L, mpb_state *st, int dst, int chan, struct mpb_wbuf *b,
                       int last, uint32_t comm, uint32_t flags) {
  send_msg(L, st, dst, chan, b, last, comm, flags, NULL);
}

void mpb_user_isend_hdr(lua_State *L, mpb_state *st, int dst, int chan, struct mpb_wbuf *b,
                        int last, uint32_t comm, uint32_t flags, uint64_t ids[2]) {
  send_msg(L, st, dst, chan, b, last, comm, flags, ids);
}

/* ----------------------------------------------------------- receiving */
typedef struct { int chan, src; } take_arg;

static mpb_queue *oldest(mpb_state *st, int chan, int src) {
  if (src >= 0) {
    mpb_queue *q = mpb_inbox(st, chan, src);
    return q->head ? q : NULL;
  }
  mpb_queue *best = NULL;
  for (int r = 0; r < st->size; r++) {
    mpb_queue *q = mpb_inbox(st, chan, r);
    if (q->head && (!best || q->head->seq < best->head->seq)) best = q;
  }
  return best;
}

static int have_msg(mpb_state *st, void *ud) {
  take_arg *a = ud;
  return oldest(st, a->chan, a->src) != NULL;
}

mpb_msg *mpb_user_take(lua_State *L, mpb_state *st, int chan, int src, const char *fname) {
  take_arg a = {chan, src};
  if (!oldest(st, chan, src)) {
    mpb_poll(st);
    if (!oldest(st, chan, src)) {
      if (src == st->rank || st->size == 1)
        luaL_error(L, "mp.%s: [rank %d/%d] would wait forever: no message from %s is queued",
                   fname, st->rank, st->size, src < 0 ? "any rank" : "itself");
      mpb_wait(L, st, have_msg, &a, 0);
    }
  }
  mpb_msg *m = mpb_queue_pop(oldest(st, chan, src));
  if (chan == MPB_CH_USER) st->user_taken++;
  return m;
}

typedef struct { mpb_msg *m; } blob;

static int blob_gc(lua_State *L) {
  blob *b = lua_touserdata(L, 1);
  mpb_msg_free(b->m);
  b->m = NULL;
  return 0;
}

/* Small messages are decoded from a per-rank buffer (copying their few
** arrays) so that no collectable owner is made per message; large ones are
** owned by a blob userdata, and their arrays are views into it (no copy). */
#define SMALL_MSG 4096

int mpb_push_msg(lua_State *L, mpb_state *st, mpb_msg *m, const char *fname) {
  char err[MPB_ERRLEN];
  size_t len = m->len - sizeof(mpb_uhdr);
  if (len <= SMALL_MSG && !st->rbusy) {
    memcpy(st->rbuf, m->buf + sizeof(mpb_uhdr), len);
    int src = m->src;
    mpb_msg_free(m);
    st->rbusy = 1; /* a __gc handler that receives meanwhile takes the other path */
    int n = mpb_wire_decode(L, st->rbuf, len, 0, err, sizeof err);
    st->rbusy = 0;
    if (n < 0)
      luaL_error(L, "mp.%s: [rank %d/%d] malformed message from rank %d: %s", fname,
                 st->rank, st->size, src, err);
    return n;
  }
  blob *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->m = NULL; /* inert until it owns m */
  if (luaL_newmetatable(L, "mp.Blob")) {
    lua_pushcfunction(L, blob_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  b->m = m;
  /* Lua cannot see the bytes a blob holds: collect as if it allocated them,
  ** so the blobs of many large messages do not pile up between cycles */
  if (len >= (256 << 10)) lua_gc(L, LUA_GCSTEP, (int)(len >> 10));
  int bidx = lua_gettop(L);
  int n = mpb_adopt_decode(L, st, m, m->buf + sizeof(mpb_uhdr), len, bidx, err, sizeof err);
  if (n < 0)
    luaL_error(L, "mp.%s: [rank %d/%d] malformed message from rank %d: %s", fname,
               st->rank, st->size, m->src, err);
  lua_remove(L, bidx); /* views into it keep it alive */
  return n;
}

/* ------------------------------------------------------------ Lua API */
static int send(lua_State *L) {
  mpb_state *st = mpb_get(L);
  int n = lua_gettop(L) - 1;
  mpb_check_task(L, st, "send");
  if (lua_istable(L, 1)) {
    lua_Integer nd = luaL_len(L, 1);
    for (lua_Integer i = 1; i <= nd; i++) {
      lua_geti(L, 1, i);
      int ok;
      lua_Integer r = lua_tointegerx(L, -1, &ok);
      if (!ok) luaL_error(L, "bad argument #1 to 'mp.send' (rank list item %I is not an integer)", (LUAI_UACINT)i);
      mpb_check_rank(L, st, 1, r, "send");
      lua_pop(L, 1);
    }
    mpb_wbuf *b = mpb_encode_msg(L, 2, n, "send", 2, sizeof(mpb_uhdr));
    for (lua_Integer i = 1; i <= nd; i++) {
      lua_geti(L, 1, i);
      int r = (int)lua_tointeger(L, -1);
      lua_pop(L, 1);
      mpb_user_send(L, st, r, MPB_CH_USER, b, i == nd);
      st->user_sent++;
    }
    return 0;
  }
  lua_Integer r = luaL_checkinteger(L, 1);
  mpb_check_rank(L, st, 1, r, "send");
  mpb_wbuf *b = mpb_encode_msg(L, 2, n, "send", 2, sizeof(mpb_uhdr));
  mpb_user_send(L, st, (int)r, MPB_CH_USER, b, 1);
  st->user_sent++;
  return 0;
}

static int recv(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_check_task(L, st, "recv");
  int src = -1;
  if (!lua_isnoneornil(L, 1)) {
    lua_Integer r = luaL_checkinteger(L, 1);
    mpb_check_rank(L, st, 1, r, "recv");
    src = (int)r;
  }
  lua_settop(L, 0);
  mpb_msg *m = mpb_user_take(L, st, MPB_CH_USER, src, "recv");
  if (src < 0) lua_pushinteger(L, m->src);
  return mpb_push_msg(L, st, m, "recv") + (src < 0);
}

typedef struct { uint64_t since; } probe_arg;

static int any_queued(mpb_state *st, void *ud) {
  (void)ud;
  return oldest(st, MPB_CH_USER, -1) != NULL;
}

static int new_arrival(mpb_state *st, void *ud) {
  return st->user_arrivals > ((probe_arg *)ud)->since;
}

static int probe(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_Integer mode = luaL_optinteger(L, 1, 0);
  luaL_argcheck(L, mode >= 0 && mode <= 2, 1, "mode must be 0, 1 or 2");
  mpb_check_task(L, st, "probe");
  probe_arg a = {st->user_arrivals};
  mpb_poll(st);
  if (mode == 1 && !any_queued(st, NULL)) {
    if (st->size == 1) luaL_error(L, "mp.probe: [rank 0/1] would wait forever: nothing can arrive");
    mpb_wait(L, st, any_queued, NULL, 0);
  } else if (mode == 2 && !new_arrival(st, &a)) {
    if (st->size == 1) luaL_error(L, "mp.probe: [rank 0/1] would wait forever: nothing can arrive");
    mpb_wait(L, st, new_arrival, &a, 0);
  }
  lua_newtable(L);
  int k = 0;
  for (int r = 0; r < st->size; r++)
    if (mpb_inbox(st, MPB_CH_USER, r)->head) {
      lua_pushinteger(L, r);
      lua_rawseti(L, -2, ++k);
    }
  return 1;
}

void mpb_open_p2p(lua_State *L) {
  static const luaL_Reg funcs[] = {{"send", send}, {"recv", recv}, {"probe", probe}, {NULL, NULL}};
  luaL_setfuncs(L, funcs, 0);
}
