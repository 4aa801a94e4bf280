/* SPDX-License-Identifier: MIT */
/*
** mp.trace (trace/tracer.h): start and stop a recording on every rank, user
** regions and marks, the communication matrix; MPLUA_TRACE=FILE records the
** whole job and writes FILE when it ends.
**
**   mp.trace.start{events = 65536, lines = true, file = nil}   rank 0: a task
**   mp.trace.stop([file]) -> {events, lost, file, ranks}          rank 0: a task
**   mp.trace.region(name, f, ...) -> f(...)    any rank, a span around f
**   mp.trace.mark(name)                        any rank, an instant
**   mp.trace.matrix{by = "count" | "bytes", kind = "all"}   rank 0, after stop
**   mp.trace.on()                              is this rank recording?
**
** Starting and stopping are tasks (MPB_TASK_TRACE): every rank measures its
** clock's offset to rank 0's (the best of a few round trips), and at the
** stop ships its ring to rank 0, which writes the file (trace_write.c).
*/
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "layout/laylib.h"
#include "tasks/tasks.h"
#include "trace/tracer.h"

#define REG "mp.trace"
#define DEFAULT_EVENTS 65536
#define MAX_EVENTS ((lua_Integer)1 << 30) /* a ring of 2^30 events is tens of GB */

typedef struct tstate {
  mpb_trace *t;
  uint64_t *matrix; /* rank 0, the last recording: [MPB_TRK_N][size][size][2] */
  int size, have_matrix;
  int os_ref;       /* rank 0: offsets measured at the start (a table), or LUA_NOREF */
  char file[1024];  /* where the recording goes ("" none) */
} tstate;

static int ts_gc(lua_State *L) {
  tstate *s = lua_touserdata(L, 1);
  mpb_state *st = mpb_get(L);
  if (st && st->trace == s->t) st->trace = NULL;
  mpb_trace_free(s->t);
  free(s->matrix);
  s->t = NULL, s->matrix = NULL;
  return 0;
}

static tstate *get_ts(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, REG);
  tstate *s = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return s;
}

/* Errors: mpb_lay_argerror's words, "bad argument #1 to 'mp.trace.start'
** ([rank r/n] ...)": the functions live in a subtable of mp, where Lua's
** own checks cannot find their names. */

/* Begin recording on this rank (a recorder of `events` events). */
static int local_start(lua_State *L, mpb_state *st, tstate *s, uint64_t events, int lines) {
  if (!s->t || s->t->cap != events) {
    if (st->trace == s->t) st->trace = NULL;
    mpb_trace_free(s->t);
    s->t = mpb_trace_new(events, st->size);
    if (!s->t)
      return mpb_lay_argerror(L, 0, "trace.start", "out of memory for %I events",
                              (LUAI_UACINT)events);
  }
  s->t->lines = lines;
  mpb_trace_start(st, s->t);
  return 0;
}

/* Stop this rank's recording and pack it (the blob of tracer.h). */
static int local_stop(lua_State *L, mpb_state *st, tstate *s) {
  mpb_trace *t = s->t;
  if (!t || st->trace != t) return mpb_lay_argerror(L, 0, "trace.stop", "this rank is not tracing");
  mpb_trace_stop(st, t);
  uint64_t n = t->count < t->cap ? t->count : t->cap;
  size_t nstr = (t->strlen + 7) & ~(size_t)7, rows = (size_t)MPB_TR_KINDS * (size_t)t->size * 2;
  mpb_tr_blob h = {t->t_start, t->t_stop, n, t->count - n, nstr, (uint64_t)t->over, st->rank,
                   t->size};
  luaL_Buffer b;
  size_t len = sizeof h + n * sizeof(mpb_tev) + nstr + rows * sizeof(uint64_t);
  char *p = luaL_buffinitsize(L, &b, len);
  memcpy(p, &h, sizeof h);
  mpb_trace_events(t, (mpb_tev *)(void *)(p + sizeof h));
  char *q = p + sizeof h + n * sizeof(mpb_tev);
  if (t->strlen) memcpy(q, t->str, t->strlen);
  memset(q + t->strlen, 0, nstr - t->strlen);
  memcpy(q + nstr, t->row, rows * sizeof(uint64_t));
  luaL_pushresultsize(&b, len);
  return 1;
}

/* The options table at 1 (nil: none): 1, else 0; raises on another type. */
static int opts_arg(lua_State *L, const char *fname) {
  if (lua_isnoneornil(L, 1)) return 0;
  if (!lua_istable(L, 1))
    mpb_lay_argerror(L, 1, fname, "options table expected, got %s", luaL_typename(L, 1));
  return 1;
}

/* Field k of the options at 1, read once: a string (or the default). */
static const char *opt_string(lua_State *L, const char *fname, const char *k, const char *dflt) {
  int t = lua_getfield(L, 1, k);
  if (t == LUA_TNIL) return dflt;
  if (t != LUA_TSTRING)
    mpb_lay_argerror(L, 1, fname, "field '%s' must be a string, got %s", k, luaL_typename(L, -1));
  return lua_tostring(L, -1); /* left on the stack: it anchors the string */
}

/* A region's or mark's name at arg, as the recorder keeps it: whole, NUL
** and MPB_TRACE_ESC escaped (tracer.h). */
static uint32_t user_name(lua_State *L, mpb_state *st, int arg, const char *fname) {
  size_t len;
  const char *s = lua_tolstring(L, arg, &len);
  if (!s)
    mpb_lay_argerror(L, arg, fname, "name (a string) expected, got %s", luaL_typename(L, arg));
  if (!st->trace) return 0;
  size_t k = 0;
  while (k < len && s[k] != '\0' && (unsigned char)s[k] != MPB_TRACE_ESC) k++;
  if (k == len) return mpb_trace_string(st->trace, s, len); /* the usual name */
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\0' || c == MPB_TRACE_ESC) {
      luaL_addchar(&b, (char)MPB_TRACE_ESC);
      luaL_addchar(&b, (char)(c ? MPB_TRACE_ESC : 0x80));
    } else {
      luaL_addchar(&b, (char)c);
    }
  }
  luaL_pushresult(&b);
  s = lua_tolstring(L, -1, &len);
  uint32_t id = mpb_trace_string(st->trace, s, len);
  lua_pop(L, 1);
  return id;
}

static int l_now(lua_State *L) {
  lua_pushinteger(L, mpb_trace_now());
  return 1;
}

static int l_local_start(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_Integer ev = luaL_checkinteger(L, 1);
  local_start(L, st, get_ts(L), ev > 0 ? (uint64_t)ev : DEFAULT_EVENTS, lua_toboolean(L, 2));
  return 0;
}

static int l_local_stop(lua_State *L) { return local_stop(L, mpb_get(L), get_ts(L)); }

/* The part of a start or stop every rank runs (inside the task). */
static const char task_lua[] =
    "local T, mp, cmd, events, lines = ...\n"
    "local c = mp.world\n"
    "local function offsets()\n"
    "  local n, me = c.size, c.rank\n"
    "  if n == 1 then return {0} end\n"
    "  if me ~= 0 then for _ = 1, 5 do c:recv(0); c:send(0, T.now()) end return end\n"
    "  local off = {0}\n"
    "  for r = 1, n - 1 do\n"
    "    local best, bo = math.huge, 0\n"
    "    for _ = 1, 5 do\n"
    "      local t0 = T.now(); c:send(r, t0); local tr = c:recv(r); local t1 = T.now()\n"
    "      if t1 - t0 < best then best, bo = t1 - t0, tr - (t0 + t1) // 2 end\n"
    "    end\n"
    "    off[r + 1] = bo\n"
    "  end\n"
    "  return off\n"
    "end\n"
    "if cmd == 'start' then local off = offsets(); T.start(events, lines); return off end\n"
    "local blob = T.stop()\n"
    "local off = offsets()\n"
    "return off, c:gather(blob)\n";

static int task_body(lua_State *L) { /* cmd, events, lines */
  int n = lua_gettop(L);
  if (luaL_loadbufferx(L, task_lua, sizeof task_lua - 1, "=mp.trace", "t") != LUA_OK)
    return lua_error(L);
  lua_createtable(L, 0, 3);
  lua_pushcfunction(L, l_now);
  lua_setfield(L, -2, "now");
  lua_pushcfunction(L, l_local_start);
  lua_setfield(L, -2, "start");
  lua_pushcfunction(L, l_local_stop);
  lua_setfield(L, -2, "stop");
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, "mp");
  lua_remove(L, -2);
  for (int i = 1; i <= n; i++) lua_pushvalue(L, i);
  lua_call(L, n + 2, LUA_MULTRET);
  return lua_gettop(L) - n;
}

/* ------------------------------------------------------------ rank 0 */
static int l_start(lua_State *L) {
  mpb_state *st = mpb_get(L);
  tstate *s = get_ts(L);
  lua_Integer events = DEFAULT_EVENTS;
  int lines = 1;
  const char *file = NULL;
  if (opts_arg(L, "trace.start")) {
    if (lua_getfield(L, 1, "events") != LUA_TNIL) {
      int ok;
      events = lua_tointegerx(L, -1, &ok);
      if (!ok || events < 16 || events > MAX_EVENTS)
        mpb_lay_argerror(L, 1, "trace.start", "field 'events' must be an integer in "
                         "16..%I, got %s", (LUAI_UACINT)MAX_EVENTS, luaL_tolstring(L, -1, NULL));
    }
    if (lua_getfield(L, 1, "lines") != LUA_TNIL) lines = lua_toboolean(L, -1);
    file = opt_string(L, "trace.start", "file", NULL);
  }
  if (st->trace)
    return mpb_lay_argerror(L, 0, "trace.start", "already tracing (mp.trace.stop first)");
  snprintf(s->file, sizeof s->file, "%s", file ? file : "");
  lua_settop(L, 0);
  lua_pushliteral(L, "start");
  lua_pushinteger(L, events);
  lua_pushboolean(L, lines);
  mpb_task_run(L, st, MPB_TASK_TRACE, 3, "trace.start");
  luaL_unref(L, LUA_REGISTRYINDEX, s->os_ref);
  lua_settop(L, 1);
  s->os_ref = lua_istable(L, 1) ? luaL_ref(L, LUA_REGISTRYINDEX) : LUA_NOREF;
  return 0;
}

static int l_stop(lua_State *L) {
  mpb_state *st = mpb_get(L);
  tstate *s = get_ts(L);
  const char *file = s->file[0] ? s->file : NULL;
  if (!lua_isnoneornil(L, 1)) {
    if (lua_type(L, 1) != LUA_TSTRING)
      mpb_lay_argerror(L, 1, "trace.stop", "file name expected, got %s", luaL_typename(L, 1));
    file = lua_tostring(L, 1);
  }
  char path[1024];
  snprintf(path, sizeof path, "%s", file ? file : "/dev/null");
  if (!st->trace) return mpb_lay_argerror(L, 0, "trace.stop", "not tracing");
  lua_settop(L, 0);
  lua_pushliteral(L, "stop");
  mpb_task_run(L, st, MPB_TASK_TRACE, 1, "trace.stop");
  int oe = 1, blobs = 2;
  luaL_checktype(L, oe, LUA_TTABLE);
  luaL_checktype(L, blobs, LUA_TTABLE);
  int os = 0;
  if (s->os_ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->os_ref);
    os = lua_gettop(L);
  }
  size_t msize = (size_t)MPB_TRK_N * (size_t)st->size * (size_t)st->size * 2;
  if (!s->matrix || s->size != st->size) {
    free(s->matrix);
    s->matrix = malloc(msize * sizeof *s->matrix);
    if (!s->matrix) return mpb_lay_argerror(L, 0, "trace.stop", "out of memory");
    s->size = st->size;
  }
  char err[256];
  int64_t n = mpb_trace_write(L, path, blobs, os, oe, s->matrix, err, sizeof err);
  if (n < 0) return mpb_lay_argerror(L, 0, "trace.stop", "%s", err);
  s->have_matrix = 1;
  uint64_t lost = 0;
  for (int r = 1; r <= st->size; r++) {
    mpb_tr_blob h;
    lua_geti(L, blobs, r);
    memcpy(&h, lua_tostring(L, -1), sizeof h);
    lua_pop(L, 1);
    lost += h.lost;
  }
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, n);
  lua_setfield(L, -2, "events");
  lua_pushinteger(L, (lua_Integer)lost);
  lua_setfield(L, -2, "lost");
  lua_pushinteger(L, st->size);
  lua_setfield(L, -2, "ranks");
  if (file) {
    lua_pushstring(L, file);
    lua_setfield(L, -2, "file");
    FILE *f = fopen(file, "r");
    if (f && fseek(f, 0, SEEK_END) == 0 && ftell(f) > (long)256 << 20)
      mpb_warn(L, "mp.trace: warning: %s is %ld MB: viewers may not open a trace this big "
                  "(start with fewer events)", file, ftell(f) >> 20);
    if (f) fclose(f);
  }
  return 1;
}

static int l_matrix(lua_State *L) {
  mpb_state *st = mpb_get(L);
  tstate *s = get_ts(L);
  const char *by = "count", *kind = "all";
  if (opts_arg(L, "trace.matrix")) {
    by = opt_string(L, "trace.matrix", "by", by);
    kind = opt_string(L, "trace.matrix", "kind", kind);
  }
  int bytes = strcmp(by, "bytes") == 0;
  if (!bytes && strcmp(by, "count") != 0)
    return mpb_lay_argerror(L, 1, "trace.matrix", "field 'by' must be \"count\" or \"bytes\", "
                            "not \"%s\"", by);
  int want = -1; /* -1 all, -2 every collective */
  if (strcmp(kind, "coll") == 0) want = -2;
  else if (strcmp(kind, "all") != 0) {
    for (int k = 0; mpb_trk_name(k); k++)
      if (strcmp(mpb_trk_name(k), kind) == 0) want = k;
    if (want == -1)
      return mpb_lay_argerror(L, 1, "trace.matrix", "field 'kind': unknown kind \"%s\"", kind);
  }
  if (!s->have_matrix || st->rank != 0)
    return mpb_lay_argerror(L, 0, "trace.matrix", "no recording on this rank (rank 0 has "
                            "one, after mp.trace.stop)");
  int n = s->size;
  int64_t dims[2] = {n, n};
  mpb_array *a = mpb_array_new(L, MPB_F64, 2, dims);
  double *m = a->data;
  for (int k = 0; mpb_trk_name(k); k++) {
    if (want >= 0 ? k != want : want == -2 ? !mpb_trk_is_coll(k) : 0) continue;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        m[i + (size_t)j * n] +=
            (double)s->matrix[2 * (((size_t)k * n + i) * n + j) + (size_t)bytes];
  }
  return 1;
}

static int l_region(lua_State *L) {
  mpb_state *st = mpb_get(L);
  uint32_t name = user_name(L, st, 1, "trace.region");
  if (lua_isnone(L, 2)) mpb_lay_argerror(L, 2, "trace.region", "function expected, got no value");
  int n = lua_gettop(L);
  mpb_trace_scope sc = mpb_trace_open(L, st, MPB_TR_REGION, 0, -1, name, 0);
  lua_pushvalue(L, 2);
  lua_rotate(L, 3, 1); /* f, args... above name and f */
  int status = lua_pcall(L, n - 2, LUA_MULTRET, 0);
  if (status != LUA_OK) {
    if (sc.t && sc.t->gen == sc.gen && sc.level > 0) mpb_tr_close(sc.t, sc.level, MPB_TRF_UNWOUND);
    return lua_error(L);
  }
  mpb_trace_close(&sc);
  return lua_gettop(L) - 2;
}

static int l_mark(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_trace_mark(L, st, user_name(L, st, 1, "trace.mark"));
  return 0;
}

static int l_on(lua_State *L) {
  lua_pushboolean(L, mpb_get(L)->trace != NULL);
  return 1;
}

/* ---------------------------------------------- MPLUA_TRACE: the job */
static int exit_stop(lua_State *L) {
  lua_settop(L, 0);
  return l_stop(L);
}

static void at_exit(mpb_state *st) {
  lua_State *L = st->L;
  st->trace->at_exit = NULL;
  lua_pushcfunction(L, exit_stop);
  if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
    mpb_warn(L, "MPLUA_TRACE: %s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
    lua_pop(L, 1);
  }
}

void mpb_open_trace(lua_State *L) {
  mpb_state *st = mpb_get(L);
  tstate *s = lua_newuserdatauv(L, sizeof *s, 0);
  memset(s, 0, sizeof *s);
  s->os_ref = LUA_NOREF;
  lua_newtable(L);
  lua_pushcfunction(L, ts_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, REG);
  mpb_task_register(mpb_get(L), MPB_TASK_TRACE, task_body);
  static const luaL_Reg fns[] = {{"start", l_start},   {"stop", l_stop}, {"matrix", l_matrix},
                                 {"region", l_region}, {"mark", l_mark}, {"on", l_on},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_setfield(L, -2, "trace");
  const char *file = getenv("MPLUA_TRACE");
  if (file && *file && !st->trace) { /* every rank reads it: the launcher passes it on */
    const char *ev = getenv("MPLUA_TRACE_EVENTS");
    long long n = ev && *ev ? atoll(ev) : DEFAULT_EVENTS;
    snprintf(s->file, sizeof s->file, "%s", file);
    local_start(L, st, s, n >= 16 ? (uint64_t)n : DEFAULT_EVENTS, 1);
    if (st->rank == 0) s->t->at_exit = at_exit;
  }
}
