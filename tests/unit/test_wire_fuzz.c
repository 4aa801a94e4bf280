/* SPDX-License-Identifier: MIT */
/*
** test_wire_fuzz.c: the decoder against hostile input: every truncation of
** several messages, thousands of randomly corrupted copies (fixed seeds), the
** depth limit, and hand-made malformed messages. The decoder must return -1
** with a message (or decode something) and leave the stack as it was; it
** must never crash (run this under -DMPLUA_SANITIZE=ON too).
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "lualib.h"
#include "array/array.h"
#include "wire/wire.h"

/* Corrupt bytecode may ask lua_load for gigabytes: refuse, as a full
** machine would (lua_load then fails cleanly with a memory error). */
static void *capalloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud, (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return nsize > ((size_t)64 << 20) ? NULL : realloc(ptr, nsize);
}

static lua_State *newstate(void) {
  lua_State *L = lua_newstate(capalloc, NULL);
  cr_assert_not_null(L);
  luaL_openlibs(L);
  lua_newtable(L);
  mpb_open_array(L);
  lua_setglobal(L, "mp");
  return L;
}

/* The flattened encoding of what `code` returns (malloc'ed). */
static char *encode_code(lua_State *L, const char *code, size_t *len) {
  int top = lua_gettop(L);
  if (luaL_dostring(L, code)) cr_assert_fail("%s", lua_tostring(L, -1));
  int n = lua_gettop(L) - top;
  char err[256];
  mpb_wbuf *b = mpb_wbuf_push(L);
  cr_assert_eq(mpb_wire_encode(L, top + 1, n, b, -1, err, sizeof err), 0, "%s", err);
  *len = b->len + b->extlen;
  char *m = malloc(*len + 1);
  mpb_wbuf_flatten(b, m);
  lua_settop(L, top);
  return m;
}

/* Decode into L; returns the count (values popped) or -1; checks the stack. */
static int try_decode(lua_State *L, const char *buf, size_t len, int owner, char *err) {
  int top = lua_gettop(L);
  int n = mpb_wire_decode(L, buf, len, owner, err, 256);
  if (n < 0) {
    cr_assert_eq(lua_gettop(L), top, "failed decode left values on the stack");
    cr_assert(err[0] != '\0', "failed decode without a message");
  } else {
    cr_assert_eq(lua_gettop(L), top + n);
    lua_settop(L, top);
  }
  return n;
}

static const char *messages[] = {
    "return 42",
    "return -3.25, 'hello', nil, true, 123456789012345",
    "local t = {1, 2.5, 'three', {4}, x = {y = {z = 'deep'}}}; t.self = t; t[t] = false\n"
    "return t, setmetatable({}, {__index = t})",
    "local function fib(n) return n < 2 and n or fib(n - 1) + fib(n - 2) end\n"
    "local c = 0; local function inc() c = c + 1 end; local function get() return c end\n"
    "return fib, inc, get, {math.sin, print, f = function() return string.rep('a', 3) end}",
    "local a = mp.array('f64', 3, 2); a[1] = 1/0\n"
    "return a, mp.array('i32', {{1, 2}, {3, 4}}), mp.array('u8', 5000), mp.array('i64', 1), a",
    "return string.rep('\\0\\1', 40), {[1.5] = {}, [-1] = 'n', [true] = 0}, mp.array('f32', 0)",
};
#define NMSG (sizeof messages / sizeof messages[0])

Test(wire_fuzz, every_truncation) {
  lua_State *L = newstate();
  char err[256];
  for (size_t m = 0; m < NMSG; m++) {
    size_t len;
    char *buf = encode_code(L, messages[m], &len);
    for (size_t cut = 0; cut < len; cut++) {
      char *part = malloc(cut ? cut : 1);  /* exact size: ASan sees overreads */
      memcpy(part, buf, cut);
      err[0] = '\0';
      cr_assert_eq(try_decode(L, part, cut, 0, err), -1, "message %zu cut at %zu decoded", m, cut);
      free(part);
    }
    cr_assert_geq(try_decode(L, buf, len, 0, err), 0, "message %zu: %s", m, err);
    free(buf);
  }
  lua_close(L);
}

static uint64_t rng;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

Test(wire_fuzz, random_corruption) {
  lua_State *L = newstate();
  char err[256];
  int decoded = 0, rejected = 0;
  for (size_t m = 0; m < NMSG; m++) {
    size_t len;
    char *buf = encode_code(L, messages[m], &len);
    for (uint64_t seed = 1; seed <= 3000; seed++) {
      rng = seed * 0x9E3779B97F4A7C15ull + m;
      /* an 8-aligned userdata owns the copy, so views may be made into it */
      char *c = lua_newuserdatauv(L, len, 0);
      int owner = lua_gettop(L);
      memcpy(c, buf, len);
      int flips = 1 + (int)(next_rand() % 4);
      for (int k = 0; k < flips; k++) c[next_rand() % len] = (char)next_rand();
      size_t clen = (next_rand() % 8 == 0) ? next_rand() % (len + 1) : len;
      err[0] = '\0';
      int n = try_decode(L, c, clen, (seed & 1) ? owner : 0, err);
      if (n < 0) rejected++; else decoded++;
      lua_pop(L, 1);
      if (seed % 500 == 0) lua_gc(L, LUA_GCCOLLECT);
    }
    free(buf);
  }
  cr_log_info("corruption: %d decoded, %d rejected (seeds 1..3000 per message)", decoded, rejected);
  cr_assert_gt(rejected, 0);
  lua_close(L);
}

Test(wire_fuzz, random_garbage) {
  lua_State *L = newstate();
  char err[256], buf[64];
  for (uint64_t seed = 1; seed <= 20000; seed++) {
    rng = seed * 0xD1B54A32D192ED03ull;
    size_t len = next_rand() % sizeof buf;
    for (size_t k = 0; k < len; k++) buf[k] = (char)next_rand();
    if (len) buf[0] = MPB_WIRE_FORMAT;
    if (len > 1) buf[1] = (char)(next_rand() % 4);
    try_decode(L, buf, len, 0, err);
  }
  lua_close(L);
}

/* ---------------------------------------------------------------- depth */

Test(wire_fuzz, depth_limit) {
  lua_State *L = newstate();
  char err[256];
  const char *nest = "local function nest(n) local t = {} for i = 2, n do t = {t} end return t end\n";
  char code[512];
  snprintf(code, sizeof code, "%s return nest(%d)", nest, MPB_WIRE_MAXDEPTH);
  size_t len;
  char *ok = encode_code(L, code, &len);
  cr_assert_eq(try_decode(L, ok, len, 0, err), 1, "%s", err);
  free(ok);
  snprintf(code, sizeof code, "%s return 1, nest(%d)", nest, MPB_WIRE_MAXDEPTH + 1);
  luaL_dostring(L, code);
  mpb_wbuf *b = mpb_wbuf_push(L);
  cr_assert_eq(mpb_wire_encode(L, -3, 2, b, -1, err, sizeof err), -1);
  cr_assert(strstr(err, "nesting deeper than 200 levels (at value #2 [1][1]") == err, "%s", err);
  lua_settop(L, 0);

  /* hand-made: 201 nested tables {{{...}}} */
  size_t n = 2 + 6 * (MPB_WIRE_MAXDEPTH + 1) + 1, p = 0;
  unsigned char *m = malloc(n);
  m[p++] = MPB_WIRE_FORMAT;
  m[p++] = 1;
  for (int i = 0; i <= MPB_WIRE_MAXDEPTH; i++) {
    m[p++] = 0x06;  /* TABLE narr=1 nhash=0 */
    m[p++] = 1;
    for (int k = 0; k < 4; k++) m[p++] = 0;
  }
  m[p++] = 0x80;
  cr_assert_eq(try_decode(L, (char *)m, p, 0, err), -1);
  cr_assert(strstr(err, "nesting deeper than 200 levels"), "%s", err);
  /* the same, one level less, decodes */
  cr_assert_eq(try_decode(L, (char *)m + 6, p - 6, 0, err), -1, "shifted: not a message");
  m[6] = MPB_WIRE_FORMAT;
  m[7] = 1;
  cr_assert_eq(try_decode(L, (char *)m + 6, p - 6, 0, err), 1, "%s", err);
  free(m);
  lua_close(L);
}

/* ---------------------------------------------------------------- malformed */

static void expect_bad(const char *bytes, size_t len, const char *what) {
  lua_State *L = newstate();
  char err[256];
  char *m = malloc(len ? len : 1);
  memcpy(m, bytes, len);
  cr_assert_eq(try_decode(L, m, len, 0, err), -1, "decoded: expected '%s'", what);
  cr_assert(strstr(err, what), "got '%s', expected '%s'", err, what);
  free(m);
  lua_close(L);
}

#define BAD(lit, what) expect_bad(lit, sizeof lit - 1, what)

Test(wire_fuzz, malformed) {
  BAD("", "empty message");
  BAD("\x02\x01\x80", "not a message");
  BAD("\x01\x05\x80", "bad value count");
  BAD("\x01\x01\x80\x80", "trailing bytes at byte 3");
  BAD("\x01\x01\x05\x05" "abc", "truncated string at byte 2");
  BAD("\x01\x01\x45" "abc", "truncated string at byte 2");
  BAD("\x01\x01\x05\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "bad varint");
  BAD("\x01\x01\x04\x00\x00", "truncated float");
  BAD("\x01\x01\x06\xff\xff\x03\x00\x00\x00\x00", "bad table size");
  BAD("\x01\x01\x06\x00\xff\xff\xff\xff\x80\x80", "bad table size");
  BAD("\x01\x01\x06\x00\x01\x00\x00\x00\x00\x80", "bad table key");
  BAD("\x01\x01\x06\x00\x01\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\xf8\x7f\x80", "bad table key");
  BAD("\x01\x01\x07\x00\x00\x00\x00\x00\x80", "metatable is not a table");
  BAD("\x01\x01\x08\x01", "bad reference 1");
  BAD("\x01\x01\x06\x01\x00\x00\x00\x00\x08\x02", "bad reference 2");
  BAD("\x01\x01\x0a\x03\x00\x00\x00" "abc\x00", "bad function");
  BAD("\x01\x01\x0a\xff\x00\x00\x00" "abc", "truncated function");
  BAD("\x01\x01\x0b\x07" "nothere", "unknown C function 'nothere'");
  BAD("\x01\x01\x0b\x0b" "string.nope", "unknown C function");
  BAD("\x01\x01\x0b\x03" "_G.", "unknown C function");
  BAD("\x01\x01\x0c\x07\x01\x00", "bad array header"); /* dtypes 0..6 */
  BAD("\x01\x01\x0c\x00\x00", "bad array header");
  BAD("\x01\x01\x0c\x00\x09", "bad array header");
  BAD("\x01\x01\x0c\x00\x01\x02" "\x00\x00\x00\x00\x00\x00\x00\x00", "truncated array");
  BAD("\x01\x01\x0c\x00\x02\xff\xff\xff\xff\xff\xff\xff\xff\x7f\xff\xff\xff\xff\xff\xff\xff\xff\x7f",
      "bad array shape");
  BAD("\x01\x01\x0d\x01\x01", "bad tag 0x0d");
  BAD("\x01\x01\x3f", "bad tag 0x3f");
}

/* Hand-made function messages: upvalue count and joins are checked before
** lua_upvaluejoin / lua_setupvalue see them. */
Test(wire_fuzz, malformed_functions) {
  lua_State *L = newstate();
  char err[256];
  size_t len;
  /* f has 1 upvalue (c); g has 1 (c, shared) */
  char *m = encode_code(L, "local c = 0 local function f() c = c + 1 end local function g() return c end\n"
                           "return f, g", &len);
  cr_assert_eq(try_decode(L, m, len, 0, err), 2, "%s", err);
  /* the last 3 bytes are g's nups (1), UPJOIN, id 1, index 1 */
  cr_assert_eq((unsigned char)m[len - 3], 0x0d);
  m[len - 1] = 2;  /* f has no upvalue 2 */
  cr_assert_eq(try_decode(L, m, len, 0, err), -1);
  cr_assert(strstr(err, "bad shared upvalue"), "%s", err);
  m[len - 1] = 1;
  m[len - 2] = 2;  /* id 2 is g itself: allowed (joins its own slot) */
  try_decode(L, m, len, 0, err);
  m[len - 2] = 3;
  cr_assert_eq(try_decode(L, m, len, 0, err), -1);
  cr_assert(strstr(err, "bad reference 3"), "%s", err);
  m[len - 2] = 1;
  m[len - 4] = 2;  /* g's upvalue count */
  cr_assert_eq(try_decode(L, m, len, 0, err), -1);
  cr_assert(strstr(err, "wrong upvalue count"), "%s", err);
  free(m);
  lua_close(L);
}
