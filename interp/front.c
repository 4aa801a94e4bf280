/* SPDX-License-Identifier: MIT */
/*
** The front end: `mplua -n N [options] [script [args]]`.
**
** Under MPICH's launcher the ranks have no terminal: their stdin, stdout and
** stderr are hydra's pipes. So the process the user started keeps the
** terminal and starts the job below it, as IPython's terminal front end
** talks to its kernel: it listens on a TCP port (front_door.c), starts the
** launcher (MPLUA_LAUNCHER, default "mpiexec -n") with its address in
** MPLUA_FRONT, and rank 0 connects back (link.c; the protocol is in front_proto.h). From
** then on rank 0's output arrives here in the order it was written, with
** markers saying when rank 0 wants a line (and with which prompt), what goes
** into the history and what the progress line says; the terminal side is
** front_tty.c.
**
** The launcher runs in a process group of its own, so the terminal's Ctrl-C
** reaches only this process, which turns each one into an interrupt of the
** running command (never hydra's job-killing second SIGINT), unless rank 0
** does not take them (front_stuck.c). If this process
** dies, the launcher gets SIGTERM (PR_SET_PDEATHSIG) and rank 0 sees its
** connection close; if the job dies, the connection and the launcher's pipes
** close here, and the front end ends with the launcher's status. When
** no one reads its output any more (EPIPE), it ends the job and its status
** is 128 + SIGPIPE, as a shell sees of `lua` in the same place.
*/
#define _GNU_SOURCE /* pipe2, memrchr */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "front.h"
#include "front_proto.h"
#include "host.h"

#define LAUNCHER_DEFAULT "mpiexec -n"
#define FACE_FDS 8      /* descriptors a face may add to the loop's poll */
#define QUERY_MS 5000   /* how long a query waits for rank 0's answer */

front_state fe = {.sock = -1};

char front_token[FRONT_TOKEN_LEN + 1];
/* The front end is a process of its own (no Lua state): what it knows of
** its one job lives in process globals (fe, and these). */
static struct buf *from0_buf; /* rank 0's stream, unparsed (front_run's) */
static int sigpipe_fds[2] = {-1, -1}; /* signal handler -> loop: the handler writes it */


/*
** {==================================================================
** Small helpers
** ===================================================================
*/

/* A growable byte buffer. */
typedef struct buf {
  char *p;
  size_t len, cap;
} buf;

static int buf_add(buf *b, const char *p, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    char *q;
    while (cap < b->len + n)
      cap *= 2;
    q = realloc(b->p, cap);
    if (q == NULL)
      return -1;
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->len, p, n);
  b->len += n;
  return 0;
}

static void buf_drop(buf *b, size_t n) {
  memmove(b->p, b->p + n, b->len - n);
  b->len -= n;
}

static void on_signal(int sig) {
  unsigned char c = (unsigned char)sig;
  int saved = errno;
  if (write(sigpipe_fds[1], &c, 1) < 0) { /* full: the loop has plenty to do */ }
  errno = saved;
}

/* }================================================================== */


/*
** {==================================================================
** Talking to rank 0
** ===================================================================
*/

void front_send(char kind, const char *p, size_t n) {
  unsigned char h[FRONT_FRAME_HDR];
  if (fe.sock < 0)
    return;
  proto_header(h, kind, (uint32_t)n);
  if (proto_write(fe.sock, h, sizeof h) != 0 || proto_write(fe.sock, p, n) != 0) {
    close(fe.sock); /* rank 0 is gone; its output has all been read */
    fe.sock = -1;
  }
}

void front_answer(char kind, const char *p, size_t n) {
  if (!fe.asking)
    return;
  fe.asking = 0;
  front_send(kind, p, n);
}

/* Rank 0 has connected (it stays 0 until then). */
static int attached;
/* Ctrl-C came while the job was starting: it goes to rank 0 as an interrupt
** of what it runs first (the script; at the prompt it is dropped). */
static int early;
/* The launcher, until it has been waited for. */
static pid_t job;

static void send_interrupt(void) {
  char num[24];
  front_send('I', num, (size_t)snprintf(num, sizeof num, "%ld", fe.seq));
}

/* Ctrl-C: at a prompt, drop the line; while a command runs, interrupt it
** (every time: each Ctrl-C is one interrupt frame), unless rank 0 takes
** none (front_stuck.c). */
static void interrupt(pid_t launcher) {
  if (fe.sock < 0) {
    if (!attached) {
      if (fe.tty && !early) /* after the terminal's "^C" */
        fe.face->rank0("\n", 1);
      early = 1;
    }
    else if (launcher > 0) /* the job is ending: let the launcher stop it */
      kill(launcher, SIGINT);
  }
  else if (fe.asking)
    fe.face->interrupt();
  else {
    if (fe.tty) /* after the terminal's "^C" */
      fe.face->rank0("\n", 1);
    if (!front_stuck_ctrl_c(launcher))
      send_interrupt();
  }
}

void front_ctrl_c(void) { interrupt(job); }

/* The answer to the query in flight (front_query). */
static struct {
  int waiting, got;
  char *p;
  size_t n;
} qa;

static void query_answer(const char *p, size_t n) {
  if (!qa.waiting || qa.got)
    return;
  qa.got = 1;
  if ((qa.p = malloc(n + 1)) != NULL) {
    memcpy(qa.p, p, n);
    qa.p[n] = '\0';
    qa.n = n;
  }
}

static void parse_stream(buf *b, int eof, int more);

/* Bytes wait to be read on fd. */
static int pending(int fd) {
  int n = 0;
  return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

char *front_query(const char *q, size_t qn, size_t *n) {
  int left = QUERY_MS;
  char *answer;
  if (fe.sock < 0 || !fe.asking || from0_buf == NULL)
    return NULL;
  qa.waiting = 1;
  qa.got = 0;
  qa.p = NULL;
  front_send('Q', q, qn);
  while (!qa.got && fe.sock >= 0 && left > 0) { /* rank 0 answers at once: it is waiting */
    struct pollfd p = {fe.sock, POLLIN, 0};
    char chunk[8192];
    ssize_t r;
    int got = poll(&p, 1, 100);
    if (got < 0 && errno != EINTR)
      break;
    left -= 100;
    if (got <= 0)
      continue;
    r = read(fe.sock, chunk, sizeof chunk);
    if (r <= 0 || buf_add(from0_buf, chunk, (size_t)r) != 0)
      break; /* the loop sees the end of the connection again */
    parse_stream(from0_buf, 0, pending(fe.sock));
  }
  qa.waiting = 0;
  answer = qa.p;
  *n = answer != NULL ? qa.n : 0;
  qa.p = NULL;
  return answer;
}

/* A marker's payload (front_proto.h). */
static void marker(char kind, const char *p, size_t n) {
  if (kind == 'R') { /* "<seq>;p<prompt>" or "<seq>;r" */
    const char *semi = memchr(p, ';', n);
    if (semi == NULL || semi + 1 >= p + n)
      return;
    fe.seq = strtol(p, NULL, 10);
    fe.asking = 1;
    front_stuck_taken();
    fe.prompted = semi[1] == 'p';
    if (fe.prompted)
      fe.face->ask(semi + 2, n - (size_t)(semi + 2 - p));
    else
      fe.face->ask(NULL, 0);
  }
  else if (kind == 'H')
    fe.face->history(p, n);
  else if (kind == 'P')
    fe.face->progress(p, n);
  else if (kind == 'A' && qa.waiting)
    query_answer(p, n);
  else if (fe.face->marker != NULL)
    fe.face->marker(kind, p, n);
}

/* Rank 0's stream: text for the user, with markers in it. Consumes what is
** decided; a possible marker cut by the end of the buffer waits for more,
** and so does an unfinished line when more is already there to read (`more`:
** rank 0 wrote the line at once, and the other ranks' lines must not cut it). */
static void parse_stream(buf *b, int eof, int more) {
  static const char mark[] = FRONT_MARK;
  size_t ml = sizeof mark - 1, tl = FRONT_TOKEN_LEN, i = 0;
  while (i < b->len) {
    char *esc = memchr(b->p + i, '\033', b->len - i);
    size_t at = esc ? (size_t)(esc - b->p) : b->len, have, need = ml + tl + 1, k, len = 0;
    if (esc == NULL && more) { /* a line cut by the read: the rest is on its way */
      char *nl = memrchr(b->p + i, '\n', at - i);
      at = nl != NULL ? (size_t)(nl + 1 - b->p) : i;
    }
    if (at > i)
      fe.face->rank0(b->p + i, at - i);
    i = at;
    if (esc == NULL)
      break;
    have = b->len - at;
    /* prefix: ESC ] mplua ; token ; */
    if (memcmp(esc, mark, have < ml ? have : ml) != 0 ||
        (have > ml && memcmp(esc + ml, front_token, have - ml < tl ? have - ml : tl) != 0) ||
        (have >= need && esc[need - 1] != ';')) {
      fe.face->rank0(esc, 1); /* not ours */
      i++;
      continue;
    }
    if (have < need + 3)
      goto later;
    /* kind ; length ; payload BEL */
    k = need + 2;
    if (esc[need + 1] != ';')
      goto not_ours;
    while (k < have && esc[k] >= '0' && esc[k] <= '9' && len <= FRONT_MAX_PAYLOAD)
      len = len * 10 + (size_t)(esc[k++] - '0');
    if (k == have)
      goto later;
    if (esc[k] != ';' || len > FRONT_MAX_PAYLOAD)
      goto not_ours;
    if (have < k + 1 + len + 1)
      goto later;
    if (esc[k + 1 + len] != '\a')
      goto not_ours;
    marker(esc[need], esc + k + 1, len);
    i += k + 1 + len + 1;
    continue;
  not_ours:
    fe.face->rank0(esc, 1);
    i++;
    continue;
  later:
    if (eof) { /* cut short for ever: it was text */
      fe.face->rank0(esc, have);
      i = b->len;
    }
    break;
  }
  buf_drop(b, i);
}

/* }================================================================== */


/*
** {==================================================================
** Starting the job
** ===================================================================
*/

static int make_token(void) {
  unsigned char r[FRONT_TOKEN_LEN / 2];
  size_t i;
  if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
    return -1;
  for (i = 0; i < sizeof r; i++)
    snprintf(front_token + 2 * i, 3, "%02x", r[i]);
  return 0;
}

/* MPLUA_FRONT for the job: the host rank 0 connects to, MPLUA_FRONT_HOST if
** set (rank 0 on another host), else this one by loopback. */
static char *front_address(int port) {
  const char *h = getenv("MPLUA_FRONT_HOST");
  size_t n;
  char *v;
  if (h == NULL || h[0] == '\0')
    h = "127.0.0.1";
  n = strlen(front_token) + strlen(h) + 64;
  v = malloc(n);
  if (v != NULL)
    snprintf(v, n, "%d:%s:%s", port, front_token, h);
  return v;
}

/* The launcher's command line: MPLUA_LAUNCHER's words, N, this program, and
** the options but "-n N". Malloc'ed, NULL-terminated; NULL without memory. */
static char **job_argv(int nranks, int argc, char **argv, char **words) {
  static char exe[4096], count[16]; /* v points into them until the job is spawned */
  const char *l = getenv("MPLUA_LAUNCHER");
  char **v;
  int i, n = 0, skip = argv[1][2] != '\0' ? 2 : 3; /* "-nN" or "-n N" */
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0)
    snprintf(exe, sizeof exe, "%s", argv[0]);
  else
    exe[len] = '\0';
  snprintf(count, sizeof count, "%d", nranks);
  *words = strdup(l != NULL && l[0] != '\0' ? l : LAUNCHER_DEFAULT);
  v = calloc(strlen(*words) / 2 + 4 + (size_t)argc, sizeof *v);
  if (*words == NULL || v == NULL) {
    free(v);
    return NULL;
  }
  for (char *save = NULL, *w = strtok_r(*words, " \t", &save); w != NULL;
       w = strtok_r(NULL, " \t", &save))
    v[n++] = w;
  v[n++] = count;
  v[n++] = exe;
  for (i = skip; i < argc; i++)
    v[n++] = argv[i];
  v[n] = NULL;
  return v;
}

/* Fork the launcher in its own process group with stdin from /dev/null and
** stdout/stderr into the pipes. Returns its pid or -1. */
static pid_t spawn(char **v, const char *address, int out[2], int err[2]) {
  pid_t parent = getpid(), pid = fork();
  if (pid != 0)
    return pid;
  setpgid(0, 0); /* the terminal's Ctrl-C is the front end's alone */
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent)
    _exit(1);
  signal(SIGINT, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  dup2(out[1], STDOUT_FILENO);
  dup2(err[1], STDERR_FILENO);
  int null = open("/dev/null", O_RDONLY);
  if (null >= 0)
    dup2(null, STDIN_FILENO);
  setenv(FRONT_ENV, address, 1);
  execvp(v[0], v);
  fprintf(stderr, "mplua: cannot run '%s': %s\n", v[0], strerror(errno));
  _exit(127);
}

/* }================================================================== */


/*
** {==================================================================
** The loop
** ===================================================================
*/

/* Line-buffered relay of one of the launcher's pipes (other ranks' output,
** hydra's messages); returns 0 at end of file. Each rank writes a line of up
** to RELAY_LINE bytes at once (interp/lines.c) and hydra forwards what it
** reads whole, so what is here up to a newline is whole lines. */
#define RELAY_LINE (64 << 10)
static int relay(int fd, int to, buf *b) {
  char chunk[16384];
  ssize_t n = read(fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return 1;
  if (n > 0 && buf_add(b, chunk, (size_t)n) == 0) {
    char *nl = memrchr(b->p, '\n', b->len);
    size_t k = nl ? (size_t)(nl - b->p) + 1 : (b->len > RELAY_LINE ? b->len : 0);
    if (k > 0) {
      fe.face->output(to, b->p, k);
      buf_drop(b, k);
    }
    return 1;
  }
  if (b->len > 0)
    fe.face->output(to, b->p, b->len);
  b->len = 0;
  return 0;
}

static int exit_status(int wstatus) {
  if (WIFEXITED(wstatus))
    return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus))
    return 128 + WTERMSIG(wstatus);
  return 1;
}

int mplua_front(int nranks, int argc, char **argv) {
  return front_run(&tty_face, nranks, argc, argv);
}

int front_run(const front_face *face, int nranks, int argc, char **argv) {
  int out[2], err[2], port, listener, status = -1, fd_out, fd_err, i;
  static const int sigs[] = {SIGINT, SIGCHLD, SIGTERM, SIGHUP, SIGWINCH};
  char **v, *words = NULL, *address;
  static buf from0;
  buf bout = {0}, berr = {0};
  struct sigaction sa;
  pid_t launcher;
  fe.face = face;
  from0_buf = &from0;
  fe.tty = face->input != NULL && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  if (make_token() != 0 || (listener = front_listen(&port)) < 0 ||
      pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
      pipe2(err, O_CLOEXEC) != 0 || (address = front_address(port)) == NULL ||
      (v = job_argv(nranks, argc, argv, &words)) == NULL) {
    fprintf(stderr, "mplua: cannot start the front end: %s\n", strerror(errno));
    return EXIT_FAILURE;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (i = 0; i < (int)(sizeof sigs / sizeof sigs[0]); i++)
    sigaction(sigs[i], &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  launcher = spawn(v, address, out, err);
  free(v);
  free(words);
  free(address);
  close(out[1]);
  close(err[1]);
  fd_out = out[0];
  fd_err = err[0];
  if (launcher < 0) {
    fprintf(stderr, "mplua: cannot start the job: %s\n", strerror(errno));
    return EXIT_FAILURE;
  }
  job = launcher;
  face->start();
  while (status < 0 || fd_out >= 0 || fd_err >= 0 || fe.sock >= 0) {
    struct pollfd p[6 + FACE_FDS + FRONT_CALLERS];
    int np = 0, ip = -1, il = -1, is = -1, io = -1, ie = -1, over, ix, nx = 0, ms = -1;
    p[np].fd = sigpipe_fds[0], p[np++].events = POLLIN;
    if (listener >= 0) {
      il = np, p[np].fd = listener, p[np++].events = POLLIN;
      front_callers_poll(p, &np);
    }
    if (fe.sock >= 0)
      is = np, p[np].fd = fe.sock, p[np++].events = POLLIN;
    if (fd_out >= 0)
      io = np, p[np].fd = fd_out, p[np++].events = POLLIN;
    if (fd_err >= 0)
      ie = np, p[np].fd = fd_err, p[np++].events = POLLIN;
    if (fe.asking && face->input != NULL)
      ip = np, p[np].fd = STDIN_FILENO, p[np++].events = POLLIN;
    ix = np;
    if (face->pollfds != NULL)
      np += nx = face->pollfds(p + np, FACE_FDS, &ms);
    over = status >= 0 && fd_out < 0 && fd_err < 0; /* what rank 0 wrote is here */
    if (poll(p, (nfds_t)np, over ? 0 : ms) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (p[0].revents) {
      unsigned char s[64];
      ssize_t n = read(sigpipe_fds[0], s, sizeof s);
      for (ssize_t k = 0; k < n; k++) {
        int w;
        if (s[k] == SIGINT)
          interrupt(job);
        else if (s[k] == SIGWINCH)
          face->winch();
        else if (s[k] == SIGCHLD && status < 0 && waitpid(launcher, &w, WNOHANG) == launcher) {
          status = exit_status(w);
          job = 0;
        }
        else if ((s[k] == SIGTERM || s[k] == SIGHUP) && status < 0)
          kill(launcher, SIGTERM);
      }
    }
    if (il >= 0 && front_callers_answer(p, np, &listener)) {
      attached = 1;
      if (early)
        send_interrupt();
    }
    if (is >= 0 && fe.sock >= 0 && (p[is].revents || over)) {
      char chunk[8192];
      ssize_t n = p[is].revents ? read(fe.sock, chunk, sizeof chunk) : 0;
      if (n > 0 && buf_add(&from0, chunk, (size_t)n) == 0)
        parse_stream(&from0, 0, pending(fe.sock));
      else if (n <= 0 && (n == 0 || (errno != EINTR && errno != EAGAIN))) {
        parse_stream(&from0, 1, 0); /* rank 0 is gone */
        close(fe.sock);
        fe.sock = -1;
        if (fe.asking) {
          fe.asking = 0;
          face->abandon();
        }
      }
    }
    if (io >= 0 && p[io].revents && !relay(fd_out, STDOUT_FILENO, &bout)) {
      close(fd_out);
      fd_out = -1;
    }
    if (ie >= 0 && p[ie].revents &&
        !relay(fd_err, fe.tty ? STDOUT_FILENO : STDERR_FILENO, &berr)) {
      close(fd_err);
      fd_err = -1;
    }
    if (ip >= 0 && fe.asking && p[ip].revents)
      face->input();
    if (nx > 0)
      face->polled(p + ix, nx);
    if (fe.out_closed == 1 && status < 0) { /* no one reads the output: end the job */
      fe.out_closed = 2;
      kill(launcher, SIGTERM);
    }
    if (status < 0 && fd_out < 0 && fd_err < 0) { /* pipes closed: wait for it */
      int w;
      if (waitpid(launcher, &w, 0) == launcher) {
        status = exit_status(w);
        job = 0;
      }
    }
  }
  face->end();
  if (listener >= 0)
    front_listener_close(&listener);
  free(from0.p);
  free(bout.p);
  free(berr.p);
  if (fe.out_closed)
    return 128 + SIGPIPE; /* what a shell sees of `lua` killed by SIGPIPE */
  if (front_stuck_ended())
    return 128 + SIGINT; /* ... and of `lua` ended by its second Ctrl-C */
  return status < 0 ? EXIT_FAILURE : status;
}

/* }================================================================== */
