/* SPDX-License-Identifier: MIT */
/* Block arena: see ad_arena.h. */
#include <stdlib.h>
#include "ad_arena.h"

#define HDR ((sizeof(ad_block) + 15) & ~(size_t)15)

void ad_arena_init(ad_arena *a) {
  a->first = a->cur = NULL;
  a->nblocks = 0;
}

void ad_arena_free(ad_arena *a) {
  ad_block *b = a->first;
  while (b) {
    ad_block *n = b->next;
    free(b);
    b = n;
  }
  ad_arena_init(a);
}

static ad_block *new_block(size_t need) {
  size_t size = need > AD_ARENA_BLOCK ? need : AD_ARENA_BLOCK;
  ad_block *b = malloc(HDR + size);
  if (!b) return NULL;
  b->next = NULL;
  b->size = size;
  b->used = 0;
  return b;
}

void *ad_arena_alloc(ad_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n == 0) n = 16;
  if (a->cur && a->cur->size - a->cur->used >= n) {
    void *p = (char *)a->cur + HDR + a->cur->used;
    a->cur->used += n;
    return p;
  }
  /* Move on to the next kept block if it is large enough; otherwise insert a
  ** fresh block here (smaller kept blocks stay further down the list). */
  ad_block *nxt = a->cur ? a->cur->next : a->first;
  if (nxt && nxt->size >= n) {
    nxt->used = 0;
  } else {
    ad_block *b = new_block(n);
    if (!b) return NULL;
    b->next = nxt;
    if (a->cur) a->cur->next = b; else a->first = b;
    a->nblocks++;
    nxt = b;
  }
  a->cur = nxt;
  nxt->used = n;
  return (char *)nxt + HDR;
}

ad_arena_mark ad_arena_mark_get(const ad_arena *a) {
  ad_arena_mark m = {a->cur, a->cur ? a->cur->used : 0};
  return m;
}

void ad_arena_rewind(ad_arena *a, ad_arena_mark m) {
  a->cur = m.blk;
  if (m.blk) m.blk->used = m.used;
}
