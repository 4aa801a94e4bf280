/* SPDX-License-Identifier: MIT */
/*
** The front end's face for a notebook (front.h): what the job writes
** becomes the cell's messages on iopub, what it asks for comes from the
** notebook.
**   - Output: rank 0's stream (the link) and the workers' labelled lines
**     (the launcher's pipes) go out as stream messages of whole lines,
**     with "[r] " before each line when MPLUA_LABELS is set; rank 0's
**     unfinished line waits for its end, or for the end of the cell.
**   - The end of a cell: rank 0 says how many last lines the workers wrote
**     (jupyter_proto.h), and the reply waits until they are all here, so
**     every line a rank printed in a cell is in that cell.
**   - io.read: an input_request on the stdin channel, with what the cell
**     left on the line as the prompt; end of input when the request does
**     not allow stdin.
**   - The progress line of mp.pool: a display updated in place.
*/
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "front.h"
#include "jupyter_proto.h"
#define MPLUA_JUPYTER_KERNEL
#include "jupyter.h"

#define END_WAIT_MS 10000 /* a guard: a worker whose stdout was closed never writes its end */
#define PARENT_MS 1000    /* how often to look whether Jupyter is still there */

/* A process global: the face runs in the front end, a process of its own. */
static struct {
  int failed;
  int labels;
  char *part;        /* rank 0's unfinished line */
  size_t plen, pcap;
  char nonce[JUP_NONCE_LEN + 1];
  int want[2], got[2], ending;
  struct timespec end_at;
  char progress_id[40];
  int input;         /* an input_request is out */
  pid_t parent;      /* who started the kernel: when it is gone, so is the kernel */
} jf;

int jf_failed(void) { return jf.failed; }

static void stream(const char *name, const char *p, size_t n) {
  cJSON *c;
  char *text;
  if (n == 0 || (text = strndup(p, n)) == NULL)
    return;
  c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "name", name);
  cJSON_AddStringToObject(c, "text", text);
  free(text);
  jw_send(JW_IOPUB, jk_current(), "stream", c);
}

/* Lines of rank `rank` (-1: unknown) for stream `name`, labelled or not. */
static void lines(const char *name, int rank, const char *p, size_t n) {
  char label[16];
  size_t ll, k = 0, i = 0;
  char *out;
  if (!jf.labels || rank < 0) {
    stream(name, p, n);
    return;
  }
  ll = (size_t)snprintf(label, sizeof label, "[%d] ", rank);
  if ((out = malloc(n + (n + 1) * ll + 1)) == NULL)
    return;
  while (i < n) {
    const char *nl = memchr(p + i, '\n', n - i);
    size_t m = nl != NULL ? (size_t)(nl - (p + i)) + 1 : n - i;
    memcpy(out + k, label, ll);
    memcpy(out + k + ll, p + i, m);
    k += ll + m;
    i += m;
  }
  stream(name, out, k);
  free(out);
}

void jf_flush(void) {
  if (jf.plen > 0)
    lines("stdout", 0, jf.part, jf.plen);
  jf.plen = 0;
}

static void face_rank0(const char *p, size_t n) {
  const char *nl = memrchr(p, '\n', n);
  if (nl == NULL || jf.plen > 0) { /* hold the unfinished line */
    if (jf.plen + n > jf.pcap) {
      size_t cap = jf.pcap ? 2 * jf.pcap : 4096;
      while (cap < jf.plen + n)
        cap *= 2;
      char *q = realloc(jf.part, cap);
      if (q == NULL)
        return;
      jf.part = q;
      jf.pcap = cap;
    }
    memcpy(jf.part + jf.plen, p, n);
    jf.plen += n;
    nl = memrchr(jf.part, '\n', jf.plen);
    if (nl != NULL) {
      size_t k = (size_t)(nl - jf.part) + 1;
      lines("stdout", 0, jf.part, k);
      memmove(jf.part, jf.part + k, jf.plen - k);
      jf.plen -= k;
    }
    return;
  }
  size_t k = (size_t)(nl - p) + 1;
  lines("stdout", 0, p, k);
  if (k < n)
    face_rank0(p + k, n - k);
}

/* ----------------------------------------------- the end of a cell */
void jf_cell_begin(const char *nonce) {
  snprintf(jf.nonce, sizeof jf.nonce, "%s", nonce);
  jf.want[0] = jf.want[1] = jf.got[0] = jf.got[1] = 0;
  jf.ending = 0;
  jf.progress_id[0] = '\0';
}

static int ended(void) { return jf.got[0] >= jf.want[0] && jf.got[1] >= jf.want[1]; }

int jf_cell_end(int out, int err) {
  jf.want[0] = out;
  jf.want[1] = err;
  if (ended())
    return 1;
  jf.ending = 1;
  clock_gettime(CLOCK_MONOTONIC, &jf.end_at);
  return 0;
}

/* The launcher's pipes: labelled lines, end lines. */
static void face_output(int fd, const char *p, size_t n) {
  const char *name = fd == 2 ? "stderr" : "stdout";
  size_t i = 0, ml = strlen(JUP_LABEL), el = strlen(JUP_END);
  while (i < n) {
    const char *nl = memchr(p + i, '\n', n - i), *s = p + i;
    size_t m = nl != NULL ? (size_t)(nl - s) + 1 : n - i;
    int rank = -1;
    i += m;
    if (m > ml && memcmp(s, JUP_LABEL, ml) == 0) {
      const char *bel = memchr(s + ml, '\a', m - ml);
      if (bel != NULL) {
        rank = atoi(s + ml);
        m -= (size_t)(bel + 1 - s);
        s = bel + 1;
      }
    }
    if (m >= el + JUP_NONCE_LEN && memcmp(s, JUP_END, el) == 0) {
      if (memcmp(s + el, jf.nonce, JUP_NONCE_LEN) == 0) {
        jf.got[fd == 2]++;
        if (jf.ending && ended()) {
          jf.ending = 0;
          jk_cell_over();
        }
      }
      continue;
    }
    lines(name, rank, s, m);
  }
}

/* ----------------------------------------------- progress */
static void face_progress(const char *p, size_t n) {
  cJSON *c, *data, *tr;
  const char *cell = NULL;
  long long done = 0, total = 0;
  char *text, html[160] = "";
  const char *colon;
  if (jk_current() == NULL)
    return;
  if (n == 0) { /* the pool has ended: the last line stays */
    jf.progress_id[0] = '\0';
    return;
  }
  if ((text = strndup(p, n)) == NULL)
    return;
  colon = strstr(text, ": ");
  if (colon != NULL && sscanf(colon + 2, "%lld/%lld", &done, &total) == 2 && total > 0)
    snprintf(html, sizeof html, "<progress value=\"%lld\" max=\"%lld\"></progress> ", done,
             total);
  c = cJSON_CreateObject();
  data = cJSON_AddObjectToObject(c, "data");
  cJSON_AddStringToObject(data, "text/plain", text);
  if (html[0] != '\0') {
    size_t hn = strlen(html) + 2 * n + 32;
    char *h = malloc(hn);
    if (h != NULL) {
      snprintf(h, hn, "%s<code>%s</code>", html, text);
      cJSON_AddStringToObject(data, "text/html", h);
      free(h);
    }
  }
  free(text);
  cJSON_AddItemToObject(c, "metadata", cJSON_CreateObject());
  tr = cJSON_AddObjectToObject(c, "transient");
  if (jf.progress_id[0] == '\0') {
    memcpy(jf.progress_id, "progress-", 9);
    jw_random_hex(jf.progress_id + 9, 16);
    cell = "display_data";
  }
  else
    cell = "update_display_data";
  cJSON_AddStringToObject(tr, "display_id", jf.progress_id);
  jf_flush();
  jw_send(JW_IOPUB, jk_current(), cell, c);
}

/* ----------------------------------------------- asking */
static void face_ask(const char *prompt, size_t n) {
  int one = 1;
  /* a request's frame is two writes: no waiting for the first one's ack */
  setsockopt(fe.sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  jf.input = 0;
  if (prompt != NULL && n == strlen(JUP_READY) && memcmp(prompt, JUP_READY, n) == 0) {
    jf_flush();
    jk_rank0_ready(1);
    return;
  }
  if (!jk_allow_stdin()) {
    front_answer('E', NULL, 0); /* io.read gets nil */
    return;
  }
  cJSON *c = cJSON_CreateObject();
  size_t pl = jf.plen + (prompt != NULL ? n : 0);
  char *text = malloc(pl + 1);
  if (text != NULL) {
    memcpy(text, jf.part != NULL ? jf.part : "", jf.plen);
    if (prompt != NULL)
      memcpy(text + jf.plen, prompt, n);
    text[pl] = '\0';
  }
  jf.plen = 0; /* the unfinished line is the prompt */
  cJSON_AddStringToObject(c, "prompt", text != NULL ? text : "");
  cJSON_AddBoolToObject(c, "password", 0);
  free(text);
  jf.input = 1;
  jw_send(JW_STDIN, jk_current(), "input_request", c);
}

static void take_input(void) {
  jmsg m;
  while (jw_recv(JW_STDIN, &m) == 1) {
    cJSON *v = cJSON_GetObjectItemCaseSensitive(m.content, "value");
    if (jf.input && fe.asking && strcmp(jw_type(&m), "input_reply") == 0) {
      const char *s = cJSON_IsString(v) ? v->valuestring : "";
      size_t n = strlen(s);
      char *line = malloc(n + 2);
      jf.input = 0;
      if (line != NULL) {
        memcpy(line, s, n);
        line[n] = '\n';
        front_answer('L', line, n + 1);
        free(line);
      }
    }
    jw_free(&m);
  }
}

/* Ctrl-C (an interrupt) while rank 0 asks: io.read is interrupted; at
** JUP_READY there is nothing to stop. */
static void face_interrupt(void) {
  if (jf.input) {
    jf.input = 0;
    front_answer('C', NULL, 0);
  }
}

/* ----------------------------------------------- the loop */
static int face_pollfds(struct pollfd *p, int max, int *timeout_ms) {
  static const int socks[] = {JW_SHELL, JW_CONTROL, JW_STDIN};
  int n = 0;
  if (jf.failed)
    return 0;
  if (jf.parent > 1 && getppid() != jf.parent) { /* as ipykernel's parent poller */
    fprintf(stderr, "mplua kernel: the process that started it is gone: ending\n");
    jf.parent = 0;
    raise(SIGTERM);
  }
  *timeout_ms = PARENT_MS;
  take_input();
  jk_poll();
  for (int i = 0; i < 3 && n < max; i++, n++) {
    p[n].fd = jw_fd(socks[i]);
    p[n].events = POLLIN;
    p[n].revents = 0;
  }
  if (jf.ending) {
    struct timespec now;
    long ms;
    clock_gettime(CLOCK_MONOTONIC, &now);
    ms = END_WAIT_MS - ((now.tv_sec - jf.end_at.tv_sec) * 1000 +
                        (now.tv_nsec - jf.end_at.tv_nsec) / 1000000);
    if (ms <= 0) {
      fprintf(stderr, "mplua kernel: the workers' last lines of a cell did not come\n");
      jf.ending = 0;
      jk_cell_over();
      ms = 0;
    }
    *timeout_ms = ms < PARENT_MS ? (int)ms : PARENT_MS;
  }
  return n;
}

static void face_polled(const struct pollfd *p, int n) { (void)p, (void)n; }

static void face_marker(char kind, const char *p, size_t n) {
  if (kind == 'J')
    jk_rank0_message(p, n);
  else if (kind == 'A')
    jk_rank0_answer(p, n);
}

static void face_start(void) {
  char err[512];
  const char *l = getenv("MPLUA_LABELS");
  jf.labels = l != NULL && l[0] != '\0' && strcmp(l, "0") != 0;
  jf.parent = getppid();
  if (jw_bind(err, sizeof err) != 0) {
    fprintf(stderr, "mplua: --jupyter: %s\n", err);
    jf.failed = 1;
    raise(SIGTERM); /* front.c stops the job */
    return;
  }
  cJSON *c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "execution_state", "starting");
  jw_send(JW_IOPUB, NULL, "status", c);
}

static void face_end(void) {
  jf_flush();
  if (!jf.failed)
    jk_job_ended();
  free(jf.part);
}

static void face_nothing(void) {}
static void face_history(const char *p, size_t n) { (void)p, (void)n; }

const front_face jupyter_face = {face_start, face_end, face_rank0, face_output, face_progress,
                                 face_history, face_ask, NULL, face_interrupt, face_nothing,
                                 face_nothing, face_marker, face_pollfds, face_polled};
