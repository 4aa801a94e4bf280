/* SPDX-License-Identifier: MIT */
/*
** Received messages: their memory (a spare for large ones, a reserve for
** when malloc fails) and their queues.
*/
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "chan/msg.h"

/* Large messages. Fresh memory costs a page fault per 4 KiB, which in a VM
** can take longer than the transfer itself, and programs send big blocks again and again. So the buffer of
** the last large message freed is kept for the next large one that fits
** (a spare), and fresh large buffers ask for huge pages. */
#define SPARE_MIN ((size_t)64 << 20)
#define LIVE_MIN ((size_t)1 << 20)
static mpb_msg *spare;
static int live_big; /* buffers of LIVE_MIN bytes or more that messages hold */

/* Ask for huge pages on a large block of fresh memory. */
static void bigmem_advise(void *p, size_t len) {
#ifdef MADV_HUGEPAGE
  uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + len) & ~(uintptr_t)4095;
  if (len >= SPARE_MIN && e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
  (void)p, (void)len;
#endif
}

size_t mpb_msg_spare(void) { return spare ? spare->cap : 0; }

int mpb_msg_live_big(void) { return live_big; }

void mpb_msg_drop_spare(void) {
  free(spare);
  spare = NULL;
}

mpb_msg *mpb_msg_new(size_t len) {
  if (len > SIZE_MAX - sizeof(mpb_msg)) return NULL;
  mpb_msg *m = NULL;
  size_t cap = len;
  if (len >= SPARE_MIN && spare && spare->cap >= len && spare->cap / 4 <= len) {
    m = spare; /* warm memory */
    cap = spare->cap;
    spare = NULL;
  } else {
    m = malloc(sizeof *m + len);
    if (!m && spare) { /* the spare's memory is better spent here */
      mpb_msg_drop_spare();
      m = malloc(sizeof *m + len);
    }
    if (!m) return NULL;
    bigmem_advise(m, sizeof *m + len);
  }
  memset(m, 0, sizeof *m);
  m->len = len;
  m->cap = cap;
  live_big += cap >= LIVE_MIN;
  return m;
}

/* ------------------------------------------------------------ reserve */
/* A rank short of memory must still read the small messages that say what
** comes next (headers of messages in parts, commands): a buffer is kept for
** one of them, lent when malloc fails (arrive.c) and back when freed. */
int mpb_msg_reserve_init(mpb_msg_reserve *r) {
  r->kept = malloc(sizeof *r->kept + MPB_MSG_RESERVE);
  r->out = 0;
  return r->kept ? 0 : -1;
}

void mpb_msg_reserve_free(mpb_msg_reserve *r) {
  if (r->out) r->kept->home = NULL; /* the message lent it frees it */
  else free(r->kept);
  r->kept = NULL;
}

mpb_msg *mpb_msg_new_or_reserve(mpb_msg_reserve *r, size_t len) {
  mpb_msg *m = mpb_msg_new(len);
  if (m || len > MPB_MSG_RESERVE || !r->kept || r->out) return m;
  m = r->kept;
  r->out = 1;
  memset(m, 0, sizeof *m);
  m->len = len;
  m->cap = MPB_MSG_RESERVE;
  m->home = r;
  return m;
}

void mpb_msg_free(mpb_msg *m) {
  if (!m) return;
  free(m->parts);
  if (m->home) { /* the reserve, back */
    m->home->out = 0;
    return;
  }
  live_big -= m->cap >= LIVE_MIN;
  if (m->cap >= SPARE_MIN && (!spare || spare->cap <= m->cap)) {
    free(spare);
    spare = m;
    return;
  }
  free(m);
}

void mpb_queue_push(mpb_queue *q, mpb_msg *m) {
  m->next = NULL;
  if (q->tail) q->tail->next = m;
  else q->head = m;
  q->tail = m;
}

mpb_msg *mpb_queue_pop(mpb_queue *q) {
  mpb_msg *m = q->head;
  if (m) {
    q->head = m->next;
    if (!q->head) q->tail = NULL;
  }
  return m;
}

void mpb_queue_clear(mpb_queue *q) {
  mpb_msg *m;
  while ((m = mpb_queue_pop(q))) mpb_msg_free(m);
}

