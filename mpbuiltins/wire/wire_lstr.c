/* SPDX-License-Identifier: MIT */
/*
** Long strings Lua adopts (wire_lstr.h). Only the public API: the wrapper
** sees Lua's allocation requests (for a new object ptr is NULL and osize
** its type), and the probe learns, for this build, the size of the request
** that makes a long string of a given length and where in the block the
** bytes go. The wrapper is the state's allocator only during the probe and
** each lua_pushlstring of a string to adopt (a host sees the allocator it
** set). The record is a userdata in the registry, per state: it outlives
** every message, which are all freed before lua_close frees objects.
*/
#include <string.h>

#include "lua.h"
#include "wire/wire_lstr.h"

#define KEY "mplua.lstr"
#define PROBE_MAXH 512 /* a string's header is smaller than this, or the probe fails */
#define PROBE_MIN 1000 /* the shorter probe: longer strings are long in any build */

struct mpb_lstr {
  lua_Alloc f;       /* the allocator underneath */
  void *ud;
  size_t h;          /* bytes in front of a long string's bytes in its block */
  size_t tag;        /* osize of the request that makes a string */
  int on;
  uint64_t adopted;
  /* armed by mpb_lstr_push: the one request answered with a block */
  char *block;
  size_t want;
  char **slot;
  /* the probe: the request for a string of plen bytes */
  size_t plen, got_osize, got_nsize;
  void *got;
  int probing;
};

static void *wrap(void *ud, void *ptr, size_t osize, size_t nsize) {
  mpb_lstr *a = ud;
  if (ptr == NULL) {
    if (a->block) { /* armed: the string is the first object made */
      void *b = a->block;
      a->block = NULL;
      if (osize == a->tag && nsize == a->want) {
        *a->slot = NULL;
        a->adopted++;
        return b;
      }
    }
    void *p = a->f(a->ud, ptr, osize, nsize);
    if (a->probing && p && nsize > a->plen && nsize - a->plen <= PROBE_MAXH) {
      a->got = p;
      a->got_osize = osize;
      a->got_nsize = nsize;
    }
    return p;
  }
  return a->f(a->ud, ptr, osize, nsize);
}

/* Make a long string of plen bytes and see where its request went; returns
** the header size, or (size_t)-1 when the string is not at the end of the
** block Lua asked for. */
static size_t probe_one(lua_State *L, mpb_lstr *a, size_t plen) {
  char src[2048];
  memset(src, 'p', plen);
  a->plen = plen;
  a->got = NULL;
  a->probing = 1;
  lua_setallocf(L, wrap, a);
  lua_pushlstring(L, src, plen);
  lua_setallocf(L, a->f, a->ud);
  a->probing = 0;
  const char *s = lua_tostring(L, -1);
  size_t h = (size_t)-1;
  if (a->got && s == (const char *)a->got + (a->got_nsize - plen - 1) && s[plen] == '\0')
    h = a->got_nsize - plen - 1;
  lua_pop(L, 1);
  return h;
}

static int probe(lua_State *L) {
  mpb_lstr *a = lua_touserdata(L, 1);
  size_t h1 = probe_one(L, a, PROBE_MIN), tag = a->got_osize;
  size_t h2 = probe_one(L, a, 2 * PROBE_MIN);
  a->on = h1 != (size_t)-1 && h1 == h2 && tag == a->got_osize && tag != 0;
  a->h = h1;
  a->tag = tag;
  return 0;
}

mpb_lstr *mpb_lstr_of(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, KEY);
  mpb_lstr *a = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (a) return a;
  a = lua_newuserdatauv(L, sizeof *a, 0);
  memset(a, 0, sizeof *a);
  lua_setfield(L, LUA_REGISTRYINDEX, KEY);
  a->f = lua_getallocf(L, &a->ud);
  lua_pushcfunction(L, probe); /* protected: a memory error leaves it off */
  lua_pushlightuserdata(L, a);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    lua_setallocf(L, a->f, a->ud);
    lua_pop(L, 1);
    a->probing = a->on = 0;
  }
  return a;
}

int mpb_lstr_on(const mpb_lstr *a) { return a && a->on; }

char *mpb_lstr_alloc(mpb_lstr *a, size_t len) {
  if (!mpb_lstr_on(a) || len < PROBE_MIN || len > (size_t)-1 - a->h - 1) return NULL;
  char *b = a->f(a->ud, NULL, a->tag, a->h + len + 1);
  return b ? b + a->h : NULL;
}

void mpb_lstr_free(mpb_lstr *a, char *s, size_t len) {
  if (s) a->f(a->ud, s - a->h, a->h + len + 1, 0);
}

void mpb_lstr_push(lua_State *L, mpb_lstr *a, char **s, size_t len) {
  void *ud = NULL;
  if (lua_getallocf(L, &ud) != a->f || ud != a->ud) { /* a host changed it: copy */
    lua_pushlstring(L, *s, len);
    return;
  }
  a->block = *s - a->h;
  a->want = a->h + len + 1;
  a->slot = s;
  const char *p = *s;
  lua_setallocf(L, wrap, a);
  lua_pushlstring(L, p, len); /* adopted: the copy is from the bytes onto themselves */
  lua_setallocf(L, a->f, a->ud);
  a->block = NULL;
}

uint64_t mpb_lstr_adopted(const mpb_lstr *a) { return a ? a->adopted : 0; }
