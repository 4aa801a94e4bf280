/* SPDX-License-Identifier: MIT */
/*
** wire_int.h: what the wire codec's files share (not for other modules).
** Internal names use the prefix mpbw_. The format is described in wire.c.
*/
#ifndef MPB_WIRE_INT_H
#define MPB_WIRE_INT_H

#include <stdint.h>
#include <string.h>
#include "lua.h"
#include "wire/wire.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the wire format stores floats and array elements little-endian: big-endian hosts are not supported"
#endif

/* Value tags (one byte). */
enum {
  T_NIL = 0x00, T_FALSE = 0x01, T_TRUE = 0x02,
  T_INT = 0x03,      /* zigzag varint */
  T_FLT = 0x04,      /* 8 bytes, IEEE-754 binary64 bits, little-endian */
  T_STR = 0x05,      /* varint length, bytes */
  T_TABLE = 0x06,    /* varint narr, u32 nhash, narr values, nhash key/value pairs */
  T_TABLEMT = 0x07,  /* as T_TABLE, then its metatable (a value decoding to a table) */
  T_REF = 0x08,      /* varint id of an earlier table, function or array */
  T_GLOBALS = 0x09,  /* the sender's globals table: the receiver's */
  T_LFUNC = 0x0A,    /* u32 length, bytecode, u8 nups, nups upvalues */
  T_CFUNC = 0x0B,    /* varint length, name ("print", "math.sin", "mp.send") */
  T_ARRAY = 0x0C,    /* u8 dtype, u8 ndim, ndim varint dims, pad to 8, elements */
  T_UPJOIN = 0x0D,   /* upvalue slot only: varint function id, u8 upvalue index */
  T_MODULE = 0x0E,   /* varint length, name: the table package.loaded[name] */
  T_COMPLEX = 0x0F,  /* an mp.Complex: 16 bytes, the real and imaginary parts' bits */
  T_SHORTSTR = 0x40, /* 0x40..0x5F: string of length tag - 0x40 (0..31), bytes */
  T_SMALLINT = 0x80  /* 0x80..0xFF: integer tag - 0x80 (0..127) */
};
#define SHORTSTR_MAX 31

/* Registry key of the C function / module table -> name cache (wire_names.c). */
#define MPBW_CNAMES "mp.wire.cnames"
/* Registry key of the set of the runtime's own Lua functions (mpb_wire_own). */
#define MPBW_OWN "mp.wire.own"

/* Push the name under which the C function at idx (or a Lua function that
** is a C module's own: wire_names.c) can be sent, or return 0
** (nothing pushed) if it has none. rebuild: refresh the cache first (modules
** loaded since it was built). */
int mpbw_cfunc_name(lua_State *L, int idx, int rebuild);
/* Push the function named name[0..len) on this rank, or return 0 (nothing
** pushed) if there is no such function here. */
int mpbw_cfunc_resolve(lua_State *L, const char *name, size_t len);
/* Push the name cache (built if there is none yet). */
void mpbw_names(lua_State *L);
/* Push the module table named name[0..len) on this rank (package.loaded,
** else a global of that name), or return 0 (nothing pushed). */
int mpbw_module_resolve(lua_State *L, const char *name, size_t len);

/* Record `len` external bytes at ptr (the elements of the array at absolute
** index aidx) at the current end of b, anchoring the array in the user value
** of b's userdata (absolute index bidx). Returns 0, or -1 when out of memory. */
int mpbw_add_segment(lua_State *L, mpb_wbuf *b, int bidx, int aidx, const void *ptr,
                     size_t len);

/* Integers: zigzag (small magnitudes of either sign give short varints),
** then a varint (7 bits a byte, low first, at most 10 bytes). */
static inline uint64_t mpbw_zigzag(lua_Integer v) {
  uint64_t u = (uint64_t)v << 1;
  return v < 0 ? ~u : u;
}
static inline lua_Integer mpbw_unzigzag(uint64_t u) {
  return (lua_Integer)((u >> 1) ^ (~(u & 1) + 1));
}
/* Write the varint of v at p; returns the byte after it. */
static inline char *mpbw_put_var(char *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (char)v;
  return p;
}
/* Read a varint at *pp (before end), moving *pp past what it read: 1, or 0
** when truncated, -1 when longer than 64 bits. */
static inline int mpbw_get_var(const unsigned char **pp, const unsigned char *end, uint64_t *v) {
  const unsigned char *p = *pp;
  uint64_t r = 0;
  int got = -1;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p == end) {
      got = 0;
      break;
    }
    unsigned c = *p++;
    if (shift == 63 && c > 1) break;
    r |= (uint64_t)(c & 0x7f) << shift;
    if (c < 0x80) {
      *v = r;
      got = 1;
      break;
    }
  }
  *pp = p;
  return got;
}

static inline void mpbw_put_u32(char *p, uint32_t v) {
  p[0] = (char)v; p[1] = (char)(v >> 8); p[2] = (char)(v >> 16); p[3] = (char)(v >> 24);
}
static inline uint32_t mpbw_get_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
