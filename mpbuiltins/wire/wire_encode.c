/* SPDX-License-Identifier: MIT */
/*
** wire_encode.c: Lua values -> the wire format (described in wire.c).
**
** One recursive walk over the values. Shared objects (tables, Lua functions,
** arrays) and shared upvalues are tracked in a Lua table created only when
** the first such object appears, so encoding a few numbers or strings costs
** no allocation besides the buffer's. On failure the path to the offending
** value is rebuilt from a small stack of path steps kept during the walk
** (stack indices of the keys being visited), so the happy path formats
** nothing.
*/
#include <stdio.h>

#include "lauxlib.h"
#include "array/array.h"
#include "wire/wire_int.h"

enum { P_INT, P_KEY, P_KEYOF, P_UPVAL, P_META };

typedef struct Step {
  int kind;
  int sidx;            /* P_KEY, P_KEYOF: stack index of the key */
  lua_Integer i;       /* P_INT: array-part index */
  const char *name;    /* P_UPVAL: upvalue name */
} Step;

typedef struct Enc {
  lua_State *L;
  mpb_wbuf *b;
  int bidx;            /* buffer userdata (anchors external segments) */
  int refs;            /* stack slot: nil, or the table object -> id and
                          upvalue id (light userdata) -> id * 256 + index */
  lua_Integer nextid;
  size_t base;         /* logical offset of the body (array alignment) */
  const void *G;       /* the sender's globals, looked up on first table */
  int names;           /* stack slot: the name cache (wire_names.c), from the first table */
  int depth;
  int valno;           /* 1-based number of the top-level value; 0: an item's
                          value (mpb_wire_items_add), said by its path alone */
  int rebuilt;         /* the C function name cache was refreshed */
  int nstep;
  Step step[MPB_WIRE_MAXDEPTH + 4];
  char *err;
  size_t errlen;
} Enc;

static int encode(Enc *e, int idx);

/* ---------------------------------------------------------------- errors */

static void add_key(Enc *e, char *out, size_t cap, size_t *n, int sidx) {
  lua_State *L = e->L;
  size_t len;
  const char *s;
  int w = 0;
  switch (lua_type(L, sidx)) {
    case LUA_TSTRING: {
      s = lua_tolstring(L, sidx, &len);
      int ident = len > 0 && len <= 40 && !(s[0] >= '0' && s[0] <= '9');
      for (size_t k = 0; ident && k < len; k++)
        ident = (s[k] == '_' || (s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') ||
                 (s[k] >= '0' && s[k] <= '9'));
      w = ident ? snprintf(out + *n, cap - *n, ".%s", s)
                : snprintf(out + *n, cap - *n, "[\"%.20s%s\"]", s, len > 20 ? "..." : "");
      break;
    }
    case LUA_TNUMBER:
      if (lua_isinteger(L, sidx))
        w = snprintf(out + *n, cap - *n, "[%lld]", (long long)lua_tointeger(L, sidx));
      else
        w = snprintf(out + *n, cap - *n, "[%.14g]", lua_tonumber(L, sidx));
      break;
    case LUA_TBOOLEAN:
      w = snprintf(out + *n, cap - *n, "[%s]", lua_toboolean(L, sidx) ? "true" : "false");
      break;
    default:
      w = snprintf(out + *n, cap - *n, "[<%s>]", luaL_typename(L, sidx));
      break;
  }
  if (w > 0) *n = *n + (size_t)w < cap ? *n + (size_t)w : cap - 1;
}

/* "cannot send a userdata (at value #2 [3].x)" */
static int fail(Enc *e, const char *what) {
  char path[256];
  size_t n = 0;
  path[0] = '\0';
  for (int k = 0; k < e->nstep && n < sizeof path - 1; k++) {
    const Step *s = &e->step[k];
    int w = 0;
    switch (s->kind) {
      case P_INT: w = snprintf(path + n, sizeof path - n, "[%lld]", (long long)s->i); break;
      case P_KEY: add_key(e, path, sizeof path, &n, s->sidx); break;
      case P_KEYOF:
        add_key(e, path, sizeof path, &n, s->sidx);
        w = snprintf(path + n, sizeof path - n, "<key>");
        break;
      case P_UPVAL: w = snprintf(path + n, sizeof path - n, "<upvalue %s>", s->name); break;
      default: w = snprintf(path + n, sizeof path - n, "<metatable>"); break;
    }
    if (w > 0) n = n + (size_t)w < sizeof path ? n + (size_t)w : sizeof path - 1;
  }
  if (e->errlen > 0 && e->valno)
    snprintf(e->err, e->errlen, "%s (at value #%d%s%s)", what, e->valno, n ? " " : "", path);
  else if (e->errlen > 0)
    snprintf(e->err, e->errlen, n ? "%s (at %s)" : "%s", what, path);
  return -1;
}

static int oom(Enc *e) { return fail(e, "not enough memory to encode"); }

static void push_step(Enc *e, int kind, int sidx, lua_Integer i, const char *name) {
  Step *s = &e->step[e->nstep++];
  s->kind = kind;
  s->sidx = sidx;
  s->i = i;
  s->name = name;
}

/* ---------------------------------------------------------------- output */

static inline int put(Enc *e, const void *p, size_t n) {
  char *d = mpb_wbuf_reserve(e->b, n);
  if (!d) return oom(e);
  memcpy(d, p, n);
  e->b->len += n;
  return 0;
}

static inline int putbyte(Enc *e, int c) {
  char *d = mpb_wbuf_reserve(e->b, 1);
  if (!d) return oom(e);
  *d = (char)c;
  e->b->len++;
  return 0;
}

/* A tag followed by a varint. */
static inline int put_tagvar(Enc *e, int tag, uint64_t v) {
  char *d = mpb_wbuf_reserve(e->b, 11);
  if (!d) return oom(e);
  *d = (char)tag;
  e->b->len += (size_t)(mpbw_put_var(d + 1, v) - d);
  return 0;
}

static int put_string(Enc *e, const char *s, size_t len) {
  if (len <= SHORTSTR_MAX) {
    char *d = mpb_wbuf_reserve(e->b, 1 + len);
    if (!d) return oom(e);
    d[0] = (char)(T_SHORTSTR + len);
    memcpy(d + 1, s, len);
    e->b->len += 1 + len;
    return 0;
  }
  if (put_tagvar(e, T_STR, len)) return -1;
  return put(e, s, len);
}

/* ---------------------------------------------------------------- shared objects */

/* If the object at idx was seen, write a reference and return 1; else give
** it the next id and return 0 (-1 on error). */
static int seen(Enc *e, int idx) {
  lua_State *L = e->L;
  if (lua_isnil(L, e->refs)) {
    lua_createtable(L, 0, 8);  /* skips the first rehashes */
    lua_replace(L, e->refs);
  }
  lua_pushvalue(L, idx);
  if (lua_rawget(L, e->refs) != LUA_TNIL) {
    lua_Integer id = lua_tointeger(L, -1);
    lua_pop(L, 1);
    return put_tagvar(e, T_REF, (uint64_t)id) ? -1 : 1;
  }
  lua_pop(L, 1);
  lua_pushvalue(L, idx);
  lua_pushinteger(L, e->nextid++);
  lua_rawset(L, e->refs);
  return 0;
}

static int enter(Enc *e) {
  if (++e->depth > MPB_WIRE_MAXDEPTH) {
    char msg[64];
    snprintf(msg, sizeof msg, "nesting deeper than %d levels", MPB_WIRE_MAXDEPTH);
    return fail(e, msg);
  }
  if (!lua_checkstack(e->L, 8)) return fail(e, "Lua stack overflow");
  return 0;
}

/* ---------------------------------------------------------------- tables */

static int enc_table(Enc *e, int idx) {
  lua_State *L = e->L;
  if (!e->G) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    e->G = lua_topointer(L, -1);
    lua_pop(L, 1);
    mpbw_names(L);
    lua_replace(L, e->names);
  }
  if (lua_topointer(L, idx) == e->G) return putbyte(e, T_GLOBALS);
  lua_pushvalue(L, idx);
  if (lua_rawget(L, e->names) == LUA_TSTRING) { /* a module: by name */
    size_t len;
    const char *name = lua_tolstring(L, -1, &len);
    int r = put_tagvar(e, T_MODULE, len) || put(e, name, len);
    lua_pop(L, 1);
    return r ? -1 : 0;
  }
  lua_pop(L, 1);
  int r = seen(e, idx);
  if (r != 0) return r < 0 ? -1 : 0;
  if (enter(e)) return -1;
  int hasmt = lua_getmetatable(L, idx);
  if (hasmt) lua_pop(L, 1);
  lua_Unsigned narr = lua_rawlen(L, idx);
  if (put_tagvar(e, hasmt ? T_TABLEMT : T_TABLE, narr)) return -1;
  size_t slot = e->b->len;
  char *d = mpb_wbuf_reserve(e->b, 4);
  if (!d) return oom(e);
  e->b->len += 4;
  for (lua_Unsigned i = 1; i <= narr; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i);
    push_step(e, P_INT, 0, (lua_Integer)i, NULL);
    if (encode(e, lua_gettop(L))) return -1;
    e->nstep--;
    lua_pop(L, 1);
  }
  uint64_t nhash = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int k = lua_gettop(L) - 1;
    if (lua_isinteger(L, k)) {
      lua_Integer i = lua_tointeger(L, k);
      if (i >= 1 && (lua_Unsigned)i <= narr) {  /* already in the array part */
        lua_pop(L, 1);
        continue;
      }
    }
    push_step(e, P_KEYOF, k, 0, NULL);
    if (encode(e, k)) return -1;
    e->step[e->nstep - 1].kind = P_KEY;
    if (encode(e, k + 1)) return -1;
    e->nstep--;
    lua_pop(L, 1);
    nhash++;
  }
  if (nhash > UINT32_MAX) return fail(e, "table too large");
  mpbw_put_u32(e->b->data + slot, (uint32_t)nhash);
  if (hasmt) {
    lua_getmetatable(L, idx);
    push_step(e, P_META, 0, 0, NULL);
    if (lua_type(L, -1) != LUA_TTABLE) return fail(e, "cannot send a non-table metatable");
    if (encode(e, lua_gettop(L))) return -1;
    e->nstep--;
    lua_pop(L, 1);
  }
  e->depth--;
  return 0;
}

/* ---------------------------------------------------------------- functions */

static int dump_writer(lua_State *L, const void *p, size_t sz, void *ud) {
  Enc *e = ud;
  char *d = mpb_wbuf_reserve(e->b, sz);
  if (!d) return 1;
  memcpy(d, p, sz);
  e->b->len += sz;
  return 0;
}

/* A function by the name on top (popped). */
static int put_name(Enc *e) {
  size_t len;
  const char *name = lua_tolstring(e->L, -1, &len);
  int r = put_tagvar(e, T_CFUNC, len) || put(e, name, len);
  lua_pop(e->L, 1);
  return r ? -1 : 0;
}

static int enc_cfunc(Enc *e, int idx) {
  lua_State *L = e->L;
  if (!mpbw_cfunc_name(L, idx, 0)) {
    /* maybe a module loaded after the cache was built: refresh once */
    if (e->rebuilt || !mpbw_cfunc_name(L, idx, 1))
      return fail(e, "cannot send a C function without a name");
    e->rebuilt = 1;
  }
  return put_name(e);
}

static int enc_lfunc(Enc *e, int idx) {
  lua_State *L = e->L;
  if (mpbw_cfunc_name(L, idx, 0)) return put_name(e); /* a module's own (wire_names.c) */
  lua_Integer fid = e->nextid;
  int r = seen(e, idx);
  if (r != 0) return r < 0 ? -1 : 0;
  if (enter(e)) return -1;
  if (putbyte(e, T_LFUNC)) return -1;
  size_t slot = e->b->len;
  if (!mpb_wbuf_reserve(e->b, 4)) return oom(e);
  e->b->len += 4;
  lua_pushvalue(L, idx);
  r = lua_dump(L, dump_writer, e, 0);
  lua_pop(L, 1);
  if (r) return oom(e);
  size_t blen = e->b->len - slot - 4;
  if (blen > UINT32_MAX) return fail(e, "function too large");
  mpbw_put_u32(e->b->data + slot, (uint32_t)blen);
  size_t nslot = e->b->len;
  if (putbyte(e, 0)) return -1;
  int n;
  for (n = 1;; n++) {
    const char *name = lua_getupvalue(L, idx, n);
    if (!name) break;
    void *uid = lua_upvalueid(L, idx, n);
    lua_pushlightuserdata(L, uid);
    if (lua_rawget(L, e->refs) != LUA_TNIL) {  /* shared with an earlier closure */
      lua_Integer v = lua_tointeger(L, -1);
      lua_pop(L, 2);
      if (put_tagvar(e, T_UPJOIN, (uint64_t)(v >> 8)) || putbyte(e, (int)(v & 0xff))) return -1;
      continue;
    }
    lua_pop(L, 1);
    lua_pushlightuserdata(L, uid);
    lua_pushinteger(L, fid * 256 + n);
    lua_rawset(L, e->refs);
    push_step(e, P_UPVAL, 0, 0, name);
    if (encode(e, lua_gettop(L))) return -1;
    e->nstep--;
    lua_pop(L, 1);
  }
  e->b->data[nslot] = (char)(n - 1);
  e->depth--;
  return 0;
}

/* ---------------------------------------------------------------- arrays */

static int enc_array(Enc *e, int idx, const mpb_array *a) {
  int r = seen(e, idx);
  if (r != 0) return r < 0 ? -1 : 0;
  char *d = mpb_wbuf_reserve(e->b, 3 + 10 * MPB_ARRAY_MAXDIM + 7);
  if (!d) return oom(e);
  char *p = d;
  *p++ = T_ARRAY;
  *p++ = (char)a->dtype;
  *p++ = (char)a->ndim;
  for (int k = 0; k < a->ndim; k++) p = mpbw_put_var(p, (uint64_t)a->dims[k]);
  e->b->len += (size_t)(p - d);
  size_t pos = e->b->len + e->b->extlen - e->base;
  size_t pad = (8 - pos % 8) % 8;
  memset(e->b->data + e->b->len, 0, pad);
  e->b->len += pad;
  size_t bytes = mpb_array_bytes(a);
  if (bytes >= MPB_WIRE_EXTMIN)
    return mpbw_add_segment(e->L, e->b, e->bidx, idx, a->data, bytes) ? oom(e) : 0;
  return put(e, a->data, bytes);
}

/* ---------------------------------------------------------------- values */

static int encode(Enc *e, int idx) {
  lua_State *L = e->L;
  switch (lua_type(L, idx)) {
    case LUA_TNIL: return putbyte(e, T_NIL);
    case LUA_TBOOLEAN: return putbyte(e, lua_toboolean(L, idx) ? T_TRUE : T_FALSE);
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        lua_Integer v = lua_tointeger(L, idx);
        if (v >= 0 && v < 0x80) return putbyte(e, T_SMALLINT + (int)v);
        return put_tagvar(e, T_INT, mpbw_zigzag(v));
      } else {
        lua_Number x = lua_tonumber(L, idx);
        char *d = mpb_wbuf_reserve(e->b, 9);
        if (!d) return oom(e);
        d[0] = T_FLT;
        memcpy(d + 1, &x, 8);
        e->b->len += 9;
        return 0;
      }
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      if (len >= MPB_WIRE_STREXT) { /* long: sent in place, like arrays */
        if (put_tagvar(e, T_STR, len)) return -1;
        if (mpbw_add_segment(L, e->b, e->bidx, idx, s, len)) return oom(e);
        e->b->seg[e->b->nseg - 1].str = 1;
        return 0;
      }
      return put_string(e, s, len);
    }
    case LUA_TTABLE: return enc_table(e, idx);
    case LUA_TFUNCTION: return lua_iscfunction(L, idx) ? enc_cfunc(e, idx) : enc_lfunc(e, idx);
    case LUA_TUSERDATA: {
      const mpb_array *a = mpb_array_test(L, idx);
      if (a) return enc_array(e, idx, a);
      double z[2];
      if (mpb_complex_test(L, idx, &z[0], &z[1])) {
        char *d = mpb_wbuf_reserve(e->b, 17);
        if (!d) return oom(e);
        d[0] = T_COMPLEX;
        memcpy(d + 1, z, 16);
        e->b->len += 17;
        return 0;
      }
      if (mpb_array_testv(L, idx)) /* elements apart in memory: one copy makes them a block */
        return fail(e, "cannot send a strided mp.Array view (send a copy: v:copy())");
    } /* FALLTHROUGH */
    default: {
      char msg[64];
      snprintf(msg, sizeof msg, "cannot send a %s", luaL_typename(L, idx));
      return fail(e, msg);
    }
  }
}

/* The n values at first.. onto b, whose body starts at logical offset base
** (arrays are aligned from there) and has numbered *nextid - 1 objects so far
** (the decoder numbers them through the body); header: the format byte and
** the count first; items: say where a value is from its own path. On
** failure b is as it was. */
static int encode_values(lua_State *L, int first, int n, mpb_wbuf *b, int bidx, size_t base,
                         lua_Integer *nextid, int header, int items, char *err, size_t errlen) {
  Enc e;
  first = lua_absindex(L, first);
  e.L = L;
  e.b = b;
  e.bidx = lua_absindex(L, bidx);
  e.nextid = *nextid;
  e.base = base;
  e.G = NULL;
  e.depth = 0;
  e.valno = 0;
  e.rebuilt = 0;
  e.nstep = 0;
  e.err = err;
  e.errlen = errlen;
  size_t len0 = b->len;
  int nseg0 = b->nseg;
  size_t ext0 = b->extlen;
  if (!lua_checkstack(L, 8)) return fail(&e, "Lua stack overflow");
  /* the id table's slot is only needed when there may be shared objects */
  int top = lua_gettop(L);
  e.refs = 0;
  e.names = 0;
  for (int i = 0; i < n && !e.refs; i++) {
    int t = lua_type(L, first + i);
    if (t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TUSERDATA) {
      lua_pushnil(L);
      lua_pushnil(L);
      e.refs = top + 1;
      e.names = top + 2;
    }
  }
  if (header && put_tagvar(&e, MPB_WIRE_FORMAT, (uint64_t)(n < 0 ? 0 : n))) goto bad;
  for (int i = 0; i < n; i++) {
    e.valno = items ? 0 : i + 1;
    if (encode(&e, first + i)) goto bad;
  }
  lua_settop(L, top);
  *nextid = e.nextid;
  return 0;
bad:
  /* leave b as it was: a half message must never be sent */
  b->len = len0;
  b->nseg = nseg0;
  b->extlen = ext0;
  lua_settop(L, top);
  return -1;
}

int mpb_wire_encode(lua_State *L, int first, int n, mpb_wbuf *b, int bidx, char *err,
                    size_t errlen) {
  lua_Integer nextid = 1;
  return encode_values(L, first, n, b, bidx, b->len + b->extlen, &nextid, 1, 0, err, errlen);
}

/* ---------------------------------------------------------------- items */
/* The count goes in ITEMS_COUNT bytes, continuation bits set but in the
** last (a varint the decoder reads as any), written when the body ends. */
#define ITEMS_COUNT 3
#define ITEMS_MAX ((1u << (7 * ITEMS_COUNT)) - 1)

int mpb_wire_items_open(mpb_wbuf *b, mpb_wire_items *it) {
  it->base = b->len + b->extlen;
  it->count = 0;
  it->nextid = 1;
  char *d = mpb_wbuf_reserve(b, 1 + ITEMS_COUNT);
  if (!d) return -1;
  d[0] = MPB_WIRE_FORMAT;
  it->count_at = b->len + 1;
  b->len += 1 + ITEMS_COUNT;
  return 0;
}

int mpb_wire_items_add(lua_State *L, int first, int n, mpb_wbuf *b, int bidx, mpb_wire_items *it,
                       char *err, size_t errlen) {
  if ((uint64_t)it->count + (uint64_t)n > ITEMS_MAX) {
    snprintf(err, errlen, "more than %u values in one message", ITEMS_MAX);
    return -1;
  }
  if (encode_values(L, first, n, b, bidx, it->base, &it->nextid, 0, 1, err, errlen)) return -1;
  it->count += (uint32_t)n;
  return 0;
}

void mpb_wire_items_close(mpb_wbuf *b, const mpb_wire_items *it) {
  char *d = b->data + it->count_at;
  for (int k = 0; k < ITEMS_COUNT; k++)
    d[k] = (char)(((it->count >> (7 * k)) & 0x7f) | (k + 1 < ITEMS_COUNT ? 0x80 : 0));
}
