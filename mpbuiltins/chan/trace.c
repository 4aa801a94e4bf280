/* SPDX-License-Identifier: MIT */
/*
** The trace recorder (chan/trace.h): the ring of events, the stack of open
** spans, the strings events name, and the message hooks. Nothing here runs
** unless st->trace is set; nothing here writes a file or talks to another
** rank (trace/ does, above tasks).
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chan/trace.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

int64_t mpb_trace_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ---------------------------------------------------------- the clock
** Events are stamped with the CPU's time-stamp counter where it is
** invariant (a constant rate, the same on every core): an ordered read costs
** less than clock_gettime (a paravirtual clock such as kvm-clock reads the
** counter and then scales it), and a send and a receive
** read the clock six times. When the recording stops, the ticks become
** nanoseconds of the monotonic clock, linearly between readings of both
** clocks at start and stop. Elsewhere the events hold nanoseconds at once. */
static int have_tsc(void) {
#ifdef HAVE_TSC
  unsigned a, b, c, d;
  return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)); /* invariant TSC */
#else
  return 0;
#endif
}

static inline int64_t ticks(const mpb_trace *t) {
#ifdef HAVE_TSC
  if (t->tsc) {
    _mm_lfence(); /* not before what precedes it: spans nest */
    return (int64_t)__rdtsc();
  }
#endif
  return mpb_trace_now();
}

/* The ring's ticks to nanoseconds (at stop). */
static void to_ns(mpb_trace *t) {
  if (!t->tsc) return;
  double scale = t->k_stop > t->k_start ? (double)(t->t_stop - t->t_start) /
                                              (double)(t->k_stop - t->k_start) : 0;
  uint64_t n = t->count < t->cap ? t->count : t->cap;
  for (uint64_t i = 0; i < n; i++) {
    mpb_tev *e = &t->ring[i];
    e->t0 = t->t_start + (int64_t)((double)(e->t0 - t->k_start) * scale + 0.5);
    e->t1 = t->t_start + (int64_t)((double)(e->t1 - t->k_start) * scale + 0.5);
  }
}

/* ---------------------------------------------------------- life cycle */
mpb_trace *mpb_trace_new(uint64_t events, int size) {
  if (events < 16) events = 16;
  if (events > ((uint64_t)1 << 40) / sizeof(mpb_tev)) return NULL;
  mpb_trace *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->cap = events;
  t->size = size;
  t->tsc = have_tsc();
  t->ring = malloc((size_t)events * sizeof *t->ring);
  t->row = calloc((size_t)MPB_TR_KINDS * (size_t)size * 2, sizeof *t->row);
  if (!t->ring || !t->row) {
    mpb_trace_free(t);
    return NULL;
  }
  return t;
}

void mpb_trace_free(mpb_trace *t) {
  if (!t) return;
  free(t->ring), free(t->row), free(t->str), free(t->off), free(t->hash);
  free(t);
}

void mpb_trace_start(mpb_state *st, mpb_trace *t) {
  t->count = 0;
  t->depth = t->over = 0;
  t->gen++;
  t->strlen = 0;
  t->nstr = 0;
  if (t->hash) memset(t->hash, 0, t->hcap * sizeof *t->hash);
  t->last_src = NULL;
  memset(t->row, 0, (size_t)MPB_TR_KINDS * (size_t)t->size * 2 * sizeof *t->row);
  t->t_start = mpb_trace_now();
  t->k_start = ticks(t);
  t->t_stop = 0;
  st->trace = t;
}

void mpb_trace_stop(mpb_state *st, mpb_trace *t) {
  if (st->trace != t) return;
  mpb_tr_close(t, 1, MPB_TRF_CUT);
  t->over = 0;
  t->gen++; /* scopes still open belong to the recording that ended */
  t->k_stop = ticks(t);
  t->t_stop = mpb_trace_now();
  to_ns(t);
  st->trace = NULL;
}

uint64_t mpb_trace_events(const mpb_trace *t, mpb_tev *out) {
  uint64_t n = t->count < t->cap ? t->count : t->cap;
  uint64_t first = t->count - n, at = first % t->cap, k = t->cap - at < n ? t->cap - at : n;
  memcpy(out, t->ring + at, (size_t)k * sizeof *out);
  memcpy(out + k, t->ring, (size_t)(n - k) * sizeof *out);
  return n;
}

/* ------------------------------------------------------------- strings */
static uint32_t hash_bytes(const char *s, size_t len) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static int grow_hash(mpb_trace *t) {
  uint32_t cap = t->hcap ? t->hcap * 2 : 256;
  uint32_t *h = calloc(cap, sizeof *h);
  if (!h) return -1;
  for (uint32_t id = 1; id <= t->nstr; id++) {
    const char *s = t->str + t->off[id - 1];
    uint32_t i = hash_bytes(s, strlen(s)) & (cap - 1);
    while (h[i]) i = (i + 1) & (cap - 1);
    h[i] = id;
  }
  free(t->hash);
  t->hash = h;
  t->hcap = cap;
  return 0;
}

uint32_t mpb_trace_string(mpb_trace *t, const char *s, size_t len) {
  if ((uint64_t)(t->nstr + 1) * 2 > t->hcap && grow_hash(t) != 0) return 0;
  uint32_t i = hash_bytes(s, len) & (t->hcap - 1);
  for (; t->hash[i]; i = (i + 1) & (t->hcap - 1)) {
    const char *o = t->str + t->off[t->hash[i] - 1];
    if (strncmp(o, s, len) == 0 && o[len] == '\0') return t->hash[i];
  }
  if (t->strlen + len + 1 > t->strcap) {
    size_t cap = (t->strcap ? t->strcap * 2 : 4096) + len + 1;
    char *p = realloc(t->str, cap);
    if (!p) return 0;
    t->str = p;
    t->strcap = cap;
  }
  if (t->nstr == t->offcap) {
    uint32_t cap = t->offcap ? t->offcap * 2 : 256;
    uint32_t *p = realloc(t->off, cap * sizeof *p);
    if (!p) return 0;
    t->off = p;
    t->offcap = cap;
  }
  memcpy(t->str + t->strlen, s, len);
  t->str[t->strlen + len] = '\0';
  t->off[t->nstr++] = (uint32_t)t->strlen;
  t->strlen += len + 1;
  t->hash[i] = t->nstr;
  return t->nstr;
}

const char *mpb_trace_str(const mpb_trace *t, uint32_t id) {
  return id >= 1 && id <= t->nstr ? t->str + t->off[id - 1] : "";
}

/* ------------------------------------------------------------ the ring */
static mpb_tev *slot(mpb_trace *t) {
  return &t->ring[t->count++ % t->cap];
}

/* Where the user's Lua called the function running at level 0 (the C
** function that began the span): the first level from 1 up that is neither
** a C function (pcall, mp.trace.region) nor the runtime's own Lua (chunks
** named "=mp....": mp.mpi's collectives over mp's, mp.pmap's glue), so a
** span begun inside them is placed at the user's line that called them. */
#define WHERE_DEPTH 12
static void where(lua_State *L, mpb_trace *t, mpb_tev *e) {
  lua_Debug ar;
  e->src = e->line = 0;
  if (!L || !t->lines) return;
  int found = 0;
  for (int level = 1; level <= WHERE_DEPTH && !found; level++) {
    if (!lua_getstack(L, level, &ar) || !lua_getinfo(L, "Sl", &ar)) return;
    found = ar.currentline >= 0 && strncmp(ar.source, "=mp.", 4) != 0;
  }
  if (!found) return;
  e->line = (uint32_t)ar.currentline;
  if (ar.source != t->last_src || strcmp(ar.short_src, mpb_trace_str(t, t->last_src_id)) != 0) {
    t->last_src = ar.source; /* the cache holds one source: loops call from one */
    t->last_src_id = mpb_trace_string(t, ar.short_src, strlen(ar.short_src));
  }
  e->src = t->last_src_id;
}

/* Close the open spans from level up (1-based) at now: the one at level
** with flags, those above it with inner (an error left them open). */
static void close_from(mpb_trace *t, int level, int flags, int inner, int64_t now) {
  while (t->depth >= level) {
    mpb_tev *o = &t->open[--t->depth];
    o->t1 = now;
    o->sub2 = (uint8_t)(o->sub2 | (t->depth + 1 > level ? inner : flags));
    *slot(t) = *o;
    if (t->depth > 0) t->open[t->depth - 1].bytes += o->bytes;
  }
}

int mpb_tr_begin(lua_State *L, mpb_trace *t, int type, int sub, int peer, uint32_t a, uint32_t b) {
  int64_t now = ticks(t);
  if (t->depth > 0 && MPB_TR_LEAF(t->open[t->depth - 1].type)) /* an error left it */
    close_from(t, t->depth, MPB_TRF_UNWOUND, MPB_TRF_UNWOUND, now);
  if (type == MPB_TR_RESYNC) /* the abort unwound whatever the task had open */
    for (int d = t->depth; d > 0; d--)
      if (t->open[d - 1].type == MPB_TR_TASK) {
        close_from(t, d + 1, MPB_TRF_UNWOUND, MPB_TRF_UNWOUND, now);
        break;
      }
  if (t->depth == MPB_TR_DEPTH) {
    t->over++;
    return 0;
  }
  mpb_tev *e = &t->open[t->depth];
  e->t0 = now;
  e->t1 = now;
  e->bytes = 0;
  e->peer = peer;
  e->a = a;
  e->b = b;
  e->type = (uint8_t)type;
  e->sub = (uint8_t)sub;
  e->sub2 = 0;
  e->depth = (uint8_t)t->depth;
  where(L, t, e);
  return ++t->depth;
}

void mpb_tr_close(mpb_trace *t, int level, int flags) {
  if (level > t->depth) return; /* already closed (a resync, or stop) */
  close_from(t, level, flags, flags ? flags : MPB_TRF_UNWOUND, ticks(t));
}

void mpb_tr_mark(lua_State *L, mpb_trace *t, uint32_t name) {
  mpb_tev *e = slot(t);
  memset(e, 0, sizeof *e);
  e->t0 = e->t1 = ticks(t);
  e->type = MPB_TR_MARK;
  e->peer = -1;
  e->a = name;
  e->depth = (uint8_t)t->depth;
  where(L, t, e);
}

/* ------------------------------------------------------------ messages */
/* An instant for a message, and its bytes and peer to the span around it. */
static void message(mpb_trace *t, int type, int peer, int chan, int kind, uint32_t k,
                    uint32_t epoch, size_t len) {
  mpb_tev *e = slot(t);
  e->t0 = e->t1 = ticks(t);
  e->bytes = len;
  e->peer = peer;
  e->src = e->line = 0;
  e->a = k;
  e->b = epoch;
  e->type = (uint8_t)type;
  e->sub = (uint8_t)chan;
  e->sub2 = (uint8_t)kind;
  e->depth = (uint8_t)t->depth;
  if (t->depth > 0) {
    mpb_tev *o = &t->open[t->depth - 1];
    o->bytes += len;
    if (o->type == MPB_TR_COLL || o->type == MPB_TR_DIST) return; /* peer: root, peers */
    if (o->peer == -1) o->peer = peer;
    else if (o->peer != peer) o->peer = -2;
  }
}

/* The kind of a message: its channel, or the collective it belongs to (a
** transpose's or a halo's messages are collective messages on MPB_CH_DIST;
** a root check's has bit 7 of its kind set, coll.c). */
static int kind_of(int chan, const void *msg, size_t len) {
  if ((chan != MPB_CH_COLL && chan != MPB_CH_DIST) || len < sizeof(mpb_uhdr)) return 0;
  mpb_uhdr h;
  memcpy(&h, msg, sizeof h);
  return (int)(h.flags & 0x7f) < MPB_TR_NCOLL ? (int)(h.flags & 0x7f) : 0;
}

void mpb_tr_sent(mpb_state *st, int dst, int chan, const void *msg, size_t len) {
  mpb_trace *t = st->trace;
  int kind = kind_of(chan, msg, len);
  size_t body = len >= sizeof(mpb_uhdr) ? len - sizeof(mpb_uhdr) : 0;
  message(t, MPB_TR_OUT, dst, chan, kind, (uint32_t)st->sent_to[dst], (uint32_t)st->naborts,
          body);
  uint64_t *r = &t->row[2 * ((size_t)(kind ? MPB_NCHAN + kind : chan) * (size_t)t->size +
                             (size_t)dst)];
  r[0]++;
  r[1] += body;
}

void mpb_tr_taken(mpb_state *st, mpb_msg *m) {
  uint32_t k = m->tk;
  m->tk = 0;
  if (!st->trace) return;
  size_t body = m->len >= sizeof(mpb_uhdr) ? m->len - sizeof(mpb_uhdr) : 0;
  message(st->trace, MPB_TR_IN, m->src, m->chan, kind_of(m->chan, m->buf, m->len), k,
          (uint32_t)st->naborts, body);
}
