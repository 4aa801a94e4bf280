/* SPDX-License-Identifier: MIT */
/*
** wire_decode.c: the wire format (described in wire.c) -> Lua values.
**
** The decoder trusts nothing: every length and count is checked against the
** bytes that remain before anything is allocated (so a corrupt count cannot
** make it allocate more than a small multiple of the message size), the
** nesting depth is bounded (and the Lua stack grown for it), reference ids
** and upvalue indices are checked before use (lua_upvaluejoin does not check
** them), table keys are checked (lua_rawset would raise on nil or NaN), and
** function bytecode goes through lua_load in binary mode only. On any error
** the stack is reset to where it was and nothing is left half-built.
**
** Bytecode is loaded, never run, here; like Lua itself, the decoder does not
** verify that loaded bytecode is safe to run: peers of one job are trusted,
** corruption is what the checks are for.
*/
#include <stdarg.h>
#include <stdio.h>

#include "lauxlib.h"
#include "array/array.h"
#include "wire/wire_int.h"
#include "wire/wire_lstr.h"

typedef struct Dec {
  lua_State *L;
  const unsigned char *start, *p, *end;
  int owner;           /* absolute index of the buffer's owner, or 0: copy */
  int refs;            /* stack slot: nil, or the table id -> object */
  lua_Integer nextid;
  int depth;
  int views;           /* arrays made views into the buffer */
  mpb_wire_str *strs;  /* long strings received apart, in order, and the next one */
  int nstrs, nextstr;
  mpb_lstr *lstr;
  int base;            /* stack top on entry */
  char *err;
  size_t errlen;
} Dec;

static int decode(Dec *d);

static int bad(Dec *d, const char *fmt, ...) {
  if (d->errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err, d->errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static inline size_t left(const Dec *d) { return (size_t)(d->end - d->p); }

static int truncated(Dec *d, const char *what, size_t at) {
  return bad(d, "truncated %s at byte %zu", what, at);
}

static int getvarint(Dec *d, uint64_t *v, const char *what, size_t at) {
  int got = mpbw_get_var(&d->p, d->end, v);
  if (got > 0) return 0;
  if (got == 0) return truncated(d, what, at);
  return bad(d, "bad varint in %s at byte %zu", what, at);
}

/* Give the object on top the next id. The id table is created on first use
** and slid under the values decoded so far (only negative indices and
** indices below it are held across this call), so messages of plain values
** never pay for it. */
static void reg(Dec *d) {
  lua_State *L = d->L;
  if (d->refs == 0) {
    lua_newtable(L);
    d->refs = d->base + 1;
    lua_insert(L, d->refs);
  }
  lua_pushvalue(L, -1);
  lua_rawseti(L, d->refs, d->nextid++);
}

static int enter(Dec *d, size_t at) {
  if (++d->depth > MPB_WIRE_MAXDEPTH)
    return bad(d, "nesting deeper than %d levels at byte %zu", MPB_WIRE_MAXDEPTH, at);
  if (!lua_checkstack(d->L, 8)) return bad(d, "Lua stack overflow at byte %zu", at);
  return 0;
}

/* Push the object with reference id `id` (read at byte at). */
static int getref(Dec *d, uint64_t id, size_t at) {
  if (id < 1 || id >= (uint64_t)d->nextid)
    return bad(d, "bad reference %llu at byte %zu", (unsigned long long)id, at);
  lua_rawgeti(d->L, d->refs, (lua_Integer)id);
  return 0;
}

/* ---------------------------------------------------------------- tables */

static int dec_table(Dec *d, int withmt, size_t at) {
  lua_State *L = d->L;
  uint64_t narr = 0;
  if (enter(d, at) || getvarint(d, &narr, "table", at)) return -1;
  if (left(d) < 4) return truncated(d, "table", at);
  uint32_t nhash = mpbw_get_u32(d->p);
  d->p += 4;
  /* every value takes at least one byte: bounds the preallocation */
  if (narr > left(d) || nhash > (left(d) - narr) / 2)
    return bad(d, "bad table size at byte %zu", at);
  lua_createtable(L, narr < INT32_MAX ? (int)narr : 0, (int)(nhash < INT32_MAX ? nhash : 0));
  reg(d);
  for (uint64_t i = 1; i <= narr; i++) {
    if (decode(d)) return -1;
    lua_rawseti(L, -2, (lua_Integer)i);
  }
  for (uint32_t j = 0; j < nhash; j++) {
    size_t kat = (size_t)(d->p - d->start);
    if (decode(d)) return -1;
    if (lua_isnil(L, -1) || (lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) != lua_tonumber(L, -1)))
      return bad(d, "bad table key (nil or NaN) at byte %zu", kat);
    if (decode(d)) return -1;
    lua_rawset(L, -3);
  }
  if (withmt) {
    size_t mat = (size_t)(d->p - d->start);
    if (decode(d)) return -1;
    if (!lua_istable(L, -1)) return bad(d, "metatable is not a table at byte %zu", mat);
    lua_setmetatable(L, -2);
  }
  d->depth--;
  return 0;
}

/* ---------------------------------------------------------------- functions */

typedef struct Span {
  const char *p;
  size_t n;
} Span;

static const char *span_reader(lua_State *L, void *ud, size_t *size) {
  Span *s = ud;
  *size = s->n;
  s->n = 0;
  return *size ? s->p : NULL;
}

static int join_upvalue(Dec *d, int fidx, int i, size_t at) {
  lua_State *L = d->L;
  uint64_t gid = 0;
  if (getvarint(d, &gid, "upvalue", at)) return -1;
  if (left(d) < 1) return truncated(d, "upvalue", at);
  int j = *d->p++;
  if (getref(d, gid, at)) return -1;
  /* lua_upvaluejoin checks neither the closures nor the indices: we do */
  if (lua_type(L, -1) != LUA_TFUNCTION || lua_iscfunction(L, -1) || j < 1 ||
      lua_getupvalue(L, -1, j) == NULL)
    return bad(d, "bad shared upvalue at byte %zu", at);
  lua_pop(L, 1);
  lua_upvaluejoin(L, fidx, i, -1, j);
  lua_pop(L, 1);
  return 0;
}

static int dec_lfunc(Dec *d, size_t at) {
  lua_State *L = d->L;
  if (enter(d, at)) return -1;
  if (left(d) < 4) return truncated(d, "function", at);
  uint32_t blen = mpbw_get_u32(d->p);
  d->p += 4;
  if (blen > left(d)) return truncated(d, "function", at);
  Span s = {(const char *)d->p, blen};
  if (lua_load(L, span_reader, &s, "=(wire)", "b") != LUA_OK)
    return bad(d, "bad function at byte %zu: %s", at, lua_tostring(L, -1));
  d->p += blen;
  reg(d);
  int fidx = lua_gettop(L);
  if (left(d) < 1) return truncated(d, "function", at);
  int nups = *d->p++;
  int ok = lua_getupvalue(L, fidx, nups + 1) == NULL;
  if (ok && nups > 0 && (ok = lua_getupvalue(L, fidx, nups) != NULL)) lua_pop(L, 1);
  if (!ok) return bad(d, "wrong upvalue count at byte %zu", at);
  for (int i = 1; i <= nups; i++) {
    size_t uat = (size_t)(d->p - d->start);
    if (d->p < d->end && *d->p == T_UPJOIN) {
      d->p++;
      if (join_upvalue(d, fidx, i, uat)) return -1;
    } else {
      if (decode(d)) return -1;
      lua_setupvalue(L, fidx, i);
    }
  }
  d->depth--;
  return 0;
}

static int dec_cfunc(Dec *d, size_t at) {
  uint64_t len = 0;
  if (getvarint(d, &len, "C function name", at)) return -1;
  if (len > left(d)) return truncated(d, "C function name", at);
  const char *name = (const char *)d->p;
  d->p += len;
  if (!mpbw_cfunc_resolve(d->L, name, (size_t)len))
    return bad(d, "unknown C function '%.*s' at byte %zu", (int)(len > 60 ? 60 : len), name, at);
  return 0;
}

static int dec_module(Dec *d, size_t at) {
  uint64_t len = 0;
  if (getvarint(d, &len, "module name", at)) return -1;
  if (len > left(d)) return truncated(d, "module name", at);
  const char *name = (const char *)d->p;
  d->p += len;
  if (!mpbw_module_resolve(d->L, name, (size_t)len))
    return bad(d, "module '%.*s' (sent by name) is not loaded here: require it on every rank, "
               "at byte %zu", (int)(len > 60 ? 60 : len), name, at);
  return 0;
}

/* ---------------------------------------------------------------- arrays */

static int dec_array(Dec *d, size_t at) {
  lua_State *L = d->L;
  int64_t dims[MPB_ARRAY_MAXDIM];
  if (left(d) < 2) return truncated(d, "array", at);
  int dtype = d->p[0], ndim = d->p[1];
  d->p += 2;
  if (dtype >= MPB_NDTYPE || ndim < 1 || ndim > MPB_ARRAY_MAXDIM)
    return bad(d, "bad array header at byte %zu", at);
  for (int k = 0; k < ndim; k++) {
    uint64_t v = 0;
    if (getvarint(d, &v, "array", at)) return -1;
    if (v > (uint64_t)INT64_MAX) return bad(d, "bad array shape at byte %zu", at);
    dims[k] = (int64_t)v;
  }
  int64_t n = mpb_array_count(dtype, ndim, dims);
  if (n < 0) return bad(d, "bad array shape at byte %zu", at);
  size_t pad = (8 - (size_t)(d->p - d->start) % 8) % 8;
  size_t es = mpb_dtype_size(dtype), bytes = (size_t)n * es;
  if (pad > left(d) || bytes > left(d) - pad) return truncated(d, "array", at);
  d->p += pad;
  if (d->owner && (uintptr_t)d->p % es == 0) {
    mpb_array_view(L, d->owner, (void *)d->p, dtype, ndim, dims);
    d->views++;
  } else {
    mpb_array *a = mpb_array_new(L, dtype, ndim, dims);
    memcpy(a->data, d->p, bytes);
  }
  d->p += bytes;
  reg(d);
  return 0;
}

/* ---------------------------------------------------------------- values */

static int decode(Dec *d) {
  lua_State *L = d->L;
  size_t at = (size_t)(d->p - d->start);
  if (d->p == d->end) return truncated(d, "message", at);
  unsigned t = *d->p++;
  if (t >= T_SMALLINT) {
    lua_pushinteger(L, (lua_Integer)(t - T_SMALLINT));
    return 0;
  }
  if (t >= T_SHORTSTR && t <= T_SHORTSTR + SHORTSTR_MAX) {
    size_t len = t - T_SHORTSTR;
    if (len > left(d)) return truncated(d, "string", at);
    lua_pushlstring(L, (const char *)d->p, len);
    d->p += len;
    return 0;
  }
  uint64_t u = 0;
  switch (t) {
    case T_NIL: lua_pushnil(L); return 0;
    case T_FALSE: lua_pushboolean(L, 0); return 0;
    case T_TRUE: lua_pushboolean(L, 1); return 0;
    case T_INT:
      if (getvarint(d, &u, "integer", at)) return -1;
      lua_pushinteger(L, mpbw_unzigzag(u));
      return 0;
    case T_FLT: {
      lua_Number x;
      if (left(d) < 8) return truncated(d, "float", at);
      memcpy(&x, d->p, 8);
      d->p += 8;
      lua_pushnumber(L, x);
      return 0;
    }
    case T_STR:
      if (getvarint(d, &u, "string", at)) return -1;
      if (d->nextstr < d->nstrs && (size_t)(d->p - d->start) == d->strs[d->nextstr].at) {
        mpb_wire_str *x = &d->strs[d->nextstr++]; /* received apart: Lua adopts it */
        if (u != x->len) return bad(d, "string of %zu bytes at byte %zu", x->len, at);
        if ((u & 7) > left(d)) return truncated(d, "string", at);
        mpb_lstr_push(L, d->lstr, &x->s, x->len);
        d->p += u & 7; /* the gap that keeps what follows aligned */
        return 0;
      }
      if (u > left(d)) return truncated(d, "string", at);
      lua_pushlstring(L, (const char *)d->p, (size_t)u);
      d->p += u;
      return 0;
    case T_TABLE: return dec_table(d, 0, at);
    case T_TABLEMT: return dec_table(d, 1, at);
    case T_REF:
      if (getvarint(d, &u, "reference", at)) return -1;
      return getref(d, u, at);
    case T_GLOBALS: lua_pushglobaltable(L); return 0;
    case T_LFUNC: return dec_lfunc(d, at);
    case T_CFUNC: return dec_cfunc(d, at);
    case T_MODULE: return dec_module(d, at);
    case T_ARRAY: return dec_array(d, at);
    case T_COMPLEX: {
      double z[2];
      if (left(d) < 16) return truncated(d, "complex value", at);
      memcpy(z, d->p, 16);
      d->p += 16;
      mpb_complex_push(L, z[0], z[1]);
      return 0;
    }
    default: return bad(d, "bad tag 0x%02x at byte %zu", t, at);
  }
}

int mpb_wire_decode(lua_State *L, const void *buf, size_t len, int owner_idx, char *err,
                    size_t errlen) {
  int views;
  return mpb_wire_decode_views(L, buf, len, owner_idx, &views, err, errlen);
}

int mpb_wire_decode_views(lua_State *L, const void *buf, size_t len, int owner_idx,
                          int *views, char *err, size_t errlen) {
  return mpb_wire_decode_strs(L, buf, len, owner_idx, NULL, 0, NULL, views, err, errlen);
}

int mpb_wire_decode_strs(lua_State *L, const void *buf, size_t len, int owner_idx,
                         mpb_wire_str *strs, int nstrs, mpb_lstr *lstr, int *views, char *err,
                         size_t errlen) {
  Dec d;
  d.strs = strs;
  d.nstrs = nstrs;
  d.nextstr = 0;
  d.lstr = lstr;
  int base = lua_gettop(L);
  uint64_t count = 0;
  d.L = L;
  d.start = d.p = buf;
  d.end = d.start + len;
  d.owner = owner_idx ? lua_absindex(L, owner_idx) : 0;
  d.nextid = 1;
  d.depth = 0;
  d.views = 0;
  *views = 0;
  d.err = err;
  d.errlen = errlen;
  d.refs = 0;
  d.base = base;
  if (len < 1 || d.start[0] != MPB_WIRE_FORMAT) {
    bad(&d, len < 1 ? "empty message" : "not a message (format byte 0x%02x)", len ? d.start[0] : 0);
    return -1;
  }
  d.p++;
  if (getvarint(&d, &count, "value count", 1)) return -1;
  if (count > left(&d)) return bad(&d, "bad value count %llu", (unsigned long long)count);
  if (count > INT32_MAX - 16 || !lua_checkstack(L, (int)count + 8)) return bad(&d, "too many values (%llu)", (unsigned long long)count);
  for (uint64_t k = 0; k < count; k++)
    if (decode(&d)) goto fail;
  if (d.p != d.end) {
    bad(&d, "trailing bytes at byte %zu", (size_t)(d.p - d.start));
    goto fail;
  }
  if (d.nextstr < d.nstrs) {
    bad(&d, "no string where a part is at byte %zu", d.strs[d.nextstr].at);
    goto fail;
  }
  if (d.refs) lua_remove(L, d.refs);
  *views = d.views;
  return (int)count;
fail:
  lua_settop(L, base);
  return -1;
}
