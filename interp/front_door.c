/* SPDX-License-Identifier: MIT */
/*
** The front end's door (front.c): the port rank 0 connects back to.
**
** It listens on loopback, where rank 0 runs when the job is on this host;
** on MPLUA_FRONT_HOST's address when rank 0 runs elsewhere and reaches this
** host by that name (on every interface if that is none of ours).
**
** Who connects is heard without waiting for anyone: every connection waits
** in a slot (the oldest goes when they are all taken) until its first line
** has come. The one that greets with the token is rank 0: it gets the
** answer, the others and the listener are closed. A silent or a wrong
** client never holds up the start.
*/
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "front.h"
#include "front_proto.h"

int front_listen(int *port) {
  struct sockaddr_in a;
  socklen_t alen = sizeof a;
  const char *h = getenv("MPLUA_FRONT_HOST");
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), ok;
  if (fd < 0)
    return -1;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (h != NULL && h[0] != '\0') {
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (getaddrinfo(h, NULL, &hints, &res) == 0 && res != NULL)
      a.sin_addr = ((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr;
    if (res != NULL)
      freeaddrinfo(res);
  }
  ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
  if (!ok && errno == EADDRNOTAVAIL) { /* a name that is not one of our addresses (NAT) */
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
  }
  if (!ok || listen(fd, 16) != 0 || getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
    close(fd);
    return -1;
  }
  *port = ntohs(a.sin_port);
  return fd;
}

#define GREETING_MAX (sizeof FRONT_GREETING - 1 + FRONT_TOKEN_LEN + 1)

/* Process global: the front end (a process of its own) has one door. */
static struct caller {
  int open; /* 0: a free slot */
  int fd;
  size_t n;
  char line[GREETING_MAX];
  unsigned long since; /* arrival order */
} callers[FRONT_CALLERS];

static void hang_up(struct caller *c) {
  close(c->fd);
  c->open = 0;
}

void front_listener_close(int *listener) {
  for (int i = 0; i < FRONT_CALLERS; i++)
    if (callers[i].open)
      hang_up(&callers[i]);
  close(*listener);
  *listener = -1;
}

static void take_calls(int listener) {
  static unsigned long arrivals; /* the front end's one door: per process */
  int fd;
  while ((fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
    struct caller *slot = &callers[0];
    for (int i = 0; i < FRONT_CALLERS && slot->open; i++)
      if (!callers[i].open || callers[i].since < slot->since)
        slot = &callers[i];
    if (slot->open)
      hang_up(slot);
    *slot = (struct caller){.open = 1, .fd = fd, .since = arrivals++};
  }
}

/* The token, compared in a time that does not depend on where it differs. */
static int token_is(const char *t) {
  unsigned char d = 0;
  for (size_t i = 0; i < FRONT_TOKEN_LEN; i++)
    d |= (unsigned char)(t[i] ^ front_token[i]);
  return d == 0;
}

/* c's greeting has come, or part of it: 1 when it is rank 0's. */
static int hear(struct caller *c) {
  static const char g[] = FRONT_GREETING;
  ssize_t r = read(c->fd, c->line + c->n, sizeof c->line - c->n);
  if (r < 0 && (errno == EINTR || errno == EAGAIN))
    return 0;
  if (r <= 0) { /* gone */
    hang_up(c);
    return 0;
  }
  c->n += (size_t)r;
  if (c->n < sizeof c->line) {
    if (memchr(c->line, '\n', c->n) != NULL)
      hang_up(c); /* a line, and not the greeting */
    return 0;
  }
  if (memcmp(c->line, g, sizeof g - 1) != 0 || !token_is(c->line + sizeof g - 1) ||
      c->line[sizeof c->line - 1] != '\n') {
    hang_up(c);
    return 0;
  }
  return 1;
}

void front_callers_poll(struct pollfd *p, int *np) {
  for (int i = 0; i < FRONT_CALLERS; i++)
    if (callers[i].open) {
      p[*np].fd = callers[i].fd;
      p[(*np)++].events = POLLIN;
    }
}

int front_callers_answer(struct pollfd *p, int np, int *listener) {
  for (int k = 0; k < np && *listener >= 0; k++) {
    if (p[k].revents == 0)
      continue;
    if (p[k].fd == *listener) {
      take_calls(*listener);
      continue;
    }
    for (int i = 0; i < FRONT_CALLERS; i++) {
      struct caller *c = &callers[i];
      if (!c->open || c->fd != p[k].fd || !hear(c))
        continue;
      fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) & ~O_NONBLOCK); /* frames are written whole */
      if (proto_write(c->fd, fe.tty ? "ok 1\n" : "ok 0\n", 5) != 0) {
        hang_up(c);
        continue;
      }
      fe.sock = c->fd;
      c->open = 0;
      front_listener_close(listener); /* one rank 0 per job */
      return 1;
    }
  }
  return 0;
}
