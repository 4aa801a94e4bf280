/* SPDX-License-Identifier: MIT */
/*
** chan/, ground floor: what a message is. The channels and control kinds
** (the MPI tags), the headers every message starts with, the one type
** that owns a received message, its memory and its queues. Plain C: no
** MPI, no Lua.
*/
#ifndef MPB_CHAN_MSG_H
#define MPB_CHAN_MSG_H

#include <stddef.h>
#include <stdint.h>

/* User-comm channels (the MPI tag). Only MPB_CH_USER is visible to mp.recv. */
enum { MPB_CH_USER = 0, MPB_CH_HANDOUT, MPB_CH_HANDIN, MPB_CH_REPLY, MPB_CH_COLL,
       MPB_CH_CUSER,   /* send/recv on sub-communicators */
       MPB_CH_POOL,    /* mp.pool hand-out and results */
       MPB_CH_MAP,     /* mp.mapper data, parameters and results */
       MPB_CH_DIST,    /* layout/, topo/: transposes, halos, neighbourhood collectives */
       MPB_CH_MPI,     /* mp.mpi: tagged messages and their acknowledgements (mpi/) */
       MPB_CH_RMA,     /* mp.mpi: windows' lock requests, grants and releases (mpi/) */
       MPB_NCHAN };

/* Control-channel message kinds (the MPI tag on the control communicator);
** what each means is decided by the layer that handles it (tasks/). */
enum { MPB_CTL_CMD = 1, MPB_CTL_DONE, MPB_CTL_FAULT, MPB_CTL_ABORT, MPB_CTL_EXIT,
       MPB_CTL_OUT, MPB_CTL_SNAP, MPB_CTL_STATE, MPB_CTL_PAUSE, MPB_CTL_GO, MPB_CTL_AGREE,
       MPB_CTL_RS_UP, MPB_CTL_RS_DOWN, MPB_CTL_RS_WHERE, /* the abort's resync (tasks/) */
       MPB_NCTL };

/* Every user message starts with this header; the body is wire-encoded. */
typedef struct mpb_uhdr {
  int64_t task;      /* task number it was sent in */
  uint32_t comm;     /* communicator id (0 = world) */
  uint32_t flags;    /* MPB_UF_USER bits: the sender's layer (e.g. collective kind) */
  uint32_t seq;      /* the sender's layer: e.g. the collective's number on comm */
  int32_t aux;       /* the sender's layer: e.g. the collective's root */
} mpb_uhdr;
#define MPB_UF_USER 0x00ffffffu
#define MPB_UF_SPLIT 0x80000000u /* framing: parts follow (send.c) */

/* Every control message starts with this header. */
typedef struct mpb_chdr {
  int64_t task;
  int32_t kind;
  int32_t arg;       /* CMD: op; EXIT: status */
  int64_t value;     /* CMD: fan-out; DONE: unreceived user messages in subtree */
} mpb_chdr;
/* ------------------------------------------------------------ messages */
/* Where a part of a message received in parts landed in its buf. */
typedef struct mpb_part {
  size_t pos, len;
  char *to;          /* where it is received: buf + pos, or a string's own place */
} mpb_part;

struct mpb_msg_mem;

/* A received message (user or control): header and body in one block. */
typedef struct mpb_msg {
  struct mpb_msg *next;
  /* queued in the mailbox (mailbox.h): the message before it in its
  ** sender's queue (next: after), and its neighbours in the arrival order
  ** of its channel, whatever their senders */
  struct mpb_msg *prev, *anext, *aprev;
  uint64_t seq;      /* arrival order */
  int src;           /* rank in the runtime's communicator */
  int chan;          /* channel, or control kind */
  int nparts;
  int gc_paid;       /* Lua took its GC step before it was laid out (arrive.c) */
  uint32_t tk;       /* its ordinal from its sender while tracing (chan/trace.h), else 0 */
  int lent;          /* it is mem's reserve buffer: goes back there when freed */
  mpb_part *parts;   /* received in parts: where they landed (owned) */
  struct mpb_wire_str *strs; /* its long strings received apart, not in buf (owned) */
  int nstrs;
  struct mpb_lstr *lstr;     /* where their places come from (wire/wire_lstr.h) */
  size_t lost;       /* > 0: a message of that many bytes could not be received */
  int lost_why;      /* MPB_LOST_*: why */
  size_t len;        /* bytes in buf */
  size_t cap;        /* bytes allocated for buf */
  struct mpb_msg_mem *mem; /* the memory it came from (NULL: plain malloc) */
  char buf[];        /* header then body */
} mpb_msg;

enum { MPB_LOST_PART,    /* a part was not the size its header announced */
       MPB_LOST_FRAME,   /* its header's table of parts was malformed */
       MPB_LOST_MEMORY }; /* this rank had no memory for it (its parts were drained) */

typedef struct mpb_queue { mpb_msg *head, *tail; } mpb_queue;
/* A channel's queued messages in arrival order, linked through anext and
** aprev (mailbox.h), and how many there are. */
typedef struct mpb_chanq { mpb_msg *head, *tail; size_t n; } mpb_chanq;

/* msg.c. The message memory of one state: the blocks of small messages
** freed, kept for the next ones (a pool), the buffer of the last large
** message freed, kept for the next large one that fits (a spare), and a
** buffer kept for a small message when malloc fails (the reserve). */
#define MPB_MSG_RESERVE ((size_t)256 << 10)
typedef struct mpb_msg_mem {
  mpb_msg *pool;     /* small blocks, free (linked by next) */
  int npool;
  mpb_msg *spare;    /* NULL: none */
  mpb_msg *kept;     /* the reserve's buffer */
  int out;           /* it is lent */
  int closed;        /* mpb_msg_mem_free ran: nothing is kept any more */
} mpb_msg_mem;
int mpb_msg_mem_init(mpb_msg_mem *mm);
/* Free what mm keeps; messages still out are freed by their owners. */
void mpb_msg_mem_free(mpb_msg_mem *mm);
/* A message of len bytes from mm (NULL: plain malloc); NULL when out of memory. */
mpb_msg *mpb_msg_new(mpb_msg_mem *mm, size_t len);
/* The bytes of mm's spare (0: none) / free it. */
size_t mpb_msg_spare(const mpb_msg_mem *mm);
void mpb_msg_drop_spare(mpb_msg_mem *mm);
/* mpb_msg_new, or when malloc fails the reserve's buffer for a message of
** MPB_MSG_RESERVE bytes or fewer while it is not lent (NULL: neither);
** mpb_msg_free gives it back. A small message comes from mm's pool
** inline: every arrival takes one. mpb_msg_reserve: the reserve alone. */
#define MPB_MSG_POOL_CAP ((size_t)240)
mpb_msg *mpb_msg_reserve(mpb_msg_mem *mm, size_t len);
static inline mpb_msg *mpb_msg_new_or_reserve(mpb_msg_mem *mm, size_t len) {
  mpb_msg *m = mm->pool;
  if (len <= MPB_MSG_POOL_CAP && m) {
    mm->pool = m->next;
    mm->npool--;
    __builtin_memset(m, 0, sizeof *m);
    m->len = len;
    m->cap = MPB_MSG_POOL_CAP;
    m->mem = mm;
    return m;
  }
  if ((m = mpb_msg_new(mm, len))) return m;
  return mpb_msg_reserve(mm, len);
}
/* Copy m's long strings received apart into buf at their places (a
** message of len + their bytes, from plain malloc); for a reader of the
** raw body. Returns m, or NULL (m freed) when out of memory. */
mpb_msg *mpb_msg_inline_strs(mpb_msg *m);
/* Free a message and whatever parts it still owns (NULL is fine). A small
** whole block goes back to its pool inline: every small receive frees one. */
#define MPB_MSG_POOL_MAX 32
void mpb_msg_free_any(mpb_msg *m);
static inline void mpb_msg_free(mpb_msg *m) {
  mpb_msg_mem *mm = m ? m->mem : NULL;
  if (mm && m->cap == MPB_MSG_POOL_CAP && !m->parts && !m->strs && !m->lent && !mm->closed &&
      mm->npool < MPB_MSG_POOL_MAX) {
    m->next = mm->pool;
    mm->pool = m;
    mm->npool++;
    return;
  }
  mpb_msg_free_any(m);
}
void mpb_queue_push(mpb_queue *q, mpb_msg *m);
mpb_msg *mpb_queue_pop(mpb_queue *q);
void mpb_queue_clear(mpb_queue *q);
/* The user header of m (zeros when m is too short to hold one). */
static inline mpb_uhdr mpb_msg_hdr(const mpb_msg *m) {
  mpb_uhdr h = {0, 0, 0, 0, 0};
  if (m->len >= sizeof h) __builtin_memcpy(&h, m->buf, sizeof h);
  return h;
}

#endif
