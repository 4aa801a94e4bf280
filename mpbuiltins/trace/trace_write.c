/* SPDX-License-Identifier: MIT */
/*
** Writing a recording (trace/tracer.h): rank 0 turns the blobs every rank
** shipped into Chrome/Perfetto trace-event JSON, one event per line:
**   - "M" events name each process "rank N" (pid = rank, tid 0);
**   - each span is a complete "X" event (spans nest: the recorder keeps a
**     stack), with args peer, bytes, seq, source line; a transpose, halo
**     exchange or neighbourhood collective has its kind as name and category,
**     and args peers (a count), method and nonblocking (start or wait);
**   - each message is a zero-length "X" at its send ("out") and at its
**     receive ("in"), and a flow ("s" at the send, "f" with "bp":"e" at the
**     receive) joins them when both ends are in the rings;
**   - "M" events named "mplua_row" carry the exact communication matrix
**     (viewers ignore metadata they do not know; the report reads them).
** Clocks are aligned with the offsets measured at start and stop, linear
** in between.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/xchg.h"
#include "trace/tracer.h"

_Static_assert(MPB_NCOLL <= MPB_TR_NCOLL, "the recorder has a row per collective kind");

/* A collective's name ("coll": one of unknown kind). */
static const char *coll_name(int kind) {
  return kind > 0 && kind < MPB_NCOLL ? mpb_coll_kind_name(kind) : "coll";
}

/* The matrix kind of a message (its channel, or its collective's kind). */
static int kind_of_msg(const mpb_tev *e) {
  return mpb_trk_of(e->sub == MPB_CH_COLL || e->sub == MPB_CH_DIST ? MPB_NCHAN + e->sub2 : e->sub);
}

int mpb_trk_of(int raw) {
  if (raw >= MPB_NCHAN) {
    int c = raw - MPB_NCHAN;
    return c > 0 && c < MPB_NCOLL ? MPB_TRK_COLL0 + c : MPB_TRK_COLL0;
  }
  switch (raw) {
    case MPB_CH_USER: case MPB_CH_CUSER: return MPB_TRK_P2P;
    case MPB_CH_HANDOUT: case MPB_CH_HANDIN: case MPB_CH_MAP: return MPB_TRK_MAP;
    case MPB_CH_POOL: return MPB_TRK_POOL;
    case MPB_CH_COLL: return MPB_TRK_COLL0;
    default: return MPB_TRK_OTHER;
  }
}

const char *mpb_trk_name(int k) {
  static const char *const low[] = {"p2p", "map", "pool", "other"};
  if (k >= 0 && k < MPB_TRK_COLL0) return low[k];
  if (k >= MPB_TRK_COLL0 && k < MPB_TRK_N) return coll_name(k - MPB_TRK_COLL0);
  return NULL;
}

/* The collectives of coll/ (and "coll"); a transpose, a halo exchange or a
** neighbourhood collective is a kind of its own. */
int mpb_trk_is_coll(int k) { return k >= MPB_TRK_COLL0 && k <= MPB_TRK_COLL0 + MPB_COLL_DUP; }

/* ------------------------------------------------------------- a rank */
typedef struct rank_data {
  mpb_tr_blob h;
  const mpb_tev *ev;   /* unaligned copies are read with memcpy */
  const char *strs;    /* strings, NUL-ended, ids 1.. */
  const char **str;    /* [nids + 1] */
  uint32_t nids;
  const uint64_t *row; /* [MPB_TR_KINDS][size][2] */
  double os, oe;       /* offsets, ns */
} rank_data;

static int parse(rank_data *d, const char *p, size_t len, int size) {
  if (len < sizeof d->h) return -1;
  memcpy(&d->h, p, sizeof d->h);
  size_t need = sizeof d->h + d->h.nev * sizeof(mpb_tev) + d->h.nstr +
                (size_t)MPB_TR_KINDS * (size_t)size * 2 * sizeof(uint64_t);
  if (d->h.size != size || need != len) return -1;
  d->ev = (const mpb_tev *)(p + sizeof d->h);
  d->strs = p + sizeof d->h + d->h.nev * sizeof(mpb_tev);
  d->row = (const uint64_t *)(d->strs + d->h.nstr);
  d->nids = 0;
  for (uint64_t i = 0; i < d->h.nstr; i++) d->nids += d->strs[i] == '\0';
  d->str = malloc((d->nids + 1) * sizeof *d->str);
  if (!d->str) return -1;
  d->str[0] = "";
  const char *s = d->strs;
  for (uint32_t i = 1; i <= d->nids; i++) d->str[i] = s, s += strlen(s) + 1;
  return 0;
}

static const char *str_of(const rank_data *d, uint32_t id) { return id <= d->nids ? d->str[id] : ""; }

/* ------------------------------------------------------------- flows */
typedef struct fkey { uint32_t src, dst, epoch, k; } fkey;
typedef struct flows { fkey *key; uint8_t *seen; uint64_t cap; } flows;

static uint64_t fhash(const fkey *k) {
  uint64_t h = ((uint64_t)k->src * 0x9E3779B97F4A7C15u) ^ ((uint64_t)k->dst * 0xC2B2AE3D27D4EB4Fu) ^
               ((uint64_t)k->epoch * 0x165667B19E3779F9u) ^ ((uint64_t)k->k * 0x27D4EB2F165667C5u);
  return h ^ (h >> 29);
}

/* The slot of k (1-based: 0 is empty), inserting it when add. */
static uint64_t flow_at(flows *f, const fkey *k, int add) {
  for (uint64_t i = fhash(k) & (f->cap - 1);; i = (i + 1) & (f->cap - 1)) {
    if (!f->seen[i]) {
      if (!add) return 0;
      f->key[i] = *k, f->seen[i] = 1;
      return i + 1;
    }
    if (!memcmp(&f->key[i], k, sizeof *k)) return i + 1;
  }
}

static fkey key_of(const mpb_tev *e, int rank) {
  fkey k = {(uint32_t)(e->type == MPB_TR_OUT ? rank : e->peer),
            (uint32_t)(e->type == MPB_TR_OUT ? e->peer : rank), e->b, e->a};
  return k;
}

/* ------------------------------------------------------------- output */
/* The events are many (65 536 per rank by default): they are formatted by
** hand into a buffer, several times faster than fprintf. */
typedef struct jb {
  FILE *f;
  char *p;
  char buf[1 << 16];
} jb;

static void jb_flush(jb *b) {
  fwrite(b->buf, 1, (size_t)(b->p - b->buf), b->f);
  b->p = b->buf;
}

static void jb_room(jb *b, size_t n) {
  if ((size_t)(b->buf + sizeof b->buf - b->p) < n) jb_flush(b);
}

#define JB_LIT(b, s) jb_lit(b, s, sizeof s - 1)
static void jb_lit(jb *b, const char *s, size_t n) {
  jb_room(b, n);
  memcpy(b->p, s, n);
  b->p += n;
}

static void jb_u64(jb *b, uint64_t v) {
  char t[24];
  int n = 0;
  do t[n++] = (char)('0' + v % 10), v /= 10; while (v);
  jb_room(b, 24);
  while (n) *b->p++ = t[--n];
}

static void jb_i64(jb *b, int64_t v) {
  if (v < 0) JB_LIT(b, "-"), v = -v;
  jb_u64(b, (uint64_t)v);
}

/* v with three decimals (microseconds to the nanosecond) */
static void jb_fix3(jb *b, double v) {
  int64_t m = (int64_t)(v * 1000 + (v < 0 ? -0.5 : 0.5));
  if (m < 0) JB_LIT(b, "-"), m = -m;
  jb_u64(b, (uint64_t)(m / 1000));
  int64_t fr = m % 1000;
  jb_room(b, 4);
  *b->p++ = '.';
  *b->p++ = (char)('0' + fr / 100);
  *b->p++ = (char)('0' + fr / 10 % 10);
  *b->p++ = (char)('0' + fr % 10);
}

/* The length of the UTF-8 sequence at s (1..4), or 0 when it is not one
** (a stray or missing continuation byte, an overlong form, a surrogate,
** beyond U+10FFFF). s ends with a NUL, which is never a continuation. */
static int utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  int n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
        : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) || (c == 0xF0 && s[1] < 0x90) ||
      (c == 0xF4 && s[1] > 0x8F))
    return 0;
  return n;
}

/* A JSON string of s: valid UTF-8 as it is, control characters as
** \u00XX, and each byte that is not UTF-8 as the text \xHH (JSON holds no
** bytes: the name stays whole and readable, valid where it was). A user's
** region or mark name arrives with NUL as C0 80 and a byte C0 as C0 C0
** (MPB_TRACE_ESC, trace_api.c): they come out as \u0000 and \xc0. */
static void jb_str(jb *b, const char *s) {
  JB_LIT(b, "\"");
  const unsigned char *u = (const unsigned char *)s;
  while (*u) {
    unsigned c = *u;
    int n = utf8_len(u);
    jb_room(b, 8);
    if (c == MPB_TRACE_ESC && (u[1] == 0x80 || u[1] == MPB_TRACE_ESC)) {
      b->p += u[1] == 0x80 ? snprintf(b->p, 8, "\\u0000") : snprintf(b->p, 8, "\\\\x%02x", c);
      u += 2;
    } else if (c == '"' || c == '\\') {
      *b->p++ = '\\', *b->p++ = (char)c, u++;
    } else if (c < 0x20) {
      b->p += snprintf(b->p, 8, "\\u%04x", c), u++;
    } else if (n == 0) {
      b->p += snprintf(b->p, 8, "\\\\x%02x", c), u++;
    } else {
      memcpy(b->p, u, (size_t)n), b->p += n, u += n;
    }
  }
  JB_LIT(b, "\"");
}

static void jb_cstr(jb *b, const char *s) { jb_lit(b, s, strlen(s)); }

static const char *span_name(const rank_data *d, const mpb_tev *e, char *buf, size_t cap) {
  static const char *const ops[] = {"task", "exec", "chunk", "require", "cd", "line", "trace"};
  switch (e->type) {
    case MPB_TR_TASK:
      snprintf(buf, cap, "task %s", e->b ? str_of(d, e->b) : ops[e->sub < 7 ? e->sub : 0]);
      return buf;
    /* b: the name of a call of mp.mpi (mpi.Recv(ANY_SOURCE, tag 7), ...) */
    case MPB_TR_SEND: return e->b ? str_of(d, e->b) : e->sub ? "isend" : "send";
    case MPB_TR_RECV: return e->b ? str_of(d, e->b) : e->sub ? "irecv" : "recv";
    case MPB_TR_WAIT:
      if (e->b) return str_of(d, e->b);
      return e->sub == 2 ? "waitany" : e->sub == 1 ? "waitall" : "wait";
    case MPB_TR_COLL: return coll_name(e->sub);
    case MPB_TR_DIST:
      if (!(e->sub2 & (MPB_TRF_START | MPB_TRF_WAIT))) return coll_name(e->sub);
      snprintf(buf, cap, e->sub2 & MPB_TRF_START ? "i%s" : "%s wait", coll_name(e->sub));
      return buf;
    case MPB_TR_MAP: return "map job";
    case MPB_TR_POOL: return e->sub ? "pool job" : "pool batch";
    case MPB_TR_RESYNC: return "abort resync";
    case MPB_TR_REGION: case MPB_TR_MARK: return str_of(d, e->a);
    case MPB_TR_OUT: return "out";
    default: return "in";
  }
}

/* The category of a span (the report colours by it): an exchange of
** layout/ is its kind ("transpose", "halo", "neighbor_alltoall", ...). */
static const char *cat_of(const mpb_tev *e) {
  static const char *const c[] = {"", "task", "p2p", "p2p", "p2p", "coll", "dist", "map",
                                  "pool", "abort", "region", "mark", "msg", "msg"};
  _Static_assert(sizeof c / sizeof c[0] == MPB_TR_NTYPES, "a category per event type");
  if (e->type == MPB_TR_DIST) return coll_name(e->sub);
  return e->type > 0 && e->type < MPB_TR_NTYPES ? c[e->type] : "?";
}

static void put_event(jb *b, const rank_data *d, const mpb_tev *e, double us, double dur,
                      uint64_t flow) {
  char buf[160];
  int rank = d->h.rank;
  if (e->type == MPB_TR_MARK) JB_LIT(b, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":");
  else JB_LIT(b, "{\"ph\":\"X\",\"pid\":");
  jb_i64(b, rank);
  JB_LIT(b, ",\"tid\":0,\"ts\":");
  jb_fix3(b, us);
  if (e->type != MPB_TR_MARK) JB_LIT(b, ",\"dur\":"), jb_fix3(b, dur);
  JB_LIT(b, ",\"name\":");
  jb_str(b, span_name(d, e, buf, sizeof buf));
  JB_LIT(b, ",\"cat\":\"");
  jb_cstr(b, cat_of(e));
  JB_LIT(b, "\",\"args\":{\"depth\":");
  jb_i64(b, e->depth);
  if (e->type == MPB_TR_DIST) JB_LIT(b, ",\"peers\":"), jb_i64(b, e->peer);
  else if (e->peer >= 0) JB_LIT(b, ",\"peer\":"), jb_i64(b, e->peer);
  else if (e->peer == -2 && e->type != MPB_TR_COLL) JB_LIT(b, ",\"peer\":\"several\"");
  if (e->type != MPB_TR_MARK && e->type != MPB_TR_REGION && e->type != MPB_TR_TASK)
    JB_LIT(b, ",\"bytes\":"), jb_u64(b, e->bytes);
  switch (e->type) {
    case MPB_TR_TASK: case MPB_TR_RESYNC: JB_LIT(b, ",\"task\":"), jb_u64(b, e->a); break;
    case MPB_TR_COLL:
      JB_LIT(b, ",\"seq\":"), jb_u64(b, e->a);
      JB_LIT(b, ",\"comm\":"), jb_u64(b, e->b);
      JB_LIT(b, ",\"root\":"), jb_i64(b, e->peer);
      break;
    case MPB_TR_DIST:
      JB_LIT(b, ",\"kind\":\""), jb_cstr(b, coll_name(e->sub));
      JB_LIT(b, "\",\"seq\":"), jb_u64(b, e->a);
      JB_LIT(b, ",\"comm\":"), jb_u64(b, e->b);
      if (mpb_xchg_method(e->sub)) JB_LIT(b, ",\"method\":"), jb_str(b, mpb_xchg_method(e->sub));
      if (e->sub2 & MPB_TRF_START) JB_LIT(b, ",\"nonblocking\":\"start\"");
      if (e->sub2 & MPB_TRF_WAIT) JB_LIT(b, ",\"nonblocking\":\"wait\"");
      break;
    case MPB_TR_MAP: JB_LIT(b, ",\"job\":"), jb_u64(b, e->a); break;
    case MPB_TR_POOL: JB_LIT(b, ",\"jobs\":"), jb_u64(b, e->a); break;
    case MPB_TR_OUT: case MPB_TR_IN:
      JB_LIT(b, ",\"kind\":\"");
      jb_cstr(b, mpb_trk_name(kind_of_msg(e)));
      JB_LIT(b, "\",\"k\":"), jb_u64(b, e->a);
      break;
  }
  if (e->src) {
    JB_LIT(b, ",\"src\":");
    snprintf(buf, sizeof buf, "%s:%u", str_of(d, e->src), e->line);
    jb_str(b, buf);
  }
  if (!MPB_TR_INSTANT(e->type) && (e->sub2 & (MPB_TRF_CUT | MPB_TRF_UNWOUND)))
    e->sub2 & MPB_TRF_CUT ? JB_LIT(b, ",\"ended\":\"stop\"") : JB_LIT(b, ",\"ended\":\"error\"");
  JB_LIT(b, "}},\n");
  if (flow) {
    if (e->type == MPB_TR_OUT) JB_LIT(b, "{\"ph\":\"s\",\"pid\":");
    else JB_LIT(b, "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":");
    jb_i64(b, rank);
    JB_LIT(b, ",\"tid\":0,\"ts\":");
    jb_fix3(b, us);
    JB_LIT(b, ",\"id\":");
    jb_u64(b, flow);
    JB_LIT(b, ",\"name\":\"message\",\"cat\":\"msg\"},\n");
  }
}

static double aligned(const rank_data *d, int64_t t) {
  double span = (double)(d->h.t_stop - d->h.t_start);
  double w = span > 0 ? (double)(t - d->h.t_start) / span : 0;
  if (w < 0) w = 0;
  if (w > 1) w = 1;
  return (double)t - (d->os + (d->oe - d->os) * w);
}

int64_t mpb_trace_write(lua_State *L, const char *path, int blobs, int os, int oe,
                        uint64_t *matrix, char *err, size_t errlen) {
  int size = (int)luaL_len(L, blobs);
  rank_data *d = calloc((size_t)size, sizeof *d);
  flows fl = {0};
  FILE *f = NULL;
  int64_t written = -1;
  uint64_t nout = 0;
  jb *jbuf = NULL;
  if (!d) goto oom;
  for (int r = 0; r < size; r++) {
    size_t len;
    lua_geti(L, blobs, r + 1);
    const char *p = lua_tolstring(L, -1, &len); /* kept alive by the table */
    lua_pop(L, 1);
    if (!p || parse(&d[r], p, len, size) != 0) {
      snprintf(err, errlen, "rank %d sent a malformed recording", r);
      goto done;
    }
    lua_geti(L, oe, r + 1);
    d[r].oe = (double)lua_tointeger(L, -1);
    lua_pop(L, 1);
    d[r].os = d[r].oe;
    if (os) {
      if (lua_geti(L, os, r + 1) == LUA_TNUMBER) d[r].os = (double)lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
    for (uint64_t i = 0; i < d[r].h.nev; i++) nout += d[r].ev[i].type == MPB_TR_OUT;
  }
  /* the flows: every send in the rings, then which receives match one */
  for (fl.cap = 64; fl.cap < 2 * nout + 2; fl.cap *= 2) {}
  jbuf = malloc(sizeof *jbuf);
  fl.key = malloc(fl.cap * sizeof *fl.key);
  fl.seen = calloc(fl.cap, 1);
  if (!fl.key || !fl.seen || !jbuf) goto oom;
  for (int r = 0; r < size; r++)
    for (uint64_t i = 0; i < d[r].h.nev; i++)
      if (d[r].ev[i].type == MPB_TR_OUT) {
        fkey k = key_of(&d[r].ev[i], r);
        flow_at(&fl, &k, 1);
      }
  for (int r = 0; r < size; r++)
    for (uint64_t i = 0; i < d[r].h.nev; i++)
      if (d[r].ev[i].type == MPB_TR_IN) {
        fkey k = key_of(&d[r].ev[i], r);
        uint64_t at = flow_at(&fl, &k, 0);
        if (at) fl.seen[at - 1] = 2;
      }
  f = fopen(path, "w");
  if (!f) {
    snprintf(err, errlen, "cannot open '%s' for writing", path);
    goto done;
  }
  setvbuf(f, NULL, _IOFBF, 1 << 20);
  double t0 = 0;
  for (int r = 0; r < size; r++) {
    double a = aligned(&d[r], d[r].h.t_start);
    if (r == 0 || a < t0) t0 = a;
  }
  fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
  written = 0;
  for (int r = 0; r < size; r++) {
    fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":"
               "\"rank %d\"}},\n", r, r);
    fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_sort_index\",\"args\":"
               "{\"sort_index\":%d}},\n", r, r);
    fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"mplua_rank\",\"args\":{\"start\":"
               "%.3f,\"stop\":%.3f,\"lost\":%" PRIu64 ",\"too_deep\":%" PRIu64 "}},\n",
            r, (aligned(&d[r], d[r].h.t_start) - t0) / 1e3,
            (aligned(&d[r], d[r].h.t_stop) - t0) / 1e3, d[r].h.lost, d[r].h.over);
    jbuf->f = f;
    jbuf->p = jbuf->buf;
    for (uint64_t i = 0; i < d[r].h.nev; i++) {
      mpb_tev e;
      memcpy(&e, &d[r].ev[i], sizeof e);
      uint64_t flow = 0;
      if (e.type == MPB_TR_OUT || e.type == MPB_TR_IN) {
        fkey k = key_of(&e, r);
        uint64_t at = flow_at(&fl, &k, 0);
        if (at && fl.seen[at - 1] == 2) flow = at;
      }
      double us = (aligned(&d[r], e.t0) - t0) / 1e3;
      double dur = (aligned(&d[r], e.t1) - t0) / 1e3 - us; /* ends align as starts do */
      put_event(jbuf, &d[r], &e, us, dur < 0 ? 0 : dur, flow);
      written++;
    }
    jb_flush(jbuf);
  }
  /* the matrix, exact (the rings may have lost events) */
  memset(matrix, 0, (size_t)MPB_TRK_N * (size_t)size * (size_t)size * 2 * sizeof *matrix);
  for (int r = 0; r < size; r++)
    for (int raw = 0; raw < MPB_TR_KINDS; raw++)
      for (int j = 0; j < size; j++) {
        const uint64_t *c = &d[r].row[2 * ((size_t)raw * (size_t)size + (size_t)j)];
        uint64_t *m = &matrix[2 * (((size_t)mpb_trk_of(raw) * (size_t)size + (size_t)r) *
                                       (size_t)size + (size_t)j)];
        m[0] += c[0], m[1] += c[1];
      }
  for (int k = 0; k < MPB_TRK_N; k++)
    for (int r = 0; r < size; r++) {
      const uint64_t *m = &matrix[2 * ((size_t)k * (size_t)size + (size_t)r) * (size_t)size];
      int any = 0;
      for (int j = 0; j < size; j++) any |= m[2 * j] != 0;
      if (!any) continue;
      fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"mplua_row\",\"args\":{\"kind\":"
                 "\"%s\",\"count\":[", r, mpb_trk_name(k));
      for (int j = 0; j < size; j++) fprintf(f, "%s%" PRIu64, j ? "," : "", m[2 * j]);
      fputs("],\"bytes\":[", f);
      for (int j = 0; j < size; j++) fprintf(f, "%s%" PRIu64, j ? "," : "", m[2 * j + 1]);
      fputs("]}},\n", f);
    }
  fprintf(f, "{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"mplua_job\",\"args\":{\"ranks\":%d}}"
             "\n]}\n", size);
  if (ferror(f)) {
    snprintf(err, errlen, "writing '%s' failed", path);
    written = -1;
  }
  goto done;
oom:
  snprintf(err, errlen, "out of memory");
done:
  if (f && fclose(f) != 0 && written >= 0) {
    snprintf(err, errlen, "writing '%s' failed", path);
    written = -1;
  }
  if (d)
    for (int r = 0; r < size; r++) free(d[r].str);
  free(d), free(fl.key), free(fl.seen), free(jbuf);
  return written;
}
