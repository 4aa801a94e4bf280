/* SPDX-License-Identifier: MIT */
/*
** Rank 0's end of the front end (front.c; the protocol is in front_proto.h).
**
** mplua_attach connects to the front end named by MPLUA_FRONT and makes the
** connection rank 0's stdout and stderr, so everything rank 0 writes, from
** print to MPICH's own messages, reaches the front end in the order it was
** written. stdin becomes a stdio stream of our own (fopencookie) whose read
** function asks the front end for a line with a marker ('R', carrying the
** prompt the REPL set with link_prompt) and returns its answer: the front
** end knows exactly when rank 0 wants input, and shows the prompt then.
**
** A thread reads the connection: it hands answers to the main thread through
** a pipe, and turns an interrupt frame into SIGUSR1 for the main thread (the
** runtime's interrupt, which, unlike SIGINT, never falls back to the default
** action), so Ctrl-C stops a running command however many times it comes.
** The thread touches no Lua state. An interrupt belongs to the command that
** ran when it was pressed: frames for an older request are dropped here, and
** the REPL drops what is still pending when the next command starts
** (mplua_interrupt_clear). A frame for the request whose answer starts that
** command can come before the command does (Ctrl-C right after Enter): the
** thread notes its request (lk.intr) and the command is interrupted when it
** starts (link_interrupted).
*/
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lauxlib.h"
#include "front_proto.h"
#include "host.h"
#include "mplua.h"

#define CONNECT_MS 10000

/* A process global: the link replaces the process's stdin, stdout and
** stderr, and its thread and SIGUSR1 are the process's too. */
static struct {
  int on, tty;
  int sock;               /* the connection: also fds 1 and 2 */
  int answers[2];         /* pipe: the thread writes answers, stdin reads them */
  char token[FRONT_TOKEN_LEN + 1];
  const char *prompt;     /* of the next request; NULL: a plain read */
  char *buf;              /* the current answer, and what of it stdio has not taken */
  size_t cap, pos, len;
  atomic_long seq;        /* requests sent */
  atomic_long intr;       /* the last request an interrupt frame named */
  atomic_int waiting;     /* the main thread waits for an answer */
  pthread_t main, reader;
  link_queryfn query;     /* answers 'Q' frames while waiting (NULL: none) */
  void *query_ud;
} lk = {.sock = -1, .answers = {-1, -1}};

int link_on(void) { return lk.on; }
int link_interrupted(void) {
  return lk.on && atomic_load(&lk.seq) > 0 && atomic_load(&lk.intr) == atomic_load(&lk.seq);
}
void link_prompt(const char *prompt) { lk.prompt = prompt; }

int mplua_stdin_tty(void) { return lk.on ? lk.tty : isatty(STDIN_FILENO); }


/*
** {==================================================================
** Rank 0 -> front end: markers in the output stream
** ===================================================================
*/

/* One marker, in one write, after whatever stdio holds. */
static void mark(char kind, const char *a, size_t alen, const char *b, size_t blen) {
  char head[96];
  int h;
  char *m;
  fflush(stdout);
  fflush(stderr);
  h = snprintf(head, sizeof head, FRONT_MARK "%s;%c;%zu;", lk.token, kind, alen + blen);
  m = malloc((size_t)h + alen + blen + 1);
  if (m == NULL)
    return; /* a marker lost: no prompt or progress shown, nothing worse */
  memcpy(m, head, (size_t)h);
  if (alen)
    memcpy(m + h, a, alen);
  if (blen)
    memcpy(m + h + alen, b, blen);
  m[(size_t)h + alen + blen] = '\a';
  proto_write(lk.sock, m, (size_t)h + alen + blen + 1);
  free(m);
}

void link_history(const char *chunk) {
  if (lk.on)
    mark('H', chunk, strlen(chunk), NULL, 0);
}

void link_mark(char kind, const char *p, size_t n) {
  if (lk.on)
    mark(kind, p, n, NULL, 0);
}

void link_on_query(link_queryfn fn, void *ud) {
  lk.query = fn;
  lk.query_ud = ud;
}

/* The runtime's progress line (mplua_set_progress), drawn by the front end. */
static void progress(void *ud, const char *text) {
  (void)ud;
  if (lk.on)
    mark('P', text ? text : "", text ? strlen(text) : 0, NULL, 0);
}

/* }================================================================== */


/*
** {==================================================================
** stdin: a stream whose reads are requests to the front end
** ===================================================================
*/

/* Ask for input and wait for the answer; leaves a line in lk.buf. Returns
** its length, 0 at end of input, -1 after Ctrl-C. */
static ssize_t request(void) {
  char seq[32];
  unsigned char hdr[FRONT_FRAME_HDR];
  uint32_t n;
  long s = atomic_fetch_add(&lk.seq, 1) + 1;
  int len = snprintf(seq, sizeof seq, "%ld;%c", s, lk.prompt ? 'p' : 'r');
  atomic_store(&lk.waiting, 1);
  mark('R', seq, (size_t)len, lk.prompt, lk.prompt ? strlen(lk.prompt) : 0);
again:
  if (proto_read(lk.answers[0], hdr, sizeof hdr) != 0) {
    atomic_store(&lk.waiting, 0);
    return 0; /* the front end is gone: end of input */
  }
  n = proto_length(hdr);
  if (n > lk.cap) {
    char *b = realloc(lk.buf, n);
    if (b == NULL) { /* drop the line, but keep the stream in step */
      char sink[512];
      while (n > 0) {
        uint32_t k = n < sizeof sink ? n : (uint32_t)sizeof sink;
        if (proto_read(lk.answers[0], sink, k) != 0)
          break;
        n -= k;
      }
      atomic_store(&lk.waiting, 0);
      errno = ENOMEM;
      return -1;
    }
    lk.buf = b;
    lk.cap = n;
  }
  if (n > 0 && proto_read(lk.answers[0], lk.buf, n) != 0)
    n = 0;
  if (hdr[0] == 'Q') { /* a query (Tab), answered while we wait on */
    if (lk.query != NULL)
      lk.query(lk.query_ud, lk.buf, n);
    else
      mark('A', NULL, 0, NULL, 0);
    goto again;
  }
  atomic_store(&lk.waiting, 0);
  lk.pos = 0;
  lk.len = n;
  if (hdr[0] == 'C') {
    raise(SIGINT); /* the REPL drops its input; a command is interrupted */
    errno = EINTR;
    return -1;
  }
  return hdr[0] == 'L' ? (ssize_t)n : 0;
}

int link_ask(const char *prompt, const char **p, size_t *n) {
  const char *saved = lk.prompt;
  ssize_t got;
  lk.prompt = prompt;
  got = request();
  lk.prompt = saved;
  *p = lk.buf;
  *n = got > 0 ? (size_t)got : 0;
  lk.pos = lk.len; /* stdin has not seen it */
  return got > 0 ? 'L' : got == 0 ? 'E' : 'C';
}

static ssize_t stdin_read(void *cookie, char *out, size_t size) {
  size_t k;
  (void)cookie;
  if (lk.pos == lk.len) {
    ssize_t n = request();
    if (n <= 0)
      return n;
  }
  k = lk.len - lk.pos < size ? lk.len - lk.pos : size;
  memcpy(out, lk.buf + lk.pos, k);
  lk.pos += k;
  return (ssize_t)k;
}

/* stdin and Lua's io.stdin (the default input) read through the front end. */
static int swap_stdin(lua_State *L) {
  cookie_io_functions_t io = {stdin_read, NULL, NULL, NULL};
  FILE *old = stdin, *f = fopencookie(NULL, "r", io);
  luaL_Stream *p;
  if (f == NULL)
    return -1;
  stdin = f;
  lua_getfield(L, LUA_REGISTRYINDEX, "_IO_input");
  p = luaL_testudata(L, -1, LUA_FILEHANDLE);
  if (p != NULL && p->f == old)
    p->f = f;
  lua_pop(L, 1);
  return 0;
}

/* }================================================================== */


/*
** {==================================================================
** The reader thread: answers to the pipe, interrupts to the main thread
** ===================================================================
*/

static void *reader(void *ud) {
  unsigned char hdr[FRONT_FRAME_HDR];
  char num[24];
  (void)ud;
  for (;;) {
    uint32_t n;
    if (proto_read(lk.sock, hdr, sizeof hdr) != 0)
      break;
    n = proto_length(hdr);
    if (hdr[0] == 'I') {
      if (n >= sizeof num || proto_read(lk.sock, num, n) != 0)
        break;
      num[n] = '\0';
      long s = strtol(num, NULL, 10);
      if (s == atomic_load(&lk.seq)) { /* noted first: link_interrupted sees it */
        atomic_store(&lk.intr, s);
        if (!atomic_load(&lk.waiting))
          pthread_kill(lk.main, SIGUSR1);
      }
      continue;
    }
    if (n > FRONT_MAX_PAYLOAD || proto_write(lk.answers[1], hdr, sizeof hdr) != 0)
      break;
    while (n > 0) { /* copy the payload through */
      char chunk[4096];
      uint32_t k = n < sizeof chunk ? n : (uint32_t)sizeof chunk;
      if (proto_read(lk.sock, chunk, k) != 0 || proto_write(lk.answers[1], chunk, k) != 0)
        goto gone;
      n -= k;
    }
  }
gone:
  /* The front end is gone (or spoke nonsense): end of input for the prompt,
  ** and a running command is stopped, as if by Ctrl-C. */
  if (!atomic_load(&lk.waiting))
    pthread_kill(lk.main, SIGUSR1);
  proto_header(hdr, 'E', 0);
  proto_write(lk.answers[1], hdr, sizeof hdr);
  close(lk.answers[1]);
  lk.answers[1] = -1;
  return NULL;
}

static int start_reader(void) {
  sigset_t all, old;
  int err;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay the main thread's */
  lk.main = pthread_self();
  err = pthread_create(&lk.reader, NULL, reader, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err == 0)
    pthread_detach(lk.reader);
  return err == 0 ? 0 : -1;
}

/* }================================================================== */


/*
** {==================================================================
** Connecting
** ===================================================================
*/

/* A connected socket to host:port within CONNECT_MS, or -1. */
static int dial(const char *host, const char *port) {
  struct addrinfo hints, *res, *a;
  int fd = -1;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, port, &hints, &res) != 0)
    return -1;
  for (a = res; a != NULL && fd < 0; a = a->ai_next) {
    struct pollfd p;
    int err = 0;
    socklen_t elen = sizeof err;
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0)
      continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      p.fd = fd;
      p.events = POLLOUT;
      if (errno != EINPROGRESS || poll(&p, 1, CONNECT_MS) != 1 ||
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0) {
        close(fd);
        fd = -1;
        continue;
      }
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  freeaddrinfo(res);
  return fd;
}

/* Greet; returns 0 when the front end answers "ok". */
static int greet(int fd) {
  char line[64];
  size_t n = 0;
  struct timeval tv = {CONNECT_MS / 1000, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (proto_write(fd, FRONT_GREETING, strlen(FRONT_GREETING)) != 0 ||
      proto_write(fd, lk.token, strlen(lk.token)) != 0 || proto_write(fd, "\n", 1) != 0)
    return -1;
  while (n < sizeof line - 1) {
    if (read(fd, line + n, 1) != 1)
      return -1;
    if (line[n++] == '\n')
      break;
  }
  line[n] = '\0';
  if (strncmp(line, "ok ", 3) != 0)
    return -1;
  lk.tty = line[3] == '1';
  tv.tv_sec = 0;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return 0;
}

/* MPLUA_FRONT=<port>:<token>:<host>[,<host>...] */
static int connect_front(const char *spec) {
  char port[16], hosts[512], *h, *save = NULL;
  const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (c2 == NULL || (size_t)(c1 - spec) >= sizeof port ||
      c2 - c1 - 1 != FRONT_TOKEN_LEN || strlen(c2 + 1) >= sizeof hosts)
    return -1;
  memcpy(port, spec, (size_t)(c1 - spec));
  port[c1 - spec] = '\0';
  memcpy(lk.token, c1 + 1, FRONT_TOKEN_LEN);
  lk.token[FRONT_TOKEN_LEN] = '\0';
  strcpy(hosts, c2 + 1);
  for (h = strtok_r(hosts, ",", &save); h != NULL; h = strtok_r(NULL, ",", &save)) {
    int fd = dial(h, port);
    if (fd >= 0 && greet(fd) == 0)
      return fd;
    if (fd >= 0)
      close(fd);
  }
  return -1;
}

int mplua_attach(lua_State *L) {
  const char *spec = getenv(FRONT_ENV);
  char *copy;
  int fd;
  if (spec == NULL || spec[0] == '\0')
    return 0;
  copy = strdup(spec);
  unsetenv(FRONT_ENV); /* not for the programs the ranks start */
  if (mplua_rank(L) != 0 || copy == NULL) {
    free(copy);
    return 0;
  }
  fd = connect_front(copy);
  free(copy);
  if (fd < 0) {
    fprintf(stderr, "mplua: cannot reach the front end (" FRONT_ENV "): %s%s\n",
            errno ? strerror(errno) : "no answer",
            getenv("MPLUA_FRONT_HOST") ? "" : " (it listens on 127.0.0.1: when rank 0 runs on "
            "another host, set MPLUA_FRONT_HOST to the front end's host name)");
    return -1;
  }
  lk.sock = fd;
  if (pipe2(lk.answers, O_CLOEXEC) != 0 || swap_stdin(L) != 0 || start_reader() != 0) {
    fprintf(stderr, "mplua: cannot attach to the front end: %s\n", strerror(errno));
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  dup2(fd, STDOUT_FILENO); /* one stream: the order of writes is kept */
  dup2(fd, STDERR_FILENO);
  lk.on = 1;
  mplua_set_progress(L, progress, NULL);
  return 1;
}

/* }================================================================== */
