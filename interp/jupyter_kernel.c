/* SPDX-License-Identifier: MIT */
/*
** The kernel's requests, one handler per message type (as xeus has them).
** Shell requests are handled one at a time, in the order they came, as
** ipykernel does: execute, complete and inspect go to rank 0 (when it waits
** at JUP_READY) and the next request waits for their end; kernel_info,
** is_complete, history and comm_info are answered here. Control requests
** (interrupt, shutdown, kernel_info) are answered at once, even while a
** cell runs. Every request is bracketed by busy and idle on iopub.
**
** Why the kernel is the front end's process and not rank 0: it is the
** process Jupyter starts, signals and kills, on the host whose address the
** connection file names; it stays free to answer heartbeats, interrupts and
** shutdowns while rank 0 computes or waits in MPI; rank 0 may run on
** another host; and a job that dies is seen here and reported, not
** mistaken for a silent kernel. Rank 0 keeps what needs the Lua state:
** running cells, completing names, rendering values.
*/
#define _GNU_SOURCE
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "lualib.h"
#include "front.h"
#include "mplua.h"
#include "jupyter_proto.h"
#define MPLUA_JUPYTER_KERNEL
#include "jupyter.h"

typedef struct pending {
  jmsg m;
  struct pending *next;
} pending;

/* A process global: the kernel is a process of its own (one connection file). */
static struct {
  int nranks;
  long count;             /* execution_count */
  pending *head, *tail;   /* shell requests not yet handled, in order */
  pending *cur;           /* the one rank 0 works on */
  int query;              /* cur is complete or inspect */
  int ready;              /* rank 0 waits at JUP_READY */
  int stopping;           /* shut down: rank 0 gets end of input when it waits */
  cJSON *error;           /* the running cell's error, for its reply */
  char nonce[JUP_NONCE_LEN + 1];
  char **hist;            /* the cells run, for history requests */
  long nhist;
  lua_State *compiler;    /* is_complete's */
} jk;

static void pump(void);

const jmsg *jk_current(void) { return jk.cur != NULL && !jk.query ? &jk.cur->m : NULL; }

int jk_allow_stdin(void) {
  cJSON *a;
  if (jk_current() == NULL)
    return 0;
  a = cJSON_GetObjectItemCaseSensitive(jk.cur->m.content, "allow_stdin");
  return a == NULL || cJSON_IsTrue(a);
}

static void status(const jmsg *parent, const char *state) {
  cJSON *c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "execution_state", state);
  jw_send(JW_IOPUB, parent, "status", c);
}

/* "xxx_request" -> "xxx_reply" */
static void reply(int s, const jmsg *req, cJSON *content) {
  char type[64];
  const char *t = jw_type(req);
  size_t n = strlen(t) > 8 ? strlen(t) - 8 : 0;
  snprintf(type, sizeof type, "%.*s_reply", (int)n, t);
  jw_send(s, req, type, content);
}

static const char *str(const cJSON *o, const char *k, const char *dflt) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : dflt;
}

static double num(const cJSON *o, const char *k, double dflt) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static int flag(const cJSON *o, const char *k, int dflt) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

/* Unicode code points (the protocol's cursor unit) <-> UTF-8 bytes. */
static size_t cp_to_byte(const char *s, long cp) {
  size_t i = 0;
  for (long k = 0; s[i] != '\0' && k < cp; k++)
    do
      i++;
    while ((s[i] & 0xC0) == 0x80);
  return i;
}

static long byte_to_cp(const char *s, size_t b) {
  long k = 0;
  for (size_t i = 0; i < b && s[i] != '\0'; i++)
    k += (s[i] & 0xC0) != 0x80;
  return k;
}

/* ------------------------------------------------ answered here */
static void kernel_info(int s, const jmsg *m) {
  char banner[256];
  cJSON *c = cJSON_CreateObject(), *li = cJSON_CreateObject();
  snprintf(banner, sizeof banner, "%s  %s\n%d rank%s: rank 0 runs the cells, every rank the tasks",
           MPLUA_VERSION, LUA_COPYRIGHT, jk.nranks, jk.nranks == 1 ? "" : "s");
  cJSON_AddStringToObject(c, "status", "ok");
  cJSON_AddStringToObject(c, "protocol_version", "5.3");
  cJSON_AddStringToObject(c, "implementation", "mplua");
  cJSON_AddStringToObject(c, "implementation_version", MPLUA_VERSION + 6);
  cJSON_AddStringToObject(li, "name", "lua");
  cJSON_AddStringToObject(li, "version", LUA_VERSION_MAJOR "." LUA_VERSION_MINOR "."
                          LUA_VERSION_RELEASE);
  cJSON_AddStringToObject(li, "mimetype", "text/x-lua");
  cJSON_AddStringToObject(li, "file_extension", ".lua");
  cJSON_AddStringToObject(li, "pygments_lexer", "lua");
  cJSON_AddStringToObject(li, "codemirror_mode", "lua");
  cJSON_AddItemToObject(c, "language_info", li);
  cJSON_AddStringToObject(c, "banner", banner);
  cJSON_AddItemToObject(c, "help_links", cJSON_CreateArray());
  reply(s, m, c);
}

/* Lua's rule, as the prompt's: a chunk that fails to compile at <eof> is
** unfinished. */
static void is_complete(int s, const jmsg *m) {
  const char *code = str(m->content, "code", "");
  const char *state = "complete";
  cJSON *c = cJSON_CreateObject();
  lua_State *L = jk.compiler;
  lua_pushfstring(L, "return %s;", code);
  if (luaL_loadbufferx(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=cell", "t") != LUA_OK) {
    lua_pop(L, 1);
    if (luaL_loadbufferx(L, code, strlen(code), "=cell", "t") != LUA_OK) {
      size_t n;
      const char *msg = lua_tolstring(L, -1, &n);
      state = msg != NULL && n >= 5 && strcmp(msg + n - 5, "<eof>") == 0 ? "incomplete"
                                                                          : "invalid";
    }
  }
  lua_settop(L, 0);
  cJSON_AddStringToObject(c, "status", state);
  if (strcmp(state, "incomplete") == 0)
    cJSON_AddStringToObject(c, "indent", "  ");
  reply(s, m, c);
}

static void history(int s, const jmsg *m) {
  const char *how = str(m->content, "hist_access_type", "tail");
  const char *pattern = str(m->content, "pattern", "*");
  long n = (long)num(m->content, "n", 1000), from = 0, to = jk.nhist;
  cJSON *c = cJSON_CreateObject(), *h = cJSON_CreateArray();
  if (strcmp(how, "tail") == 0)
    from = jk.nhist > n ? jk.nhist - n : 0;
  else if (strcmp(how, "range") == 0) {
    from = (long)num(m->content, "start", 1) - 1;
    to = (long)num(m->content, "stop", (double)jk.nhist + 1) - 1;
    from = from < 0 ? 0 : from;
    to = to > jk.nhist ? jk.nhist : to;
  }
  for (long i = from; i < to; i++) {
    if (strcmp(how, "search") == 0 && fnmatch(pattern, jk.hist[i], 0) != 0)
      continue;
    cJSON *e = cJSON_CreateArray();
    cJSON_AddItemToArray(e, cJSON_CreateNumber(0)); /* this session */
    cJSON_AddItemToArray(e, cJSON_CreateNumber((double)i + 1));
    cJSON_AddItemToArray(e, cJSON_CreateString(jk.hist[i]));
    cJSON_AddItemToArray(h, e);
  }
  cJSON_AddStringToObject(c, "status", "ok");
  cJSON_AddItemToObject(c, "history", h);
  reply(s, m, c);
}

static void comm_info(int s, const jmsg *m) {
  cJSON *c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "status", "ok");
  cJSON_AddItemToObject(c, "comms", cJSON_CreateObject());
  reply(s, m, c);
}

/* No comm targets: an opened comm is closed again, as ipykernel does. */
static void comm_open(const jmsg *m) {
  cJSON *c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "comm_id", str(m->content, "comm_id", ""));
  cJSON_AddItemToObject(c, "data", cJSON_CreateObject());
  jw_send(JW_IOPUB, m, "comm_close", c);
}

/* Stop the job: rank 0 gets end of input once it waits (a running cell is
** interrupted first), and the kernel ends with it. */
static void shutdown_(int s, const jmsg *m) {
  cJSON *c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "status", "ok");
  cJSON_AddBoolToObject(c, "restart", flag(m->content, "restart", 0));
  reply(s, m, c);
  jk.stopping = 1;
  if (jk.ready) {
    jk.ready = 0;
    front_answer('E', NULL, 0);
  }
  else if (jk.cur != NULL && !jk.query)
    raise(SIGINT); /* the front end's Ctrl-C: front.c interrupts the cell */
}

static void interrupt_(int s, const jmsg *m) {
  cJSON *c = cJSON_CreateObject();
  if (jk.cur != NULL && !jk.query)
    raise(SIGINT); /* as Ctrl-C at the prompt: stops the task on every rank */
  cJSON_AddStringToObject(c, "status", "ok");
  reply(s, m, c);
}

/* ------------------------------------------------ handled by rank 0 */
static void execute(pending *p) {
  const cJSON *in = p->m.content;
  const char *code = str(in, "code", "");
  int silent = flag(in, "silent", 0), store = flag(in, "store_history", !silent);
  cJSON *req = cJSON_CreateObject();
  char *text;
  if (!silent && store) {
    char **h = realloc(jk.hist, (size_t)(jk.nhist + 1) * sizeof *h);
    jk.count++;
    if (h != NULL && (h[jk.nhist] = strdup(code)) != NULL)
      jk.hist = h, jk.nhist++;
    else if (h != NULL)
      jk.hist = h;
  }
  if (!silent) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "code", code);
    cJSON_AddNumberToObject(c, "execution_count", (double)jk.count);
    jw_send(JW_IOPUB, &p->m, "execute_input", c);
  }
  jw_random_hex(jk.nonce, JUP_NONCE_LEN);
  cJSON_AddStringToObject(req, "code", code);
  cJSON_AddNumberToObject(req, "count", (double)jk.count);
  cJSON_AddBoolToObject(req, "silent", silent);
  cJSON_AddStringToObject(req, "nonce", jk.nonce);
  text = cJSON_PrintUnformatted(req);
  cJSON_Delete(req);
  jk.cur = p;
  jk.query = 0;
  jk.ready = 0;
  cJSON_Delete(jk.error);
  jk.error = NULL;
  jf_cell_begin(jk.nonce);
  front_answer('L', text != NULL ? text : "{}", text != NULL ? strlen(text) : 2);
  free(text);
}

static void query(pending *p, int inspect) {
  const char *code = str(p->m.content, "code", "");
  size_t at = cp_to_byte(code, (long)num(p->m.content, "cursor_pos", (double)strlen(code)));
  size_t n = strlen(code) + 32;
  char *q = malloc(n);
  if (q == NULL)
    return;
  if (inspect)
    n = (size_t)snprintf(q, n, "i%zu;%s", at, code);
  else
    n = (size_t)snprintf(q, n, "c%.*s", (int)at, code);
  jk.cur = p;
  jk.query = 1;
  front_send('Q', q, n);
  free(q);
}

static void finish(void) {
  pending *p = jk.cur;
  jk.cur = NULL;
  status(&p->m, "idle");
  jw_free(&p->m);
  free(p);
  pump();
}

void jk_rank0_answer(const char *a, size_t n) {
  pending *p = jk.cur;
  cJSON *c = cJSON_CreateObject();
  char *text;
  if (p == NULL || !jk.query || (text = strndup(a, n)) == NULL) {
    cJSON_Delete(c);
    return;
  }
  cJSON_AddStringToObject(c, "status", "ok");
  if (strcmp(jw_type(&p->m), "inspect_request") == 0) {
    cJSON *data = cJSON_CreateObject();
    cJSON_AddBoolToObject(c, "found", n > 0);
    if (n > 0)
      cJSON_AddStringToObject(data, "text/plain", text);
    cJSON_AddItemToObject(c, "data", data);
    cJSON_AddItemToObject(c, "metadata", cJSON_CreateObject());
  }
  else {
    const char *code = str(p->m.content, "code", "");
    long cursor = (long)num(p->m.content, "cursor_pos", (double)byte_to_cp(code, strlen(code)));
    cJSON *matches = cJSON_CreateArray();
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    long start = line != NULL ? strtol(line, NULL, 10) : 0;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL)
      cJSON_AddItemToArray(matches, cJSON_CreateString(line));
    cJSON_AddItemToObject(c, "matches", matches);
    cJSON_AddNumberToObject(c, "cursor_start", (double)byte_to_cp(code, (size_t)start));
    cJSON_AddNumberToObject(c, "cursor_end", (double)cursor);
    cJSON_AddItemToObject(c, "metadata", cJSON_CreateObject());
  }
  free(text);
  reply(JW_SHELL, &p->m, c);
  finish();
}

/* The cell has ended and its output is all here: reply. */
void jk_cell_over(void) {
  pending *p = jk.cur;
  cJSON *c = cJSON_CreateObject();
  if (p == NULL || jk.query) {
    cJSON_Delete(c);
    return;
  }
  if (jk.error != NULL) {
    cJSON_AddStringToObject(c, "status", "error");
    for (cJSON *e = jk.error->child; e != NULL; e = e->next)
      if (strcmp(e->string, "t") != 0)
        cJSON_AddItemToObject(c, e->string, cJSON_Duplicate(e, 1));
  }
  else {
    cJSON_AddStringToObject(c, "status", "ok");
    cJSON_AddItemToObject(c, "payload", cJSON_CreateArray());
    cJSON_AddItemToObject(c, "user_expressions", cJSON_CreateObject());
  }
  cJSON_AddNumberToObject(c, "execution_count", (double)jk.count);
  reply(JW_SHELL, &p->m, c);
  finish();
}

void jk_rank0_message(const char *p, size_t n) {
  cJSON *j = cJSON_ParseWithLength(p, n), *c;
  const char *t = j != NULL ? str(j, "t", "") : "";
  const jmsg *cell = jk_current();
  if (cell == NULL) {
    cJSON_Delete(j);
    return;
  }
  if (strcmp(t, "result") == 0 || strcmp(t, "display") == 0) {
    int result = t[0] == 'r';
    c = cJSON_CreateObject();
    cJSON_AddItemToObject(c, "data", cJSON_DetachItemFromObject(j, "data"));
    cJSON_AddItemToObject(c, "metadata", cJSON_CreateObject());
    if (result)
      cJSON_AddNumberToObject(c, "execution_count", (double)jk.count);
    else
      cJSON_AddItemToObject(c, "transient", cJSON_CreateObject());
    jf_flush();
    jw_send(JW_IOPUB, cell, result ? "execute_result" : "display_data", c);
  }
  else if (strcmp(t, "error") == 0) {
    jf_flush();
    cJSON_Delete(jk.error);
    jk.error = cJSON_Duplicate(j, 1);
    cJSON_DeleteItemFromObject(j, "t");
    jw_send(JW_IOPUB, cell, "error", j);
    return;
  }
  else if (strcmp(t, "done") == 0) {
    cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "flush");
    int out = cJSON_IsArray(f) ? cJSON_GetArrayItem(f, 0)->valueint : 0;
    int err = cJSON_IsArray(f) && cJSON_GetArraySize(f) > 1 ? cJSON_GetArrayItem(f, 1)->valueint
                                                            : 0;
    jf_flush();
    if (jf_cell_end(out, err))
      jk_cell_over();
  }
  cJSON_Delete(j);
}

/* ------------------------------------------------ order */
static int needs_rank0(const char *t) {
  return strcmp(t, "execute_request") == 0 || strcmp(t, "complete_request") == 0 ||
         strcmp(t, "inspect_request") == 0;
}

/* Handle what can be handled now, in order. */
static void pump(void) {
  while (jk.cur == NULL && jk.head != NULL) {
    pending *p = jk.head;
    const char *t = jw_type(&p->m);
    if (needs_rank0(t) && (!jk.ready || jk.stopping)) {
      if (!jk.stopping)
        return; /* rank 0 is starting or busy: it comes back */
    }
    jk.head = p->next;
    if (jk.head == NULL)
      jk.tail = NULL;
    status(&p->m, "busy");
    if (jk.stopping && needs_rank0(t)) {
      cJSON *c = cJSON_CreateObject();
      cJSON_AddStringToObject(c, "status", "abort");
      reply(JW_SHELL, &p->m, c);
    }
    else if (strcmp(t, "execute_request") == 0) {
      execute(p);
      return;
    }
    else if (needs_rank0(t)) {
      query(p, strcmp(t, "inspect_request") == 0);
      return;
    }
    else if (strcmp(t, "kernel_info_request") == 0)
      kernel_info(JW_SHELL, &p->m);
    else if (strcmp(t, "is_complete_request") == 0)
      is_complete(JW_SHELL, &p->m);
    else if (strcmp(t, "history_request") == 0)
      history(JW_SHELL, &p->m);
    else if (strcmp(t, "comm_info_request") == 0)
      comm_info(JW_SHELL, &p->m);
    else if (strcmp(t, "comm_open") == 0)
      comm_open(&p->m);
    else if (strcmp(t, "shutdown_request") == 0)
      shutdown_(JW_SHELL, &p->m);
    status(&p->m, "idle");
    jw_free(&p->m);
    free(p);
  }
}

void jk_rank0_ready(int ready) {
  jk.ready = ready;
  if (ready && jk.stopping) {
    jk.ready = 0;
    front_answer('E', NULL, 0);
  }
  else if (ready)
    pump();
}

/* Take every message waiting on shell and control. */
void jk_poll(void) {
  jmsg m;
  while (jw_recv(JW_CONTROL, &m) == 1) {
    const char *t = jw_type(&m);
    status(&m, "busy");
    if (strcmp(t, "interrupt_request") == 0)
      interrupt_(JW_CONTROL, &m);
    else if (strcmp(t, "shutdown_request") == 0)
      shutdown_(JW_CONTROL, &m);
    else if (strcmp(t, "kernel_info_request") == 0)
      kernel_info(JW_CONTROL, &m);
    status(&m, "idle");
    jw_free(&m);
  }
  while (jw_recv(JW_SHELL, &m) == 1) {
    pending *p = calloc(1, sizeof *p);
    if (p == NULL) {
      jw_free(&m);
      continue;
    }
    p->m = m;
    if (jk.tail != NULL)
      jk.tail->next = p;
    else
      jk.head = p;
    jk.tail = p;
  }
  pump();
}

void jk_job_ended(void) {
  if (jk.cur != NULL && !jk.query) {
    cJSON *e = cJSON_CreateObject(), *tb = cJSON_CreateArray();
    cJSON_AddStringToObject(e, "t", "error");
    cJSON_AddStringToObject(e, "ename", "JobEnded");
    cJSON_AddStringToObject(e, "evalue", "the job has ended");
    cJSON_AddItemToArray(tb, cJSON_CreateString("the job has ended (the kernel ends with it)"));
    cJSON_AddItemToObject(e, "traceback", tb);
    char *text = cJSON_PrintUnformatted(e);
    cJSON_Delete(e);
    if (text != NULL)
      jk_rank0_message(text, strlen(text));
    free(text);
    jk_cell_over();
  }
  else if (jk.cur != NULL)
    jk_rank0_answer("", 0);
  status(NULL, "dead");
}

int mplua_jupyter(int nranks, int argc, char **argv, const char *connection_file) {
  char err[512];
  int status_;
  if (jw_config(connection_file, err, sizeof err) != 0) {
    fprintf(stderr, "mplua: --jupyter: %s\n", err);
    return 1;
  }
  jk.nranks = nranks;
  jk.compiler = luaL_newstate();
  if (jk.compiler == NULL) {
    fprintf(stderr, "mplua: --jupyter: not enough memory\n");
    return 1;
  }
  signal(SIGPIPE, SIG_IGN);
  status_ = front_run(&jupyter_face, nranks, argc, argv);
  lua_close(jk.compiler);
  return jf_failed() ? 1 : status_;
}
