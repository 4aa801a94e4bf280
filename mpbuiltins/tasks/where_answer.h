/* SPDX-License-Identifier: MIT */
/*
** A rank's answer to rank 0's whereabouts round (where.c): where it stands,
** then its counts of user messages since the last resynchronisation, sparse:
** only the peers it sent to or received from, sorted by peer. An answer,
** and rank 0's table of them, grows with the peers a rank talked to, not
** with the size of the job.
*/
#ifndef MPB_WHERE_ANSWER_H
#define MPB_WHERE_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include "tasks/tasks.h"

enum { MPB_AT_RUNNING, MPB_AT_BLOCKED, MPB_AT_FINISHED, MPB_AT_IDLE, MPB_AT_PAUSED };

typedef struct {
  int64_t round, task;
  int32_t state, peer;
  uint32_t comm, seq, pause, turn;
  uint32_t npeers; /* the mpb_counts that follow */
  char op[48];
  char line[96];
} mpb_answer;

typedef struct {
  int64_t sent, recvd; /* to and from peer */
  int32_t peer, zero;  /* zero: no byte of an answer left undefined */
} mpb_count;

size_t mpb_answer_size(uint32_t npeers);
mpb_count *mpb_answer_counts(mpb_answer *a);
/* This rank's answer, made from its poll: consistent with what it holds
** (malloc'd; NULL: out of memory). */
mpb_answer *mpb_answer_describe(mpb_state *st);
/* A malloc'd copy of the answer in buf[0..len), NULL unless it is one of a
** job of size ranks (as mpb_answer_describe makes them) or out of memory. */
mpb_answer *mpb_answer_read(const char *buf, size_t len, int size);
/* The counts of a's rank to and from peer (0 for a peer not listed). */
int64_t mpb_answer_sent(mpb_answer *a, int peer);
int64_t mpb_answer_recvd(mpb_answer *a, int peer);
/* 1 if a and b list the same counts for every peer. */
int mpb_answer_same_counts(mpb_answer *a, mpb_answer *b);

#endif
