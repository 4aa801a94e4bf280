/* SPDX-License-Identifier: MIT */
/*
** Every rank's output in whole lines, labelled by rank on request.
**
** The ranks share the launcher's output: hydra reads each rank's pipe and
** forwards what one read returns, as it comes, so a line reaches the
** terminal whole only if the rank wrote it with one write(2) (a pipe keeps
** a write of up to PIPE_BUF bytes whole; a longer one while the reader
** keeps up). Lua's print writes each of its pieces apart, and MPI_Init
** leaves stdout unbuffered (MPICH's process-manager client calls
** setbuf(stdout, NULL)), so after MPI_Init stdout gets a line buffer of
** LINE_BUF bytes: a line up to that long leaves in one write.
**
** Labels (MPLUA_LABELS=1, mplua --labels): each line of stdout and stderr
** starts with "[rank] ", as `mpiexec -l` writes them. stdout and stderr
** then become stdio streams of our own (fopencookie) that put the label in
** front of every line and hand each piece to one write; stderr stays
** unbuffered.
*/
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lauxlib.h"
#include "lualib.h"
#include "embed.h"

#define LINE_BUF (64 << 10) /* as much as hydra reads from a pipe at once */

typedef struct labelled {
  int fd;
  int bol; /* the next byte starts a line */
} labelled;

/* Process globals: stdout and stderr are the process's (host_lines runs once). */
static labelled out_l = {STDOUT_FILENO, 1}, err_l = {STDERR_FILENO, 1};
static char label[24];
static size_t label_len;
static char outbuf[LINE_BUF]; /* stdout's buffer, for the life of the process */
static FILE *out_f;           /* stdout once labelled */

/* All of p to fd, in as few writes as it takes (one, for a pipe and a line
** up to PIPE_BUF). */
static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* The piece with a label before each line it starts, in one write. */
static ssize_t labelled_write(void *cookie, const char *p, size_t n) {
  labelled *s = cookie;
  char small[4096], *b = small;
  size_t starts = (size_t)s->bol, k = 0;
  if (n == 0)
    return 0;
  for (const char *c = p; (c = memchr(c, '\n', (size_t)(p + n - c))) != NULL && c + 1 < p + n; c++)
    starts++;
  if (n + starts * label_len > sizeof small && (b = malloc(n + starts * label_len)) == NULL) {
    errno = ENOMEM;
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    if (s->bol) {
      memcpy(b + k, label, label_len);
      k += label_len;
    }
    b[k++] = p[i];
    s->bol = p[i] == '\n';
  }
  int rc = write_all(s->fd, b, k);
  if (b != small)
    free(b);
  return rc == 0 ? (ssize_t)n : -1;
}

/* Lua's io.stdout/io.stderr (and the default output) hold the FILE they
** were opened with: point them at the new one. */
static void swap_lua_file(lua_State *L, const char *field, FILE *old, FILE *f) {
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, LUA_IOLIBNAME) == LUA_TTABLE) {
    lua_getfield(L, -1, field);
    luaL_Stream *p = luaL_testudata(L, -1, LUA_FILEHANDLE);
    if (p != NULL && p->f == old)
      p->f = f;
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
}

void host_lines(lua_State *L, int rank) {
  const char *v = getenv("MPLUA_LABELS");
  cookie_io_functions_t io = {NULL, labelled_write, NULL, NULL};
  FILE *o, *e;
  if (out_f != NULL) { /* a state opened before labelled them: this one sees ours */
    return;
  }
  fflush(stdout);
  if (v == NULL || v[0] == '\0' || strcmp(v, "0") == 0) {
    setvbuf(stdout, outbuf, _IOLBF, sizeof outbuf);
    return;
  }
  label_len = (size_t)snprintf(label, sizeof label, "[%d] ", rank);
  o = fopencookie(&out_l, "w", io);
  e = fopencookie(&err_l, "w", io);
  if (o == NULL || e == NULL) { /* no labels, whole lines still */
    if (o != NULL)
      fclose(o);
    if (e != NULL)
      fclose(e);
    setvbuf(stdout, outbuf, _IOLBF, sizeof outbuf);
    return;
  }
  setvbuf(o, outbuf, _IOLBF, sizeof outbuf);
  setvbuf(e, NULL, _IONBF, 0);
  fflush(stderr);
  swap_lua_file(L, "stdout", stdout, o);
  swap_lua_file(L, "stderr", stderr, e);
  stdout = out_f = o;
  stderr = e;
}
