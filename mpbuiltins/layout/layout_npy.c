/* SPDX-License-Identifier: MIT */
/*
** layout_npy.c: NumPy's .npy header (layout_npy.h). The parser reads the
** headers NumPy writes (any key order, spaces, version 1.0 to 3.0, a
** trailing comma) and nothing more general than a dict of those three keys.
*/
#include <stdio.h>
#include <string.h>

#include "layout/layout_npy.h"

static const char *const descrs[] = {"<f8", "<f4", "<i8", "<i4", "|u1", "<c8", "<c16"};
#define NDESCR ((int)(sizeof descrs / sizeof descrs[0]))

const char *mpb_npy_descr(int dtype) { return dtype >= 0 && dtype < NDESCR ? descrs[dtype] : NULL; }

size_t mpb_npy_header(int dtype, int ndim, const int64_t *dims, char *buf, size_t size) {
  char dict[512];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': True, 'shape': (",
                   mpb_npy_descr(dtype) ? mpb_npy_descr(dtype) : "?");
  for (int k = 0; k < ndim; k++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld%s", (long long)dims[k],
                  ndim == 1 ? "," : k + 1 < ndim ? ", " : "");
  n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
  size_t pre = 10, total = (pre + (size_t)n + 1 + 63) / 64 * 64; /* magic, dict, '\n' */
  if (total > size || total - pre > 65535) return 0;
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  size_t hlen = total - pre;
  buf[8] = (char)(hlen & 0xff);
  buf[9] = (char)(hlen >> 8);
  memcpy(buf + pre, dict, (size_t)n);
  memset(buf + pre + n, ' ', total - pre - (size_t)n - 1);
  buf[total - 1] = '\n';
  return total;
}

/* ------------------------------------------------------------ parsing */
typedef struct { const char *p, *end; } cur;

static void sp(cur *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n')) c->p++;
}

static int eat(cur *c, char ch) {
  sp(c);
  if (c->p < c->end && *c->p == ch) return c->p++, 1;
  return 0;
}

/* A quoted string (' or ") into out. */
static int str(cur *c, char *out, size_t size) {
  sp(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
  char q = *c->p++;
  size_t n = 0;
  while (c->p < c->end && *c->p != q) {
    if (n + 1 >= size) return 0;
    out[n++] = *c->p++;
  }
  if (c->p >= c->end) return 0;
  c->p++;
  out[n] = '\0';
  return 1;
}

static int word(cur *c, const char *w) {
  sp(c);
  size_t n = strlen(w);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0) return 0;
  c->p += n;
  return 1;
}

static const char *shape(cur *c, mpb_npy *h) {
  if (!eat(c, '(')) return "shape is not a tuple";
  h->ndim = 0;
  while (!eat(c, ')')) {
    sp(c);
    if (h->ndim == MPB_NPY_MAXDIM) return "more than 8 dimensions";
    int64_t v = 0;
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') return "shape holds something other than sizes";
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
      if (v > (INT64_MAX - 9) / 10) return "a size too large";
      v = v * 10 + (*c->p++ - '0');
    }
    if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2's long */
    h->dims[h->ndim++] = v;
    if (!eat(c, ',')) {
      if (!eat(c, ')')) return "shape is not a tuple of sizes";
      break;
    }
  }
  return NULL;
}

const char *mpb_npy_parse(const char *buf, size_t len, mpb_npy *h, size_t *need) {
  const unsigned char *u = (const unsigned char *)buf;
  memset(h, 0, sizeof *h);
  *need = 0;
  h->dtype = -1;
  if (len < 10) return *need = 10, "truncated header";
  if (memcmp(buf, "\x93NUMPY", 6) != 0) return "not a .npy file (no \\x93NUMPY magic)";
  size_t pre, hlen;
  if (u[6] == 1) pre = 10, hlen = (size_t)u[8] | (size_t)u[9] << 8;
  else if (u[6] == 2 || u[6] == 3) {
    if (len < 12) return *need = 12, "truncated header";
    pre = 12, hlen = (size_t)u[8] | (size_t)u[9] << 8 | (size_t)u[10] << 16 | (size_t)u[11] << 24;
  } else {
    return "unknown .npy format version";
  }
  if (hlen > ((size_t)1 << 24)) return "header too long";
  if (len < pre + hlen) return *need = pre + hlen, "truncated header";
  h->offset = pre + hlen;
  cur c = {buf + pre, buf + pre + hlen};
  int seen = 0;
  if (!eat(&c, '{')) return "the header is not a dict";
  while (!eat(&c, '}')) {
    char key[32], val[32];
    if (!str(&c, key, sizeof key) || !eat(&c, ':')) return "the header is not a dict of strings";
    if (strcmp(key, "descr") == 0) {
      if (!str(&c, val, sizeof val)) return "descr is not a string";
      for (int d = 0; d < NDESCR; d++)
        if (strcmp(val, descrs[d]) == 0) h->dtype = d;
      if (h->dtype < 0 && strcmp(val, "<u1") == 0) h->dtype = 4;
      if (h->dtype < 0) return "an element type mplua has not (descr: f8, f4, i8, i4, u1, c8, c16, little-endian)";
      seen |= 1;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (word(&c, "True")) h->fortran = 1;
      else if (word(&c, "False")) h->fortran = 0;
      else return "fortran_order is not True or False";
      seen |= 2;
    } else if (strcmp(key, "shape") == 0) {
      const char *e = shape(&c, h);
      if (e) return e;
      seen |= 4;
    } else {
      return "an unknown key in the header";
    }
    if (!eat(&c, ',')) {
      if (!eat(&c, '}')) return "the header is not a dict";
      break;
    }
  }
  if (seen != 7) return "the header lacks descr, fortran_order or shape";
  return NULL;
}
