/* SPDX-License-Identifier: MIT */
/*
** wire_scalar.c: the codec's short way for messages of scalars (nil,
** booleans, numbers, strings kept inline), the common small message. It
** writes and reads the very bytes of the general encoder and decoder (the
** format is wire.c's), without their set-up: no walk state, no table of
** shared objects, no path for errors. Anything else, and anything odd in a
** body (which the general decoder then explains), takes the general way.
*/
#include "wire/wire_int.h"

#define VAL_MAX 11 /* bytes of any value but a string: a tag and a 10-byte varint */

int mpb_wire_encode_scalars(lua_State *L, int first, int n, mpb_wbuf *b) {
  if (n < 0 || n >= 0x80) return 1; /* one byte of count */
  size_t len0 = b->len;
  char *p = mpb_wbuf_reserve(b, 2 + VAL_MAX * (size_t)n);
  if (!p) return -1;
  *p++ = MPB_WIRE_FORMAT;
  *p++ = (char)n;
  for (int i = 0; i < n; i++) {
    int idx = first + i;
    switch (lua_type(L, idx)) {
      case LUA_TNIL: *p++ = T_NIL; break;
      case LUA_TBOOLEAN: *p++ = lua_toboolean(L, idx) ? T_TRUE : T_FALSE; break;
      case LUA_TNUMBER: {
        if (lua_isinteger(L, idx)) { /* 1 and 1.0 stay apart */
          lua_Integer v = lua_tointeger(L, idx);
          if (v >= 0 && v < 0x80) {
            *p++ = (char)(T_SMALLINT + (int)v);
          } else {
            *p++ = T_INT;
            p = mpbw_put_var(p, mpbw_zigzag(v));
          }
        } else {
          lua_Number x = lua_tonumber(L, idx);
          *p++ = T_FLT;
          memcpy(p, &x, 8);
          p += 8;
        }
        break;
      }
      case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        if (len >= MPB_WIRE_STREXT) goto other; /* sent in place: the general way */
        size_t at = (size_t)(p - b->data);
        b->len = at; /* room from here for this string and the values left */
        if (!(p = mpb_wbuf_reserve(b, VAL_MAX + len + VAL_MAX * (size_t)(n - i)))) {
          b->len = len0;
          return -1;
        }
        if (len <= SHORTSTR_MAX) {
          *p++ = (char)(T_SHORTSTR + len);
        } else {
          *p++ = T_STR;
          p = mpbw_put_var(p, len);
        }
        memcpy(p, s, len);
        p += len;
        break;
      }
      default: goto other;
    }
  }
  b->len = (size_t)(p - b->data);
  return 0;
other:
  b->len = len0;
  return 1;
}

int mpb_wire_decode_scalars(lua_State *L, const void *buf, size_t len) {
  const unsigned char *start = buf, *end = start + len, *p = start + 2;
  if (len < 2 || start[0] != MPB_WIRE_FORMAT || start[1] >= 0x80) return -1;
  int n = start[1], i;
  if (!lua_checkstack(L, n)) return -1;
  for (i = 0; i < n && p < end; i++) { /* pushed as read; anything else: popped */
    unsigned t = *p++;
    uint64_t u = 0;
    if (t >= T_SMALLINT) {
      lua_pushinteger(L, (lua_Integer)(t - T_SMALLINT));
    } else if (t >= T_SHORTSTR && t <= T_SHORTSTR + SHORTSTR_MAX) {
      if (t - T_SHORTSTR > (size_t)(end - p)) break;
      lua_pushlstring(L, (const char *)p, t - T_SHORTSTR);
      p += t - T_SHORTSTR;
    } else if (t == T_FLT) {
      lua_Number x;
      if (end - p < 8) break;
      memcpy(&x, p, 8);
      p += 8;
      lua_pushnumber(L, x);
    } else if (t == T_INT) {
      if (mpbw_get_var(&p, end, &u) <= 0) break;
      lua_pushinteger(L, mpbw_unzigzag(u));
    } else if (t == T_STR) {
      if (mpbw_get_var(&p, end, &u) <= 0 || u > (uint64_t)(end - p)) break;
      lua_pushlstring(L, (const char *)p, (size_t)u);
      p += u;
    } else if (t <= T_TRUE) {
      if (t == T_NIL) lua_pushnil(L);
      else lua_pushboolean(L, t == T_TRUE);
    } else {
      break;
    }
  }
  if (i == n && p == end) return n;
  lua_pop(L, i); /* all scalars, all there, nothing after: else the general way */
  return -1;
}
