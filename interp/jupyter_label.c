/* SPDX-License-Identifier: MIT */
/*
** The workers of a notebook's job (`--jupyter`): every line they write to
** stdout or stderr (print, io.write, warnings, error reports) leaves in one
** write, after a label naming the rank (jupyter_proto.h), so the kernel
** shows each rank's lines whole, and with the rank when asked. stdout and
** stderr become stdio streams of our own (fopencookie), line-buffered; Lua's
** io.stdout and io.stderr are pointed at them, as link.c does for stdin.
** What stdio hands over without a newline (an explicit flush, a line
** longer than its buffer) goes out as a line of its own.
*/
#define _GNU_SOURCE /* fopencookie */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lauxlib.h"
#include "front_proto.h"
#include "jupyter.h"
#include "jupyter_proto.h"

typedef struct labelled {
  int fd;
  char label[32];
  size_t llen;
} labelled;

static labelled outs[2]; /* the process's stdout and stderr */

static ssize_t label_write(void *cookie, const char *p, size_t n) {
  labelled *s = cookie;
  size_t done = 0;
  while (done < n) {
    const char *nl = memchr(p + done, '\n', n - done);
    size_t k = nl != NULL ? (size_t)(nl - (p + done)) : n - done;
    char *line = malloc(s->llen + k + 1);
    if (line == NULL)
      return done > 0 ? (ssize_t)done : -1;
    memcpy(line, s->label, s->llen);
    memcpy(line + s->llen, p + done, k);
    line[s->llen + k] = '\n';
    if (proto_write(s->fd, line, s->llen + k + 1) != 0) {
      free(line);
      return done > 0 ? (ssize_t)done : -1;
    }
    free(line);
    done += k + (nl != NULL);
  }
  return (ssize_t)n;
}

/* A stream writing labelled lines to fd, or NULL. */
static FILE *labelled_stream(labelled *s, int fd, int rank) {
  cookie_io_functions_t io = {NULL, label_write, NULL, NULL};
  FILE *f;
  s->fd = fd;
  s->llen = (size_t)snprintf(s->label, sizeof s->label, JUP_LABEL "%d\a", rank);
  f = fopencookie(s, "w", io);
  if (f != NULL)
    setvbuf(f, NULL, _IOLBF, 0);
  return f;
}

/* io.<name>'s handle now writes to f. */
static void point_io(lua_State *L, const char *name, FILE *old, FILE *f) {
  luaL_Stream *p;
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "io") == LUA_TTABLE) {
    lua_getfield(L, -1, name);
    p = luaL_testudata(L, -1, LUA_FILEHANDLE);
    if (p != NULL && p->f == old)
      p->f = f;
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
}

void jupyter_label_output(lua_State *L, int rank) {
  FILE *o, *e;
  fflush(stdout);
  fflush(stderr);
  o = labelled_stream(&outs[0], STDOUT_FILENO, rank);
  e = labelled_stream(&outs[1], STDERR_FILENO, rank);
  if (o == NULL || e == NULL)
    return; /* unlabelled lines: the kernel shows them without a rank */
  point_io(L, "stdout", stdout, o);
  point_io(L, "stderr", stderr, e);
  stdout = o;
  stderr = e;
}
