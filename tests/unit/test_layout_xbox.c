/* SPDX-License-Identifier: MIT */
/*
** The boxes of exchanges (layout_xbox.h): which boxes share a message, and
** what a plan reports: peers exact at any number of ranks (a rank that
** receives from one rank and sends to another has 2 peers, with 100 000
** ranks as with 4), bytes and messages.
*/
#include <criterion/criterion.h>
#include <string.h>

#include "layout/layout_xbox.h"

static mpb_xbox box(int peer, int tag, int64_t n) {
  mpb_xbox b;
  memset(&b, 0, sizeof b);
  b.peer = peer, b.tag = tag, b.nd = 1, b.len[0] = n, b.n = n;
  return b;
}

Test(xbox, peers_exact_at_any_size) {
  for (int big = 0; big < 2; big++) {
    int base = big ? 100000 - 3 : 1;
    mpb_xbox send[1] = {box(base, 0, 10)}, recv[1] = {box(base + 2, 0, 10)};
    mpb_xphase ph = {1, 1, 0, send, recv, NULL};
    mpb_xstats s;
    mpb_xchg_stats(&ph, 1, 8, 32, &s);
    cr_assert_eq(s.messages, 1);
    cr_assert_eq(s.peers, 2, "peers %d at rank %d", s.peers, base);
    cr_assert_eq(s.send_bytes, 80);
    cr_assert_eq(s.recv_bytes, 80);
  }
  /* a halo's phases: the same two neighbours in every phase, both ways */
  mpb_xbox hs[2][2] = {{box(4095, 0, 4), box(1, 1, 4)}, {box(4095, 0, 4), box(1, 1, 4)}};
  mpb_xphase hp[2] = {{2, 2, 0, hs[0], hs[0], NULL}, {2, 2, 0, hs[1], hs[1], NULL}};
  mpb_xstats s;
  mpb_xchg_stats(hp, 2, 8, 32, &s);
  cr_assert_eq(s.peers, 2);
  cr_assert_eq(s.messages, 4);
  cr_assert_eq(s.peak_extra, 2 * 2 * 4 * 8);
}

Test(xbox, many_peers) {
  enum { N = 5000 };
  static mpb_xbox send[N], recv[N];
  for (int i = 0; i < N; i++) send[i] = box(i, 0, 1), recv[i] = box(N - 1 - i, 0, 1);
  mpb_xphase ph = {N, N, 0, send, recv, NULL};
  mpb_xstats s;
  mpb_xchg_stats(&ph, 1, 16, 32, &s);
  cr_assert_eq(s.peers, N);
  cr_assert_eq(s.messages, N);
}

/* Small boxes of one peer share a message below the eager threshold; large
** ones go together; the runs are the same on both sides. */
Test(xbox, runs) {
  mpb_xbox b[5] = {box(1, 0, 10), box(1, 1, 10), box(1, 2, 2000), box(2, 0, 1), box(1, 3, 1)};
  size_t len;
  cr_assert_eq(mpb_xbox_msg_end(b, 5, 0, 8, 32, &len), 2);
  cr_assert_eq(len, 160);
  cr_assert_eq(mpb_xbox_msg_end(b, 5, 2, 8, 32, &len), 3);
  cr_assert_eq(len, 16000);
  cr_assert_eq(mpb_xbox_count_msgs(b, 5, 8, 32), 4);
  mpb_xbox big[2] = {box(3, 0, 2000), box(3, 1, 2000)};
  cr_assert_eq(mpb_xbox_msg_end(big, 2, 0, 8, 32, &len), 2); /* above the threshold: together */
  mpb_xchg_sort(b, 5);
  cr_assert(b[0].peer == 1 && b[3].peer == 1 && b[3].tag == 3 && b[4].peer == 2);
}
