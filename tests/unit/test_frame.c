/* SPDX-License-Identifier: MIT */
/*
** test_frame.c: the header of a message sent in parts, as a hostile peer
** could make it (chan/frame.c): every count, offset and size is checked
** without overflow before anything is allocated, and a good header reads
** back what was written.
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "chan/chan.h"
#include "chan/frame.h"

static size_t make(char *out, uint64_t n, const uint64_t *at, const uint64_t *len, uint64_t tag,
                   size_t inlen) {
  char inl[256];
  memset(inl, 0x5a, sizeof inl);
  mpb_uhdr h = {3, 0, 0, 0, 0};
  memcpy(inl, &h, sizeof h);
  size_t a[8], l[8];
  char s[8];
  for (uint64_t i = 0; i < n; i++) a[i] = (size_t)at[i], l[i] = (size_t)len[i], s[i] = (char)(i & 1);
  mpb_frame_write(out, inl, inlen, n, a, l, s, tag);
  return mpb_frame_size(inlen, n);
}

static void put64(char *buf, size_t off, uint64_t v) { memcpy(buf + off, &v, 8); }

Test(frame, round_trip) {
  char buf[1024], err[128];
  uint64_t at[3] = {24, 30, 40}, len[3] = {5, 0, 1u << 20};
  size_t n = make(buf, 3, at, len, 99, 64);
  mpb_frame f;
  cr_assert_eq(mpb_frame_parse(buf, n, 1000, &f, err, sizeof err), 0, "%s", err);
  cr_assert_eq(f.inlen, 64);
  cr_assert_eq(f.nparts, 3);
  cr_assert_eq(f.tag, 99);
  cr_assert_eq(f.total, 5 + (1u << 20));
  for (size_t i = 0; i < 3; i++) {
    size_t a, l;
    int s;
    mpb_frame_part(&f, i, &a, &l, &s);
    cr_assert_eq(a, at[i]);
    cr_assert_eq(l, len[i]);
    cr_assert_eq(s, (int)(i & 1));
  }
  mpb_uhdr h;
  memcpy(&h, buf, sizeof h);
  cr_assert(h.flags & MPB_UF_SPLIT);
}

Test(frame, refused) {
  char buf[1024], err[128];
  mpb_frame f;
  uint64_t at[2] = {24, 30}, len[2] = {5, 6};
  size_t n = make(buf, 2, at, len, 7, 64);
  /* every truncation */
  for (size_t k = 0; k < n; k++) {
    mpb_frame g;
    int rc = mpb_frame_parse(buf, k, 1000, &g, err, sizeof err);
    if (rc == 0) cr_assert(g.inlen + 16 * g.nparts + 16 == k);
  }
  char b2[1024];
  /* sizes whose sum overflows size_t */
  memcpy(b2, buf, n);
  put64(b2, 64 + 8, UINT64_MAX >> 1);
  put64(b2, 64 + 24, UINT64_MAX >> 1);
  cr_assert_eq(mpb_frame_parse(b2, n, 1000, &f, err, sizeof err), -1);
  cr_assert(strstr(err, "size"), "%s", err);
  /* an offset past the inline bytes, one going back, one inside the header */
  memcpy(b2, buf, n);
  put64(b2, 64, 65);
  cr_assert_eq(mpb_frame_parse(b2, n, 1000, &f, err, sizeof err), -1);
  memcpy(b2, buf, n);
  put64(b2, 64 + 16, 23);
  cr_assert_eq(mpb_frame_parse(b2, n, 1000, &f, err, sizeof err), -1);
  memcpy(b2, buf, n);
  put64(b2, 64, 3);
  cr_assert_eq(mpb_frame_parse(b2, n, 1000, &f, err, sizeof err), -1);
  /* a part count larger than the table, zero parts, a tag past the bound */
  memcpy(b2, buf, n);
  put64(b2, n - 8, 1000);
  cr_assert_eq(mpb_frame_parse(b2, n, 1000, &f, err, sizeof err), -1);
  put64(b2, n - 8, 0);
  cr_assert_eq(mpb_frame_parse(b2, n, 1000, &f, err, sizeof err), -1);
  memcpy(b2, buf, n);
  put64(b2, n - 16, 1001);
  cr_assert_eq(mpb_frame_parse(b2, n, 1000, &f, err, sizeof err), -1);
  cr_assert(strstr(err, "tag"), "%s", err);
}

/* How the receiver reads a user message (arrive.c): a message shorter than
** a user header is refused (never read as one), a whole message is whole, a
** header in parts is checked, and every truncation of a good header is
** either refused or read as what it then consistently is. */
Test(frame, classify) {
  char buf[1024], err[128];
  mpb_frame f;
  for (size_t k = 0; k < sizeof(mpb_uhdr); k++) {
    memset(buf, 0xff, sizeof buf); /* the split flag set in whatever is read */
    cr_assert_eq(mpb_frame_classify(buf, k, 1000, &f, err, sizeof err), MPB_RECV_SHORT);
    cr_assert(strstr(err, "shorter than a message header"), "%s", err);
  }
  mpb_uhdr h = {1, 0, 0, 0, 0};
  memcpy(buf, &h, sizeof h);
  cr_assert_eq(mpb_frame_classify(buf, sizeof h, 1000, &f, err, sizeof err), MPB_RECV_WHOLE);
  cr_assert_eq(mpb_frame_classify(buf, 100, 1000, &f, err, sizeof err), MPB_RECV_WHOLE);
  uint64_t at[2] = {24, 30}, len[2] = {5, 6};
  size_t n = make(buf, 2, at, len, 7, 64);
  cr_assert_eq(mpb_frame_classify(buf, n, 1000, &f, err, sizeof err), MPB_RECV_PARTS, "%s", err);
  cr_assert_eq(f.nparts, 2);
  cr_assert_eq(f.total, 11);
  for (size_t k = 0; k < n; k++) {
    int kind = mpb_frame_classify(buf, k, 1000, &f, err, sizeof err);
    if (k < sizeof(mpb_uhdr)) cr_assert_eq(kind, MPB_RECV_SHORT);
    else if (kind == MPB_RECV_PARTS) cr_assert(f.inlen + 16 * f.nparts + 16 == k);
    else cr_assert_eq(kind, MPB_RECV_BADFRAME, "length %zu: %d", k, kind);
  }
}
