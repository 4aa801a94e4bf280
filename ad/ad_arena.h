/* SPDX-License-Identifier: MIT */
/*
** A block arena for the tape's side data (constant vectors copied in, node
** descriptors). Blocks are never moved, so pointers into them stay valid
** until the arena is rewound past them; rewinding keeps the blocks for reuse,
** so a warm tape allocates nothing.
*/
#ifndef AD_ARENA_H
#define AD_ARENA_H

#include <stddef.h>

typedef struct ad_block {
  struct ad_block *next;
  size_t size, used;
  /* data follows, 16-byte aligned */
} ad_block;

typedef struct ad_arena {
  ad_block *first, *cur;
  size_t nblocks;
} ad_arena;

/* Position to rewind to (O(1)). */
typedef struct ad_arena_mark {
  ad_block *blk;
  size_t used;
} ad_arena_mark;

#define AD_ARENA_BLOCK 65536

void ad_arena_init(ad_arena *a);
/* Frees every block. */
void ad_arena_free(ad_arena *a);
/* n bytes, 16-byte aligned, owned by the arena; NULL if out of memory. */
void *ad_arena_alloc(ad_arena *a, size_t n);
ad_arena_mark ad_arena_mark_get(const ad_arena *a);
/* Everything allocated after the mark is released (blocks kept). */
void ad_arena_rewind(ad_arena *a, ad_arena_mark m);

#endif
