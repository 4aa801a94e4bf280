/* SPDX-License-Identifier: MIT */
/*
** layout_xbox.c: the boxes of an exchange (layout_xbox.h).
*/
#include <stdlib.h>
#include <string.h>

#include "layout/layout_xbox.h"

static int cmp_box(const void *x, const void *y) {
  const mpb_xbox *a = x, *b = y;
  if (a->peer != b->peer) return a->peer < b->peer ? -1 : 1;
  return (a->tag > b->tag) - (a->tag < b->tag);
}

void mpb_xchg_sort(mpb_xbox *b, int n) {
  if (n > 1) qsort(b, (size_t)n, sizeof *b, cmp_box);
}

/* Between the ranks of a host UCX's round trip doubles at 8256 bytes: a
** message above it waits for a handshake, so small boxes are merged only
** below it and boxes above it are merged together (one handshake instead
** of several). */
int mpb_xbox_msg_end(const mpb_xbox *b, int n, int i, size_t es, size_t hdr, size_t *len) {
  size_t sum = (size_t)b[i].n * es;
  int big = sum + hdr >= MPB_XBOX_EAGER, j = i + 1;
  for (; j < n && b[j].peer == b[i].peer; j++) {
    size_t add = (size_t)b[j].n * es;
    if (big ? add + hdr < MPB_XBOX_EAGER : sum + add + hdr >= MPB_XBOX_EAGER) break;
    sum += add;
  }
  *len = sum;
  return j;
}

int mpb_xbox_count_msgs(const mpb_xbox *b, int n, size_t es, size_t hdr) {
  int k = 0;
  size_t len;
  for (int i = 0; i < n; i = mpb_xbox_msg_end(b, n, i, es, hdr, &len)) k++;
  return k;
}

static int cmp_int(const void *x, const void *y) {
  int a = *(const int *)x, b = *(const int *)y;
  return (a > b) - (a < b);
}

void mpb_xchg_stats(const mpb_xphase *ph, int nphase, size_t es, size_t hdr, mpb_xstats *s) {
  memset(s, 0, sizeof *s);
  int64_t peak = 0;
  size_t nbox = 0;
  for (int p = 0; p < nphase; p++) {
    int64_t alive = 0;
    for (int i = 0; i < ph[p].nsend; i++) {
      s->send_bytes += ph[p].send[i].n * (int64_t)es;
      alive += ph[p].send[i].n * (int64_t)es;
    }
    for (int i = 0; i < ph[p].nrecv; i++) {
      s->recv_bytes += ph[p].recv[i].n * (int64_t)es;
      alive += ph[p].recv[i].n * (int64_t)es;
    }
    for (int i = 0; i < ph[p].nself; i++) s->self_bytes += ph[p].self[2 * i].n * (int64_t)es;
    s->messages += mpb_xbox_count_msgs(ph[p].send, ph[p].nsend, es, hdr);
    if (alive > peak) peak = alive;
    nbox += (size_t)ph[p].nsend + (size_t)ph[p].nrecv;
  }
  s->peak_extra = peak;
  /* distinct peers: the peers of every box, sorted (small lists on the stack) */
  int small[64], *peers = nbox <= 64 ? small : malloc(nbox * sizeof *peers);
  if (!peers) { /* no memory for the list: count boxes, an upper bound */
    s->peers = (int)nbox;
    return;
  }
  size_t k = 0;
  for (int p = 0; p < nphase; p++) {
    for (int i = 0; i < ph[p].nsend; i++) peers[k++] = ph[p].send[i].peer;
    for (int i = 0; i < ph[p].nrecv; i++) peers[k++] = ph[p].recv[i].peer;
  }
  qsort(peers, k, sizeof *peers, cmp_int);
  for (size_t i = 0; i < k; i++) s->peers += i == 0 || peers[i] != peers[i - 1];
  if (peers != small) free(peers);
}
