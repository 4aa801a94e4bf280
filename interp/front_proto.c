/* SPDX-License-Identifier: MIT */
/*
** What both ends of the front end's connection use (front_proto.h): whole
** reads and writes on a descriptor, and the frames' 5-byte header.
*/
#include <errno.h>
#include <unistd.h>

#include "front_proto.h"

int proto_write(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

int proto_read(int fd, void *p, size_t n) {
  char *c = p;
  while (n > 0) {
    ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    c += r;
    n -= (size_t)r;
  }
  return 0;
}

void proto_header(unsigned char h[FRONT_FRAME_HDR], char kind, uint32_t n) {
  h[0] = (unsigned char)kind;
  h[1] = (unsigned char)(n >> 24);
  h[2] = (unsigned char)(n >> 16);
  h[3] = (unsigned char)(n >> 8);
  h[4] = (unsigned char)n;
}

uint32_t proto_length(const unsigned char h[FRONT_FRAME_HDR]) {
  return (uint32_t)h[1] << 24 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 8 | (uint32_t)h[4];
}
