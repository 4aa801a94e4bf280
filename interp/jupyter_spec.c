/* SPDX-License-Identifier: MIT */
/*
** mplua --install-kernel [--user | --prefix DIR] [-n N] [--name NAME]
**                        [--labels] [--interrupt-mode signal|message]
** writes a kernelspec (kernel.json, logo-32x32.png, logo-64x64.png,
** logo-svg.svg) where Jupyter looks for kernels, as `jupyter kernelspec
** install` would: --user in the user's data directory ($JUPYTER_DATA_DIR,
** else $XDG_DATA_HOME/jupyter, else ~/.local/share/jupyter), --prefix in
** DIR/share/jupyter, else /usr/local/share/jupyter; then kernels/NAME
** (default mplua-N). The kernel runs this very program (its absolute path).
** The logo (a 2x2 grid of ranks, Lua's blue) is drawn here: PNG with
** stored (uncompressed) deflate blocks needs only CRC-32 and Adler-32.
*/
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jupyter.h"

static int mkdirs(const char *path) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s", path);
  for (char *s = p + 1; *s; s++) {
    if (*s == '/') {
      *s = '\0';
      if (mkdir(p, 0755) != 0 && errno != EEXIST)
        return -1;
      *s = '/';
    }
  }
  return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* ------------------------------------------------------------ the logo */
static unsigned long crc_table[256]; /* built once, then read only */

static unsigned long crc(const unsigned char *p, size_t n, unsigned long c) {
  if (crc_table[1] == 0)
    for (unsigned long k = 0; k < 256; k++) {
      unsigned long v = k;
      for (int b = 0; b < 8; b++)
        v = v & 1 ? 0xedb88320UL ^ (v >> 1) : v >> 1;
      crc_table[k] = v;
    }
  c ^= 0xffffffffUL;
  for (size_t i = 0; i < n; i++)
    c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffUL;
}

static void be32(unsigned char *p, unsigned long v) {
  p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static void chunk(FILE *f, const char *type, const unsigned char *data, size_t n) {
  unsigned char h[8];
  unsigned long c = crc((const unsigned char *)type, 4, 0);
  be32(h, (unsigned long)n);
  memcpy(h + 4, type, 4);
  fwrite(h, 1, 8, f);
  if (n) fwrite(data, 1, n, f); /* IEND has no data (and a NULL pointer) */
  be32(h, n ? crc(data, n, c) : c);
  fwrite(h, 1, 4, f);
}

/* The logo's pixel (RGBA) at x, y of a size x size square. */
static void pixel(int size, int x, int y, unsigned char px[4]) {
  int cell = size / 2, cx = x % cell, cy = y % cell;
  double r = cell * 0.38, dx = cx - cell / 2.0 + 0.5, dy = cy - cell / 2.0 + 0.5;
  int in = dx * dx + dy * dy <= r * r;
  px[0] = 0, px[1] = 0, px[2] = 128; /* Lua's blue */
  px[3] = in ? 255 : 0;
  if (in && (x / cell + y / cell) % 2) /* every other rank lighter */
    px[0] = 64, px[1] = 96, px[2] = 200;
}

static int write_png(const char *path, int size) {
  size_t row = 1 + 4 * (size_t)size, raw = row * (size_t)size;
  size_t nblocks = (raw + 65534) / 65535, zlen = 2 + raw + 5 * nblocks + 4;
  unsigned char *z = malloc(zlen), ihdr[13];
  unsigned long a = 1, b = 0;
  size_t k = 0, left = raw, done = 0;
  FILE *f;
  if (z == NULL)
    return -1;
  z[k++] = 0x78, z[k++] = 0x01;
  while (left > 0) {
    size_t n = left < 65535 ? left : 65535;
    z[k++] = left == n;
    z[k++] = (unsigned char)n, z[k++] = (unsigned char)(n >> 8);
    z[k++] = (unsigned char)~n, z[k++] = (unsigned char)(~n >> 8);
    for (size_t i = 0; i < n; i++, done++) {
      size_t y = done / row, x = done % row;
      unsigned char px[4], v = 0;
      if (x > 0) {
        pixel(size, (int)((x - 1) / 4), (int)y, px);
        v = px[(x - 1) % 4];
      }
      z[k++] = v;
      a = (a + v) % 65521;
      b = (b + a) % 65521;
    }
    left -= n;
  }
  be32(z + k, (b << 16) | a);
  k += 4;
  be32(ihdr, (unsigned long)size);
  be32(ihdr + 4, (unsigned long)size);
  ihdr[8] = 8, ihdr[9] = 6, ihdr[10] = 0, ihdr[11] = 0, ihdr[12] = 0;
  if ((f = fopen(path, "wb")) == NULL) {
    free(z);
    return -1;
  }
  fwrite("\x89PNG\r\n\x1a\n", 1, 8, f);
  chunk(f, "IHDR", ihdr, sizeof ihdr);
  chunk(f, "IDAT", z, k);
  chunk(f, "IEND", NULL, 0);
  free(z);
  return fclose(f) == 0 ? 0 : -1;
}

static const char logo_svg[] =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"64\" height=\"64\" viewBox=\"0 0 64 64\">\n"
    "<circle cx=\"16\" cy=\"16\" r=\"12\" fill=\"#000080\"/>"
    "<circle cx=\"48\" cy=\"16\" r=\"12\" fill=\"#4060c8\"/>\n"
    "<circle cx=\"16\" cy=\"48\" r=\"12\" fill=\"#4060c8\"/>"
    "<circle cx=\"48\" cy=\"48\" r=\"12\" fill=\"#000080\"/>\n</svg>\n";

/* ------------------------------------------------------------ kernel.json */
/* A JSON string of s (paths and names: escape what JSON needs). */
static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", *s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

static int usage(void) {
  fputs("usage: mplua --install-kernel [--user | --prefix DIR] [-n N] [--name NAME]\n"
        "                              [--labels] [--interrupt-mode signal|message]\n", stderr);
  return 1;
}

int jupyter_install(int argc, char **argv) {
  const char *prefix = NULL, *name = NULL, *mode = "signal";
  int user = 0, n = 4, labels = 0;
  char exe[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 32], defname[32];
  ssize_t len;
  FILE *f;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--user") == 0)
      user = 1;
    else if (strcmp(a, "--labels") == 0)
      labels = 1;
    else if (strcmp(a, "--prefix") == 0 && i + 1 < argc)
      prefix = argv[++i];
    else if (strcmp(a, "--name") == 0 && i + 1 < argc)
      name = argv[++i];
    else if (strcmp(a, "--interrupt-mode") == 0 && i + 1 < argc &&
             (strcmp(argv[i + 1], "signal") == 0 || strcmp(argv[i + 1], "message") == 0))
      mode = argv[++i];
    else if (strncmp(a, "-n", 2) == 0 && (a[2] != '\0' || i + 1 < argc)) {
      char *end;
      long v = strtol(a[2] != '\0' ? a + 2 : argv[++i], &end, 10);
      if (*end != '\0' || v < 1 || v > 1000000)
        return usage();
      n = (int)v;
    }
    else
      return usage();
  }
  if (user && prefix != NULL)
    return usage();
  if (name == NULL) {
    snprintf(defname, sizeof defname, "mplua-%d", n);
    name = defname;
  }
  if (strchr(name, '/') != NULL || name[0] == '.' || name[0] == '\0') {
    fprintf(stderr, "mplua: --install-kernel: bad kernel name '%s'\n", name);
    return 1;
  }
  if (user) {
    const char *d = getenv("JUPYTER_DATA_DIR"), *x = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    if (d != NULL && d[0] != '\0')
      snprintf(dir, sizeof dir, "%s/kernels/%s", d, name);
    else if (x != NULL && x[0] != '\0')
      snprintf(dir, sizeof dir, "%s/jupyter/kernels/%s", x, name);
    else
      snprintf(dir, sizeof dir, "%s/.local/share/jupyter/kernels/%s", home ? home : ".", name);
  }
  else
    snprintf(dir, sizeof dir, "%s/share/jupyter/kernels/%s", prefix ? prefix : "/usr/local",
             name);
  len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0 || mkdirs(dir) != 0) {
    fprintf(stderr, "mplua: --install-kernel: cannot create %s: %s\n", dir, strerror(errno));
    return 1;
  }
  exe[len] = '\0';
  snprintf(file, sizeof file, "%s/kernel.json", dir);
  if ((f = fopen(file, "w")) == NULL) {
    fprintf(stderr, "mplua: --install-kernel: cannot write %s: %s\n", file, strerror(errno));
    return 1;
  }
  fputs("{\n  \"argv\": [", f);
  json_str(f, exe);
  fprintf(f, ", \"-n\", \"%d\", \"--jupyter\", \"{connection_file}\"],\n", n);
  fprintf(f, "  \"display_name\": \"mplua (Lua %d rank%s)\",\n", n, n == 1 ? "" : "s");
  fputs("  \"language\": \"lua\",\n  \"interrupt_mode\": ", f);
  json_str(f, mode);
  fputs(",\n  \"env\": {", f);
  if (labels)
    fputs("\"MPLUA_LABELS\": \"1\"", f);
  fputs("},\n  \"metadata\": {\"debugger\": false}\n}\n", f);
  if (fclose(f) != 0)
    return 1;
  snprintf(file, sizeof file, "%s/logo-svg.svg", dir);
  if ((f = fopen(file, "w")) != NULL) {
    fputs(logo_svg, f);
    fclose(f);
  }
  snprintf(file, sizeof file, "%s/logo-32x32.png", dir);
  write_png(file, 32);
  snprintf(file, sizeof file, "%s/logo-64x64.png", dir);
  write_png(file, 64);
  printf("mplua: installed kernelspec %s in %s\n", name, dir);
  return 0;
}
