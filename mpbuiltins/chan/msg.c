/* SPDX-License-Identifier: MIT */
/*
** Received messages: their memory (a spare for large ones, a reserve for
** when malloc fails) and their queues.
*/
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "chan/msg.h"
#include "wire/wire_lstr.h"

/* Large messages. Fresh memory costs a page fault per 4 KiB, which in a VM
** can take longer than the transfer itself, and programs send big blocks
** again and again. So the buffer of the last large message freed is kept for
** the next large one that fits (the state's spare), and fresh large buffers
** ask for huge pages. */
#define SPARE_MIN ((size_t)64 << 20)

/* Small messages, the common case, cost a malloc and a free each, about as
** much as their encoding or decoding: their blocks (all of POOL_CAP bytes)
** go back to a pool of at most POOL_MAX (msg.h's mpb_msg_new_or_reserve
** takes from it inline). */
#define POOL_CAP MPB_MSG_POOL_CAP
#define POOL_MAX MPB_MSG_POOL_MAX

/* Ask for huge pages on a large block of fresh memory. */
static void bigmem_advise(void *p, size_t len) {
#ifdef MADV_HUGEPAGE
  uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + len) & ~(uintptr_t)4095;
  if (len >= SPARE_MIN && e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
  (void)p, (void)len;
#endif
}

size_t mpb_msg_spare(const mpb_msg_mem *mm) { return mm->spare ? mm->spare->cap : 0; }

void mpb_msg_drop_spare(mpb_msg_mem *mm) {
  free(mm->spare);
  mm->spare = NULL;
}

mpb_msg *mpb_msg_new(mpb_msg_mem *mm, size_t len) {
  if (len > SIZE_MAX - sizeof(mpb_msg)) return NULL;
  mpb_msg *m = NULL;
  mpb_msg *spare = mm ? mm->spare : NULL;
  size_t cap = len;
  if (mm && len <= POOL_CAP) {
    cap = POOL_CAP;
    if ((m = mm->pool)) {
      mm->pool = m->next;
      mm->npool--;
    } else if (!(m = malloc(sizeof *m + POOL_CAP))) {
      return NULL;
    }
  } else if (len >= SPARE_MIN && spare && spare->cap >= len && spare->cap / 4 <= len) {
    m = spare; /* warm memory */
    cap = spare->cap;
    mm->spare = NULL;
  } else {
    m = malloc(sizeof *m + len);
    if (!m && spare) { /* the spare's memory is better spent here */
      mpb_msg_drop_spare(mm);
      m = malloc(sizeof *m + len);
    }
    if (!m) return NULL;
    bigmem_advise(m, sizeof *m + len);
  }
  memset(m, 0, sizeof *m);
  m->len = len;
  m->cap = cap;
  m->mem = mm;
  return m;
}

/* ------------------------------------------------------------ reserve */
/* A rank short of memory must still read the small messages that say what
** comes next (headers of messages in parts, commands): a buffer is kept for
** one of them, lent when malloc fails (arrive.c) and back when freed. */
int mpb_msg_mem_init(mpb_msg_mem *mm) {
  memset(mm, 0, sizeof *mm);
  mm->kept = malloc(sizeof *mm->kept + MPB_MSG_RESERVE);
  return mm->kept ? 0 : -1;
}

void mpb_msg_mem_free(mpb_msg_mem *mm) {
  if (mm->out) mm->kept->lent = 0; /* the message lent it frees it */
  else free(mm->kept);
  mm->kept = NULL;
  while (mm->pool) {
    mpb_msg *m = mm->pool;
    mm->pool = m->next;
    free(m);
  }
  mm->npool = 0;
  mpb_msg_drop_spare(mm);
  mm->closed = 1;
}

mpb_msg *mpb_msg_reserve(mpb_msg_mem *mm, size_t len) {
  if (len > MPB_MSG_RESERVE || !mm->kept || mm->out) return NULL;
  mpb_msg *m = mm->kept;
  mm->out = 1;
  memset(m, 0, sizeof *m);
  m->len = len;
  m->cap = MPB_MSG_RESERVE;
  m->mem = mm;
  m->lent = 1;
  return m;
}

mpb_msg *mpb_msg_inline_strs(mpb_msg *m) {
  if (!m || !m->nstrs) return m;
  size_t len = m->len, hl = sizeof(mpb_uhdr);
  for (int i = 0; i < m->nstrs; i++) len += m->strs[i].len & ~(size_t)7;
  mpb_msg *n = malloc(sizeof *n + len);
  if (!n) {
    mpb_msg_free(m);
    return NULL;
  }
  *n = *m;
  n->mem = NULL, n->lent = 0, n->parts = NULL, n->nparts = 0, n->strs = NULL, n->nstrs = 0;
  n->len = n->cap = len;
  size_t from = 0, to = 0; /* body offsets in m, n */
  for (int i = 0; i < m->nstrs; i++) {
    const mpb_wire_str *x = &m->strs[i];
    memcpy(n->buf + hl + to, m->buf + hl + from, x->at - from);
    to += x->at - from;
    from = x->at;
    memcpy(n->buf + hl + to, x->s, x->len);
    to += x->len;
    from += x->len & 7; /* its gap */
  }
  memcpy(n->buf, m->buf, hl);
  memcpy(n->buf + hl + to, m->buf + hl + from, m->len - hl - from);
  mpb_msg_free(m);
  return n;
}

void mpb_msg_free_any(mpb_msg *m) {
  if (!m) return;
  if (m->parts || m->strs) { /* a message received in parts */
    free(m->parts);
    for (int i = 0; i < m->nstrs; i++) mpb_lstr_free(m->lstr, m->strs[i].s, m->strs[i].len);
    free(m->strs);
    m->parts = NULL, m->strs = NULL, m->nparts = m->nstrs = 0;
  }
  mpb_msg_mem *mm = m->mem;
  if (m->lent) { /* the reserve, back */
    mm->out = 0;
    return;
  }
  if (!mm) {
    free(m);
    return;
  }
  if (!mm->closed && m->cap == POOL_CAP && mm->npool < POOL_MAX) {
    m->next = mm->pool;
    mm->pool = m;
    mm->npool++;
    return;
  }
  if (!mm->closed && m->cap >= SPARE_MIN && (!mm->spare || mm->spare->cap <= m->cap)) {
    free(mm->spare);
    mm->spare = m;
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

