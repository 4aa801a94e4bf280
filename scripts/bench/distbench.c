/* SPDX-License-Identifier: MIT */
/*
** distbench: an mplua host with a `bench` module of the C baselines of the
** distributed-array benchmark (scripts/bench/dist.lua), run beside mp's
** transposes and halos in the same job, interleaved.
**   mpiexec -n N build/distbench scripts/bench/dist.lua [rounds]
** Each kernel returns seconds per iteration on rank 0.
*/
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "bench_host.h"
#include "mplua.h"

/* bench.alltoall(iters, bytes): MPI_Alltoall of bytes per rank (bytes / P to each). */
static int alltoall(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1);
  size_t bytes = (size_t)luaL_checkinteger(L, 2);
  MPI_Comm c = mplua_comm(L);
  int P;
  MPI_Comm_size(c, &P);
  int chunk = (int)(bytes / (size_t)P);
  char *a = malloc((size_t)chunk * (size_t)P + 1), *b = malloc((size_t)chunk * (size_t)P + 1);
  memset(a, 1, (size_t)chunk * (size_t)P + 1);
  memset(b, 0, (size_t)chunk * (size_t)P + 1);
  MPI_Alltoall(a, chunk, MPI_BYTE, b, chunk, MPI_BYTE, c); /* warm */
  MPI_Barrier(c);
  double t = MPI_Wtime();
  for (int i = 0; i < iters; i++) MPI_Alltoall(a, chunk, MPI_BYTE, b, chunk, MPI_BYTE, c);
  t = MPI_Wtime() - t;
  free(a);
  free(b);
  lua_pushnumber(L, t / iters);
  return 1;
}

/* bench.transpose(iters, n1, n2): the global n1 x n2 f64 array (column-major)
** from column blocks (n1 x n2/P on each rank) to row blocks (n1/P x n2):
** pack each destination's rows into one contiguous block, MPI_Alltoall,
** unpack each source's block into its columns. P must divide n1 and n2.
** Returns seconds per transpose and, second, a checksum of rank 0's result. */
static int transpose(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1);
  int n1 = (int)luaL_checkinteger(L, 2), n2 = (int)luaL_checkinteger(L, 3);
  MPI_Comm c = mplua_comm(L);
  int P, r;
  MPI_Comm_size(c, &P);
  MPI_Comm_rank(c, &r);
  if (n1 % P || n2 % P) return luaL_error(L, "bench.transpose: %d ranks do not divide the extents", P);
  int m1 = n1 / P, m2 = n2 / P;
  size_t n = (size_t)n1 * (size_t)m2;
  double *src = malloc(n * sizeof *src), *dst = malloc(n * sizeof *dst);
  double *sb = malloc(n * sizeof *sb), *rb = malloc(n * sizeof *rb);
  for (size_t i = 0; i < n; i++) src[i] = (double)r * (double)n + (double)i;
  double t = 0;
  for (int it = -1; it < iters; it++) {
    if (it == 0) {
      MPI_Barrier(c);
      t = MPI_Wtime();
    }
    /* pack: to rank q, rows q*m1 .. q*m1+m1 of my n1 x m2 columns */
    for (int q = 0; q < P; q++) {
      double *o = sb + (size_t)q * (size_t)m1 * (size_t)m2;
      for (int j = 0; j < m2; j++)
        memcpy(o + (size_t)j * (size_t)m1, src + (size_t)j * (size_t)n1 + (size_t)q * (size_t)m1,
               (size_t)m1 * sizeof *o);
    }
    MPI_Alltoall(sb, m1 * m2, MPI_DOUBLE, rb, m1 * m2, MPI_DOUBLE, c);
    /* unpack: from rank p, my m1 rows of its columns p*m2 .. p*m2+m2 */
    for (int p = 0; p < P; p++) {
      const double *in = rb + (size_t)p * (size_t)m1 * (size_t)m2;
      for (int j = 0; j < m2; j++)
        memcpy(dst + ((size_t)p * (size_t)m2 + (size_t)j) * (size_t)m1, in + (size_t)j * (size_t)m1,
               (size_t)m1 * sizeof *dst);
    }
  }
  t = MPI_Wtime() - t;
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += dst[i];
  free(src);
  free(dst);
  free(sb);
  free(rb);
  lua_pushnumber(L, t / iters);
  lua_pushnumber(L, sum);
  return 2;
}

/* bench.halo(iters, nx, ny, px, py): the width-1 halo of a (nx+2) x (ny+2) f64
** block (column-major) on a periodic px x py grid (rank = cx + px*cy), by
** hand: x first (the strided columns packed), then y (contiguous rows,
** halos included so the corners come along), MPI_Isend/MPI_Irecv. */
static int halo(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1);
  int nx = (int)luaL_checkinteger(L, 2), ny = (int)luaL_checkinteger(L, 3);
  int px = (int)luaL_checkinteger(L, 4), py = (int)luaL_checkinteger(L, 5);
  MPI_Comm c = mplua_comm(L);
  int r;
  MPI_Comm_rank(c, &r);
  int cx = r % px, cy = r / px;
  int west = (cx + px - 1) % px + px * cy, east = (cx + 1) % px + px * cy;
  int south = cx + px * ((cy + py - 1) % py), north = cx + px * ((cy + 1) % py);
  int ld = nx + 2, rows = ny + 2;
  double *u = calloc((size_t)ld * (size_t)rows, sizeof *u);
  double *buf = malloc(4 * (size_t)rows * sizeof *buf);
  double *sw = buf, *se = buf + rows, *rw = buf + 2 * rows, *re = buf + 3 * rows;
  for (int i = 0; i < ld * rows; i++) u[i] = r + i * 1e-6;
  double t = 0;
  for (int it = -1; it < iters; it++) {
    if (it == 0) {
      MPI_Barrier(c);
      t = MPI_Wtime();
    }
    MPI_Request q[4];
    MPI_Status sts[4]; /* not MPI_STATUSES_IGNORE: GCC 12 flags it (stringop-overflow) */
    /* x: columns i = 1 and i = nx go west and east; halos i = 0, nx+1 */
    MPI_Irecv(rw, rows, MPI_DOUBLE, west, 1, c, &q[0]);
    MPI_Irecv(re, rows, MPI_DOUBLE, east, 0, c, &q[1]);
    for (int j = 0; j < rows; j++) {
      sw[j] = u[1 + (size_t)j * (size_t)ld];
      se[j] = u[nx + (size_t)j * (size_t)ld];
    }
    MPI_Isend(sw, rows, MPI_DOUBLE, west, 0, c, &q[2]);
    MPI_Isend(se, rows, MPI_DOUBLE, east, 1, c, &q[3]);
    MPI_Waitall(4, q, sts);
    for (int j = 0; j < rows; j++) {
      u[(size_t)j * (size_t)ld] = rw[j];
      u[nx + 1 + (size_t)j * (size_t)ld] = re[j];
    }
    /* y: rows j = 1 and j = ny (contiguous) go south and north */
    MPI_Irecv(u, ld, MPI_DOUBLE, south, 3, c, &q[0]);
    MPI_Irecv(u + (size_t)(ny + 1) * (size_t)ld, ld, MPI_DOUBLE, north, 2, c, &q[1]);
    MPI_Isend(u + (size_t)ld, ld, MPI_DOUBLE, south, 2, c, &q[2]);
    MPI_Isend(u + (size_t)ny * (size_t)ld, ld, MPI_DOUBLE, north, 3, c, &q[3]);
    MPI_Waitall(4, q, sts);
  }
  t = MPI_Wtime() - t;
  free(u);
  free(buf);
  lua_pushnumber(L, t / iters);
  return 1;
}

/* bench.transposev(iters, n1, n2): bench.transpose with MPI_Alltoallv and
** balanced blocks (any number of ranks: block p of n over P is
** [n*p/P, n*(p+1)/P)), what a C code writes for layouts that do not divide.
** Returns seconds per transpose and the checksum of rank 0's result. */
static int transposev(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1);
  int n1 = (int)luaL_checkinteger(L, 2), n2 = (int)luaL_checkinteger(L, 3);
  MPI_Comm c = mplua_comm(L);
  int P, r;
  MPI_Comm_size(c, &P);
  MPI_Comm_rank(c, &r);
#define LO(n, p) ((int)((int64_t)(n) * (p) / P))
  int m2 = LO(n2, r + 1) - LO(n2, r), m1 = LO(n1, r + 1) - LO(n1, r);
  size_t ns = (size_t)n1 * (size_t)m2, nr = (size_t)m1 * (size_t)n2;
  double *src = malloc(ns * sizeof *src + 8), *dst = malloc(nr * sizeof *dst + 8);
  double *sb = malloc(ns * sizeof *sb + 8), *rb = malloc(nr * sizeof *rb + 8);
  int *sc = malloc(4 * (size_t)P * sizeof *sc), *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
  for (int q = 0, o = 0, u = 0; q < P; q++) {
    sc[q] = (LO(n1, q + 1) - LO(n1, q)) * m2, sd[q] = o, o += sc[q];
    rc[q] = m1 * (LO(n2, q + 1) - LO(n2, q)), rd[q] = u, u += rc[q];
  }
  for (size_t i = 0; i < ns; i++) src[i] = (double)LO(n2, r) * n1 + (double)i;
  double t = 0;
  for (int it = -1; it < iters; it++) {
    if (it == 0) {
      MPI_Barrier(c);
      t = MPI_Wtime();
    }
    for (int q = 0; q < P; q++) { /* to q: its rows of my columns */
      int lo = LO(n1, q), len = LO(n1, q + 1) - lo;
      double *o = sb + sd[q];
      for (int j = 0; j < m2; j++)
        memcpy(o + (size_t)j * (size_t)len, src + (size_t)j * (size_t)n1 + (size_t)lo,
               (size_t)len * sizeof *o);
    }
    MPI_Alltoallv(sb, sc, sd, MPI_DOUBLE, rb, rc, rd, MPI_DOUBLE, c);
    for (int p = 0; p < P; p++) { /* from p: my rows of its columns */
      int lo = LO(n2, p), len = LO(n2, p + 1) - lo;
      const double *in = rb + rd[p];
      for (int j = 0; j < len; j++)
        memcpy(dst + ((size_t)lo + (size_t)j) * (size_t)m1, in + (size_t)j * (size_t)m1,
               (size_t)m1 * sizeof *dst);
    }
  }
#undef LO
  t = MPI_Wtime() - t;
  double sum = 0;
  for (size_t i = 0; i < nr; i++) sum += dst[i];
  free(src), free(dst), free(sb), free(rb), free(sc);
  lua_pushnumber(L, t / iters);
  lua_pushnumber(L, sum);
  return 2;
}

/* bench.write_at_all(path, bytes): every rank writes its `bytes` (contiguous,
** at rank * bytes) with MPI_File_write_at_all: open, write, close, as a C
** code saves an array. Returns the seconds (rank 0's). */
static int write_at_all(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  size_t bytes = (size_t)luaL_checkinteger(L, 2);
  MPI_Comm c = mplua_comm(L);
  int r;
  MPI_Comm_rank(c, &r);
  char *buf = malloc(bytes ? bytes : 1);
  memset(buf, r + 1, bytes);
  MPI_File fh;
  MPI_Status st;
  MPI_Barrier(c);
  double t = MPI_Wtime();
  int rc = MPI_File_open(c, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  if (rc == MPI_SUCCESS) {
    rc = MPI_File_write_at_all_c(fh, (MPI_Offset)r * (MPI_Offset)bytes, buf, (MPI_Count)bytes,
                                 MPI_BYTE, &st);
    MPI_File_close(&fh);
  }
  MPI_Barrier(c);
  t = MPI_Wtime() - t;
  free(buf);
  if (rc != MPI_SUCCESS) return luaL_error(L, "bench.write_at_all: MPI error %d", rc);
  lua_pushnumber(L, t);
  return 1;
}

static int open_bench(lua_State *L) {
  static const luaL_Reg funcs[] = {{"alltoall", alltoall}, {"transpose", transpose},
                                   {"transposev", transposev}, {"halo", halo},
                                   {"write_at_all", write_at_all}, {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}

int main(int argc, char **argv) { return bench_host_main(argc, argv, 1, open_bench); }
