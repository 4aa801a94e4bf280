/* SPDX-License-Identifier: MIT */
/*
** wire.c: the wire format, and the "mp.WBuf" buffer userdata that the
** encoder (wire_encode.c) writes into. The decoder is wire_decode.c, the
** C-function name table wire_names.c.
**
** ======================================================== the wire format, v1
** A message body:
**     u8 format (= MPB_WIRE_FORMAT, 1)   varint count   count values
** Varints are unsigned LEB128 (7 bits per byte, low first, at most 10 bytes).
** All fixed-width numbers are little-endian. A value is one tag byte and
** what the tag says:
**   0x00 nil   0x01 false   0x02 true
**   0x80..0xFF  integer 0..127 (tag - 0x80): one byte for small integers
**   0x03 INT    integer, zigzag varint (exact 64-bit, mininteger included)
**   0x04 FLT    float, the 8 bytes of the IEEE-754 double (every bit kept:
**               -0.0, infinities, NaN payloads). 1.0 stays a float.
**   0x40..0x5F  string of length 0..31 (tag - 0x40), then its bytes
**   0x05 STR    string: varint length, bytes (any bytes, zeros included)
**   0x06 TABLE  varint narr, u32 nhash, narr values (t[1..narr], nil for
**               holes), nhash (key, value) pairs
**   0x07 TABLEMT  as TABLE, followed by one more value: its metatable (any
**               encodable table: a class table travels with its instances and,
**               being a shared reference, stays shared)
**   0x08 REF    varint id: the id-th table, function or array of this message
**               (1-based, numbered in order of first appearance: the encoder
**               numbers an object when it writes its tag, before its contents,
**               so cycles work)
**   0x09 GLOBALS  the sender's globals table; decodes to the receiver's
**   0x0A LFUNC  Lua function: u32 length, the lua_dump bytecode (with debug
**               info), u8 nups, then each upvalue: a value, or
**   0x0D UPJOIN   (upvalue slots only) varint function id, u8 upvalue index:
**               this upvalue is shared with that upvalue of that (earlier)
**               function, restored with lua_upvaluejoin
**   0x0B CFUNC  C function by name: varint length, name ("print",
**               "math.sin", "mp.send"); resolved on the receiving rank
**   0x0E MODULE a C module: a table that is package.loaded[name] and holds C
**               functions on the sender (when the name cache was built:
**               wire_names.c): varint length, name;
**               decodes to the receiving rank's package.loaded[name]
**   0x0F COMPLEX  an mp.Complex value: two IEEE-754 doubles (real part first)
**   0x0C ARRAY  typed array: u8 dtype (0 f64, 1 f32, 2 i64, 3 i32, 4 u8,
**               5 c64, 6 c128: complex elements are their two parts),
**               u8 ndim (1..8), ndim varint dims, then 0..7 zero bytes so that
**               the elements start at a multiple of 8 bytes from the start of
**               the body, then the n * size raw elements, column-major
** Anything else (userdata, threads, C functions without a name) cannot be
** encoded. Tables, Lua functions and arrays get ids (they are shared
** references); strings and numbers are values. Nesting depth (tables and
** functions inside each other) is at most MPB_WIRE_MAXDEPTH on both sides.
**
** Zero copy: an array of at least MPB_WIRE_EXTMIN bytes is not copied into
** the buffer but recorded as an external segment (mpb_wseg), anchored in the
** buffer's user value; the receiver decodes arrays as views into its receive
** buffer when it passes owner_idx and the elements are 8-byte aligned in
** memory (so the body should start 8-byte aligned), else it copies them.
** Strings are copied (one memcpy each way).
** ============================================================================
*/
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "wire/wire_int.h"

#define WBUF_MT "mp.WBuf"

void mpb_wbuf_release(mpb_wbuf *b) {
  free(b->data);
  free(b->seg);
  memset(b, 0, sizeof *b);
}

static int wbuf_gc(lua_State *L) {
  mpb_wbuf_release(luaL_checkudata(L, 1, WBUF_MT));
  return 0;
}

mpb_wbuf *mpb_wbuf_push(lua_State *L) {
  /* inert (all zero) before any malloc, so __gc is always safe */
  mpb_wbuf *b = lua_newuserdatauv(L, sizeof *b, 1);
  memset(b, 0, sizeof *b);
  if (luaL_newmetatable(L, WBUF_MT)) {
    lua_pushcfunction(L, wbuf_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

mpb_wbuf *mpb_wbuf_check(lua_State *L, int idx) {
  return luaL_checkudata(L, idx, WBUF_MT);
}

/* Out of line: the inline fast path in mpb_wbuf_reserve stays small. */
char *mpb_wbuf_grow(mpb_wbuf *b, size_t n) {
  if (n > SIZE_MAX / 2 - b->len) return NULL;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < n) cap *= 2;
  char *p = realloc(b->data, cap);
  if (!p) return NULL;
  b->data = p;
  b->cap = cap;
  return p + b->len;
}

void mpb_wbuf_flatten(const mpb_wbuf *b, char *dst) {
  size_t at = 0;
  for (int i = 0; i < b->nseg; i++) {
    const mpb_wseg *s = &b->seg[i];
    memcpy(dst, b->data + at, s->at - at);
    dst += s->at - at;
    memcpy(dst, s->ptr, s->len);
    dst += s->len;
    at = s->at;
  }
  if (b->len > at) memcpy(dst, b->data + at, b->len - at);
}

char *mpb_wbuf_steal(mpb_wbuf *b, size_t *len) {
  char *p;
  if (b->nseg > 0) {
    p = malloc(b->len + b->extlen ? b->len + b->extlen : 1);
    if (!p) return NULL;
    mpb_wbuf_flatten(b, p);
    free(b->data);
  } else {
    p = b->data;
  }
  *len = b->len + b->extlen;
  free(b->seg);
  memset(b, 0, sizeof *b);
  return p;
}

void mpb_wbuf_reset(lua_State *L, mpb_wbuf *b, int bidx) {
  b->len = 0;
  b->extlen = 0;
  /* anchors exist only for segments: a buffer of small messages skips this */
  if (bidx != 0 && b->nseg > 0) {
    bidx = lua_absindex(L, bidx);
    lua_pushnil(L);
    lua_setiuservalue(L, bidx, 1);
  }
  b->nseg = 0;
}

int mpbw_add_segment(lua_State *L, mpb_wbuf *b, int bidx, int aidx, const void *ptr,
                     size_t len) {
  if (b->nseg == b->segcap) {
    int cap = b->segcap ? 2 * b->segcap : 4;
    mpb_wseg *s = realloc(b->seg, (size_t)cap * sizeof *s);
    if (!s) return -1;
    b->seg = s;
    b->segcap = cap;
  }
  /* anchor the array first: if that raises (memory), no segment points to it */
  if (lua_getiuservalue(L, bidx, 1) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, bidx, 1);
  }
  lua_pushvalue(L, aidx);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
  b->seg[b->nseg].at = b->len;
  b->seg[b->nseg].ptr = ptr;
  b->seg[b->nseg].len = len;
  b->seg[b->nseg].str = 0;
  b->nseg++;
  b->extlen += len;
  return 0;
}
