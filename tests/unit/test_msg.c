/* SPDX-License-Identifier: MIT */
/*
** test_msg.c: the memory of received messages (chan/msg.c). Small messages
** come from a pool of blocks that is bounded and freed with the memory;
** every message starts clean whatever block it gets; a message freed after
** its memory closed is freed, not kept.
*/
#include <criterion/criterion.h>
#include <string.h>

#include "chan/msg.h"

Test(msg, small_blocks_are_reused) {
  mpb_msg_mem mm;
  cr_assert_eq(mpb_msg_mem_init(&mm), 0);
  mpb_msg *a = mpb_msg_new(&mm, 10);
  cr_assert_not_null(a);
  memset(a->buf, 0x77, 10);
  a->src = 5, a->chan = 3, a->seq = 9, a->nparts = 1;
  mpb_msg_free(a);
  cr_assert_eq(mm.npool, 1);
  mpb_msg *b = mpb_msg_new(&mm, 100);
  cr_assert_eq(b, a, "the block freed serves the next small message");
  cr_assert_eq(mm.npool, 0);
  cr_assert_eq(b->len, 100);
  cr_assert_geq(b->cap, 100);
  cr_assert(b->src == 0 && b->chan == 0 && b->seq == 0 && b->nparts == 0 && b->next == NULL,
            "a reused block starts clean");
  memset(b->buf, 1, b->len); /* the whole length is there (ASan checks) */
  mpb_msg_free(b);
  mpb_msg_mem_free(&mm);
  cr_assert_eq(mm.npool, 0);
  cr_assert_null(mm.pool);
}

Test(msg, large_messages_are_not_pooled) {
  mpb_msg_mem mm;
  cr_assert_eq(mpb_msg_mem_init(&mm), 0);
  mpb_msg *a = mpb_msg_new(&mm, 5000);
  cr_assert_not_null(a);
  memset(a->buf, 2, 5000);
  mpb_msg_free(a);
  cr_assert_eq(mm.npool, 0);
  mpb_msg_mem_free(&mm);
}

Test(msg, the_pool_is_bounded) {
  mpb_msg_mem mm;
  cr_assert_eq(mpb_msg_mem_init(&mm), 0);
  enum { N = 200 };
  mpb_msg *m[N];
  for (int i = 0; i < N; i++) cr_assert_not_null(m[i] = mpb_msg_new(&mm, (size_t)i % 64));
  for (int i = 0; i < N; i++) mpb_msg_free(m[i]);
  cr_assert_gt(mm.npool, 0);
  cr_assert_lt(mm.npool, N, "the pool keeps a bounded number of blocks");
  int n = 0;
  for (mpb_msg *p = mm.pool; p; p = p->next) n++;
  cr_assert_eq(n, mm.npool);
  mpb_msg_mem_free(&mm);
  cr_assert_null(mm.pool);
}

Test(msg, freed_after_close_is_not_kept) {
  mpb_msg_mem mm;
  cr_assert_eq(mpb_msg_mem_init(&mm), 0);
  mpb_msg *a = mpb_msg_new(&mm, 8);
  cr_assert_not_null(a);
  mpb_msg_mem_free(&mm);
  mpb_msg_free(a); /* freed, not pooled: nothing would free it later (ASan: no leak) */
  cr_assert_eq(mm.npool, 0);
  cr_assert_null(mm.pool);
}
