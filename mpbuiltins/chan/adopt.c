/*
** Adopting received long strings: Lua 5.4 can only make a string by copying
** its bytes, which costs a large message a second pass over memory. A long
** string that arrives as a part of its own (see send_segments in p2p.c) is
** received straight into a block laid out as Lua lays out a string; when the
** decoder pushes it, our allocator hands Lua that very block, and Lua's copy
** becomes memcpy(p, p, n), which glibc returns from at once.
**
** This leans on two facts checked at start-up rather than assumed: the
** offset of a long string's bytes in its allocation (measured), and that L
** uses the standard allocator (realloc/free), so Lua may free our malloc'ed
** blocks. If either check fails, strings are copied as usual.
*/
#include <stdlib.h>
#include <string.h>

#include "chan/chan.h"
#include "wire/wire.h"

/* Process-wide, not in the Lua state: Lua still frees objects through the
** allocator after the runtime's own userdata is gone (lua_close). */
static struct {
  lua_Alloc f;       /* the standard allocator */
  void *ud;
  void *donate;      /* the block the next long-string allocation of size gets */
  size_t size;
  void *probe_ptr;   /* start-up: the last string allocation */
  size_t probe_size;
} A;

static void *mpb_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  if (ptr == NULL && osize == LUA_TSTRING) {
    if (A.donate && nsize == A.size) {
      void *b = A.donate;
      A.donate = NULL;
      return b;
    }
    void *b = A.f(A.ud, ptr, osize, nsize);
    A.probe_ptr = b;
    A.probe_size = nsize;
    return b;
  }
  return A.f(A.ud, ptr, osize, nsize);
}

void mpb_adopt_init(lua_State *L, mpb_state *st) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  lua_State *ref = luaL_newstate(); /* the standard allocator, to compare */
  void *rud;
  int standard = ref && lua_getallocf(ref, &rud) == f;
  if (ref) lua_close(ref);
  if (!standard) return;
  A.f = f;
  A.ud = ud;
  lua_setallocf(L, mpb_alloc, NULL);
  static const char probe[] = "a long string to learn where Lua keeps the bytes of one";
  size_t n = sizeof probe - 1;
  A.probe_ptr = NULL;
  lua_pushlstring(L, probe, n);
  const char *s = lua_tostring(L, -1);
  char *p = A.probe_ptr;
  if (p && s > p && A.probe_size == (size_t)(s - p) + n + 1) st->stroff = (size_t)(s - p);
  lua_pop(L, 1);
}

void *mpb_adopt_block(mpb_state *st, size_t len) {
  if (!st->stroff || len < MPB_WIRE_STREXT) return NULL;
  void *b = malloc(st->stroff + len + 1);
  if (b) mpb_bigmem_advise(b, st->stroff + len + 1);
  return b;
}

typedef struct { mpb_state *st; mpb_msg *m; size_t base; } hook_ud;

static int adopt_hook(lua_State *L, void *ud, size_t pos, size_t len) {
  hook_ud *h = ud;
  mpb_msg *m = h->m;
  for (int i = 0; i < m->nparts; i++) {
    mpb_part *q = &m->parts[i];
    if (q->block && q->pos == pos + h->base && q->len == len) {
      mpb_state *st = h->st;
      char *block = q->block;
      q->block = NULL; /* Lua's now (or freed below) */
      A.donate = block;
      A.size = st->stroff + len + 1;
      lua_pushlstring(L, block + st->stroff, len);
      if (A.donate) { /* not taken (cannot happen with the standard allocator) */
        A.donate = NULL;
        free(block);
      }
      return 1;
    }
  }
  return 0;
}

int mpb_adopt_decode(lua_State *L, mpb_state *st, mpb_msg *m, const char *body, size_t len,
                     int owner, char *err, size_t errlen) {
  hook_ud h = {st, m, (size_t)(body - m->buf)};
  void *old_ud;
  mpb_wire_strhook old = mpb_wire_get_strhook(&old_ud); /* a nested decode (a __gc
                                                           handler receiving) keeps its own */
  int blocks = 0;
  for (int i = 0; i < m->nparts && !blocks; i++) blocks = m->parts[i].block != NULL;
  mpb_wire_set_strhook(blocks ? adopt_hook : NULL, &h);
  int n = mpb_wire_decode(L, body, len, owner, err, errlen);
  mpb_wire_set_strhook(old, old_ud);
  return n;
}
