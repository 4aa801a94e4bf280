/* SPDX-License-Identifier: MIT */
/*
** Writing and checking the header of a message sent in parts (frame.h).
*/
#include <stdio.h>
#include <string.h>

#include "chan/frame.h"
#include "chan/msg.h"

typedef struct { uint64_t tag, nparts; } trailer;

size_t mpb_frame_size(size_t inlen, uint64_t n) {
  return inlen + (size_t)n * 16 + sizeof(trailer);
}

void mpb_frame_write(char *out, const char *inl, size_t inlen, uint64_t n, const size_t *at,
                     const size_t *plen, const char *isstr, uint64_t tag) {
  memcpy(out, inl, inlen);
  mpb_uhdr h;
  memcpy(&h, out, sizeof h);
  h.flags |= MPB_UF_SPLIT;
  memcpy(out, &h, sizeof h);
  char *t = out + inlen;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t a = at[i], l = plen[i] | (isstr[i] ? MPB_PART_STR : 0);
    memcpy(t + 16 * i, &a, 8);
    memcpy(t + 16 * i + 8, &l, 8);
  }
  trailer tr = {tag, n};
  memcpy(t + 16 * n, &tr, sizeof tr);
}

static int bad(char *err, size_t errlen, const char *what) {
  if (errlen) snprintf(err, errlen, "malformed message in parts: %s", what);
  return -1;
}

int mpb_frame_parse(const char *buf, size_t len, uint64_t tag_ub, mpb_frame *f, char *err,
                    size_t errlen) {
  trailer tr;
  size_t min = sizeof(mpb_uhdr) + sizeof tr;
  if (len < min) return bad(err, errlen, "too short");
  memcpy(&tr, buf + len - sizeof tr, sizeof tr);
  if (tr.nparts == 0 || tr.nparts > MPB_PART_MAX) return bad(err, errlen, "part count");
  if (tr.tag > tag_ub) return bad(err, errlen, "tag");
  if (tr.nparts > (len - min) / 16) return bad(err, errlen, "table longer than the message");
  size_t n = (size_t)tr.nparts, inlen = len - sizeof tr - 16 * n, total = 0, prev = 0;
  const char *t = buf + inlen;
  for (size_t i = 0; i < n; i++) {
    uint64_t at, plen;
    memcpy(&at, t + 16 * i, 8);
    memcpy(&plen, t + 16 * i + 8, 8);
    plen &= ~MPB_PART_STR;
    if (at < prev || at < sizeof(mpb_uhdr) || at > inlen) return bad(err, errlen, "part offset");
    if (plen > SIZE_MAX - total) return bad(err, errlen, "part sizes");
    prev = (size_t)at;
    total += (size_t)plen;
  }
  if (total > SIZE_MAX - inlen - 4096) return bad(err, errlen, "message size");
  f->inlen = inlen;
  f->tag = tr.tag;
  f->nparts = tr.nparts;
  f->table = t;
  f->total = total;
  return 0;
}

int mpb_frame_classify(const char *buf, size_t len, uint64_t tag_ub, mpb_frame *f, char *err,
                       size_t errlen) {
  if (len < sizeof(mpb_uhdr)) {
    if (errlen) snprintf(err, errlen, "%zu bytes, shorter than a message header", len);
    return MPB_RECV_SHORT;
  }
  if (mpb_frame_whole(buf, len)) return MPB_RECV_WHOLE;
  return mpb_frame_parse(buf, len, tag_ub, f, err, errlen) == 0 ? MPB_RECV_PARTS
                                                                : MPB_RECV_BADFRAME;
}

void mpb_frame_part(const mpb_frame *f, size_t i, size_t *at, size_t *len, int *str) {
  uint64_t a, l;
  memcpy(&a, f->table + 16 * i, 8);
  memcpy(&l, f->table + 16 * i + 8, 8);
  *at = (size_t)a;
  *str = (l & MPB_PART_STR) != 0;
  *len = (size_t)(l & ~MPB_PART_STR);
}
