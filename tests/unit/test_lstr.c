/* SPDX-License-Identifier: MIT */
/*
** test_lstr.c: long strings Lua adopts (wire/wire_lstr.c): the probe, the
** wrapper around a host's allocator, adoption and its accounting, the
** fallbacks (a probe that fails, a host that replaces the allocator
** afterwards), and the decoder handing strings received apart to Lua.
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "wire/wire.h"
#include "wire/wire_lstr.h"

/* A host's allocator counting its live blocks; fail_from > 0: requests for
** a new block of at least that many bytes fail. */
typedef struct { long live; size_t fail_from; } host;

static void *host_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  host *h = ud;
  (void)osize;
  if (nsize == 0) {
    if (ptr) h->live--;
    free(ptr);
    return NULL;
  }
  if (!ptr && h->fail_from && nsize >= h->fail_from) return NULL;
  void *p = realloc(ptr, nsize);
  if (p && !ptr) h->live++;
  return p;
}

static void fill(char *s, size_t len, unsigned seed) {
  for (size_t i = 0; i < len; i++) s[i] = (char)((i * 131 + seed) % 251); /* zeros too */
}

static int same(const char *s, size_t len, unsigned seed) {
  for (size_t i = 0; i < len; i++)
    if (s[i] != (char)((i * 131 + seed) % 251)) return 0;
  return 1;
}

Test(lstr, adopts_into_the_block_and_lua_frees_it) {
  host h = {0, 0};
  lua_State *L = lua_newstate(host_alloc, &h);
  mpb_lstr *a = mpb_lstr_of(L);
  cr_assert(a && mpb_lstr_on(a), "the probe holds for this Lua");
  cr_assert_eq(mpb_lstr_of(L), a, "one record per state");
  lua_gc(L, LUA_GCSTOP); /* the counts below are Lua's alone */
  size_t sizes[] = {1000, 4096, 65536, 65537, ((size_t)1 << 20) + 1};
  for (unsigned k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    size_t len = sizes[k];
    char *s = mpb_lstr_alloc(a, len);
    cr_assert(s);
    fill(s, len, k);
    char *place = s;
    int before = lua_gc(L, LUA_GCCOUNT);
    mpb_lstr_push(L, a, &s, len);
    cr_assert_null(s, "adopted: the block is Lua's");
    size_t got;
    const char *p = lua_tolstring(L, -1, &got);
    cr_assert_eq(p, place, "the string is the block received into");
    cr_assert(got == len && same(p, len, k) && p[len] == '\0');
    cr_assert_geq(lua_gc(L, LUA_GCCOUNT) - before, (int)(len >> 10), "Lua counts it");
    lua_pop(L, 1);
  }
  cr_assert_eq(mpb_lstr_adopted(a), sizeof sizes / sizeof *sizes);
  char *s = mpb_lstr_alloc(a, 999);
  cr_assert_null(s, "shorter than the probe: copied");
  s = mpb_lstr_alloc(a, 5000); /* freed without being adopted */
  mpb_lstr_free(a, s, 5000);
  lua_close(L);
  cr_assert_eq(h.live, 0, "every block back, the record's own too");
}

Test(lstr, a_failed_probe_turns_it_off) {
  host h = {0, 0};
  lua_State *L = lua_newstate(host_alloc, &h);
  h.fail_from = 900; /* Lua cannot make the probe's strings */
  mpb_lstr *a = mpb_lstr_of(L);
  h.fail_from = 0;
  cr_assert(a && !mpb_lstr_on(a), "a probe that cannot run leaves adoption off");
  cr_assert_null(mpb_lstr_alloc(a, 100000), "off: no place apart");
  lua_close(L);
  cr_assert_eq(h.live, 0);
}

/* A host that wraps whatever allocator the state has, after mplua did. */
typedef struct { lua_Alloc f; void *ud; long calls; } wrapper;

static void *host_wrap(void *ud, void *ptr, size_t osize, size_t nsize) {
  wrapper *w = ud;
  w->calls++;
  return w->f(w->ud, ptr, osize, nsize);
}

Test(lstr, a_host_wrapping_afterwards_gets_copies) {
  host h = {0, 0};
  lua_State *L = lua_newstate(host_alloc, &h);
  mpb_lstr *a = mpb_lstr_of(L);
  cr_assert(mpb_lstr_on(a));
  wrapper w = {NULL, NULL, 0};
  w.f = lua_getallocf(L, &w.ud);
  lua_setallocf(L, host_wrap, &w);
  size_t len = 70000;
  char *s = mpb_lstr_alloc(a, len);
  fill(s, len, 7);
  char *place = s;
  mpb_lstr_push(L, a, &s, len);
  cr_assert_eq(s, place, "not adopted: the place is still the caller's");
  size_t got;
  const char *p = lua_tolstring(L, -1, &got);
  cr_assert(p != place && got == len && same(p, len, 7), "a copy");
  mpb_lstr_free(a, s, len);
  cr_assert_eq(mpb_lstr_adopted(a), 0);
  lua_close(L);
  cr_assert_gt(w.calls, 0);
  cr_assert_eq(h.live, 0, "the record freed through the host's wrapper too");
}

Test(lstr, two_states_each_their_own) {
  host h1 = {0, 0}, h2 = {0, 0};
  lua_State *L1 = lua_newstate(host_alloc, &h1), *L2 = lua_newstate(host_alloc, &h2);
  mpb_lstr *a1 = mpb_lstr_of(L1), *a2 = mpb_lstr_of(L2);
  cr_assert(a1 != a2 && mpb_lstr_on(a1) && mpb_lstr_on(a2));
  char *s = mpb_lstr_alloc(a2, 100000);
  fill(s, 100000, 3);
  long before = h1.live;
  mpb_lstr_push(L2, a2, &s, 100000);
  cr_assert_null(s);
  cr_assert_eq(h1.live, before, "L2's string came from L2's allocator");
  cr_assert_eq(mpb_lstr_adopted(a1), 0);
  cr_assert_eq(mpb_lstr_adopted(a2), 1);
  lua_close(L1);
  cr_assert_eq(h1.live, 0);
  lua_pop(L2, 1);
  lua_close(L2);
  cr_assert_eq(h2.live, 0);
}
