/* SPDX-License-Identifier: MIT */
/*
** libFuzzer target: a received message as a hostile peer could make it.
** The first byte picks what the rest is:
**   0  a message body, decoded with copies          (wire_decode.c)
**   1  a message body, decoded as views of its buffer
**   2  u32 n, then a received message of n bytes and the bytes of its parts:
**      classified as the receiver does (frame.c: too short, whole, or the
**      header of a message in parts, checked), the message laid out as the
**      receiver lays it out, and the result decoded
** Malformed input must be an error, never a crash, a leak or a read out of
** bounds. Built and run by scripts/fuzz.sh (clang, -fsanitize=fuzzer,address).
*/
#define _GNU_SOURCE /* dlsym(RTLD_NEXT) */
#include <stdint.h>
#include <stdlib.h>
#include <dlfcn.h>
#include <string.h>

#include "lauxlib.h"
#include "lualib.h"
#include "array/array.h"
#include "chan/chan.h"
#include "chan/frame.h"
#include "wire/wire.h"

/* A corrupt message may ask for gigabytes: refuse, as a full
** machine would (the decoding then fails with a memory error). */
static void *capalloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud, (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return nsize > ((size_t)64 << 20) ? NULL : realloc(ptr, nsize);
}

/* Lua does not check binary chunks: a crafted one crashes lua_load itself
** (its manual says so; mplua's trust model: ranks of a job trust each
** other's bytecode). The decoder's own checks are what is fuzzed, so this
** lua_load, which the decoder's call binds to in this program, refuses
** bytecode as a load that failed. */
LUA_API int lua_load(lua_State *Ls, lua_Reader reader, void *data, const char *chunkname,
                     const char *mode) {
  if (mode && strcmp(mode, "b") == 0) {
    lua_pushliteral(Ls, "bytecode is not loaded by the fuzzer");
    return LUA_ERRSYNTAX;
  }
  static int (*real)(lua_State *, lua_Reader, void *, const char *, const char *);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "lua_load");
  return real(Ls, reader, data, chunkname, mode);
}

static lua_State *L;

static void decode(const char *body, size_t len, int views) {
  char err[MPB_ERRLEN];
  int top = lua_gettop(L), owner = 0;
  char *copy = NULL;
  if (views) { /* the buffer owned by a userdata, 8-byte aligned as received */
    copy = lua_newuserdatauv(L, len ? len : 1, 0);
    memcpy(copy, body, len);
    body = copy;
    owner = lua_gettop(L);
  }
  int n = mpb_wire_decode(L, body, len, owner, err, sizeof err);
  if (n < 0 && lua_gettop(L) != top + (views ? 1 : 0)) abort(); /* left values behind */
  lua_settop(L, top);
}

static void parts(const uint8_t *data, size_t size) {
  if (size < 4) return;
  uint32_t hlen;
  memcpy(&hlen, data, 4);
  data += 4, size -= 4;
  if (hlen > size) return;
  mpb_frame f;
  char err[MPB_ERRLEN];
  int kind = mpb_frame_classify((const char *)data, hlen, 0x0fffffff, &f, err, sizeof err);
  if (kind == MPB_RECV_WHOLE) { /* read as the receiver reads a whole message */
    decode((const char *)data + sizeof(mpb_uhdr), hlen - sizeof(mpb_uhdr), 1);
    return;
  }
  if (kind != MPB_RECV_PARTS) return;
  if (f.total > ((size_t)1 << 22)) return; /* a real receiver would try; memory is not the point */
  char *w = malloc(f.inlen + f.total + 1);
  if (!w) return;
  const char *src = (const char *)data + hlen;
  size_t left = size - hlen, from = 0, to = 0;
  for (size_t i = 0; i < f.nparts; i++) {
    size_t at, len;
    int str;
    mpb_frame_part(&f, i, &at, &len, &str);
    memcpy(w + to, data + from, at - from);
    to += at - from;
    from = at;
    size_t k = len < left ? len : left; /* the part's bytes, short ones zero-filled */
    memcpy(w + to, src, k);
    memset(w + to + k, 0, len - k);
    src += k, left -= k;
    to += len;
  }
  memcpy(w + to, data + from, f.inlen - from);
  decode(w + sizeof(mpb_uhdr), f.inlen + f.total - sizeof(mpb_uhdr), 1);
  free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!L) {
    L = lua_newstate(capalloc, NULL);
    luaL_openlibs(L);
    lua_newtable(L);
    mpb_open_array(L);
    lua_setglobal(L, "mp");
  }
  if (size < 1) return 0;
  switch (data[0] % 3) {
    case 0: decode((const char *)data + 1, size - 1, 0); break;
    case 1: decode((const char *)data + 1, size - 1, 1); break;
    default: parts(data + 1, size - 1); break;
  }
  static unsigned runs;
  if (++runs % 256 == 0) lua_gc(L, LUA_GCCOLLECT);
  return 0;
}
