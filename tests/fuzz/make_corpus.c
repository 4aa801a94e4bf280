/* SPDX-License-Identifier: MIT */
/*
** Writes the seed corpus of fuzz_message.c (tests/fuzz/corpus/): real
** messages of every value kind, whole and in parts, as the transport frames
** them. Run by scripts/fuzz.sh --corpus; the result is committed.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "lualib.h"
#include "array/array.h"
#include "chan/chan.h"
#include "chan/frame.h"
#include "wire/wire.h"

static const char *const values[] = {
    "return nil, true, false, 0, -1, math.mininteger, 2^53, 0/0, -0.0, 1/0",
    "return 'short', ('x'):rep(200), ('y'):rep(70000)",
    "local t = {1, 2, {3, {4}}, k = 'v', [2.5] = true}; t.self = t; return t, t",
    "local up = {1, 2}; return function(x) return x + #up end",
    "return setmetatable({1}, {__index = {a = 1}})",
    "return mp.array('f64', 3, 4), mp.array('u8', 5000), mp.array('i32', {1, 2, 3})",
    "return {mp.array('f64', 600), ('s'):rep(66000), {mp.array('i64', 9)}}, print, math.sin",
};

static void put(const char *dir, int k, int mode, const char *a, size_t alen, const char *b,
                size_t blen) {
  char path[512];
  snprintf(path, sizeof path, "%s/seed-%d-%d", dir, k, mode);
  FILE *f = fopen(path, "wb");
  if (!f) { perror(path); exit(1); }
  unsigned char m = (unsigned char)mode;
  fwrite(&m, 1, 1, f);
  fwrite(a, 1, alen, f);
  if (b) fwrite(b, 1, blen, f);
  fclose(f);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "corpus";
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_newtable(L);
  mpb_open_array(L);
  lua_setglobal(L, "mp");
  for (int k = 0; k < (int)(sizeof values / sizeof values[0]); k++) {
    int top = lua_gettop(L);
    if (luaL_dostring(L, values[k])) { fprintf(stderr, "%s\n", lua_tostring(L, -1)); return 1; }
    int n = lua_gettop(L) - top;
    char err[MPB_ERRLEN];
    mpb_wbuf *b = mpb_wbuf_push(L);
    mpb_wbuf_reserve(b, sizeof(mpb_uhdr));
    memset(b->data, 0, sizeof(mpb_uhdr));
    b->len = sizeof(mpb_uhdr);
    if (mpb_wire_encode(L, top + 1, n, b, -1, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
    size_t len = b->len + b->extlen;
    char *flat = malloc(len);
    mpb_wbuf_flatten(b, flat);
    put(dir, k, 0, flat + sizeof(mpb_uhdr), len - sizeof(mpb_uhdr), NULL, 0);
    put(dir, k, 1, flat + sizeof(mpb_uhdr), len - sizeof(mpb_uhdr), NULL, 0);
    if (b->nseg) { /* as the transport sends it: header, then the parts' bytes */
      size_t at[64], pl[64], total = 0;
      char str[64];
      int ns = b->nseg < 64 ? b->nseg : 64;
      for (int i = 0; i < ns; i++) at[i] = b->seg[i].at, pl[i] = b->seg[i].len, str[i] = (char)b->seg[i].str, total += pl[i];
      size_t hlen = mpb_frame_size(b->len, (uint64_t)ns);
      char *h = malloc(4 + hlen + total);
      uint32_t h32 = (uint32_t)hlen;
      memcpy(h, &h32, 4);
      mpb_frame_write(h + 4, b->data, b->len, (uint64_t)ns, at, pl, str, 7);
      char *p = h + 4 + hlen;
      for (int i = 0; i < ns; i++) memcpy(p, b->seg[i].ptr, pl[i]), p += pl[i];
      put(dir, k, 2, h, 4 + hlen + total, NULL, 0);
      free(h);
    }
    free(flat);
    lua_settop(L, top);
  }
  lua_close(L);
  return 0;
}
