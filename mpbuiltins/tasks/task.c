/* SPDX-License-Identifier: MIT */
/*
** Parallel tasks: rank 0 starts one on every rank through the fan-out tree
** (rank r's children are r*F+1 .. r*F+F), each rank runs its part, and the
** task ends when every subtree reports DONE back up the same tree. Workers
** idle in mpb_worker_loop between tasks, inside the one wait (napping, not
** spinning). A task is an operation (call a function, run a chunk, require
** a module, change directory, a connected prompt line) with wire-encoded
** arguments.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/coll.h"
#include "tasks/tasks.h"
#include "wire/wire.h"

void mpb_tree_children(int size, int fan, int r, int *first, int *last) {
  int64_t f = (int64_t)r * fan + 1, l = f + fan - 1;
  if (l > size - 1) l = size - 1;
  *first = (int)(f < size ? f : size);
  *last = (int)l;
}

void mpb_children(const mpb_state *st, int r, int *first, int *last) {
  mpb_tree_children(st->size, st->nfan, r, first, last);
}

static int nchildren(const mpb_state *st) {
  int f, l;
  mpb_children(st, st->rank, &f, &l);
  return l >= f ? l - f + 1 : 0;
}

static const char FAULT_VALUE[] = "mp.fault.value";
static const char FAULT_EARLY[] = "mp.fault.early"; /* the message handler reported it */

/* The error of a failed task body (its text on top, the value kept by
** task_msgh): the text, the value wire-encoded when it is not a string
** and can travel (else none), and the map job it names. Pushes nothing. */
typedef struct { const char *text; size_t tlen; char *value; size_t vlen; int64_t job; } fault;

static fault fault_of(lua_State *L) {
  fault f = {NULL, 0, NULL, 0, 0};
  f.text = luaL_tolstring(L, -1, &f.tlen); /* pushed: left for the caller to drop */
  lua_getfield(L, LUA_REGISTRYINDEX, FAULT_VALUE);
  int v = lua_gettop(L);
  if (lua_type(L, v) == LUA_TTABLE) {
    lua_getfield(L, v, "job");
    if (lua_isinteger(L, -1)) f.job = lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  if (!lua_isnil(L, v) && lua_type(L, v) != LUA_TSTRING) {
    char err[MPB_ERRLEN];
    struct mpb_wbuf *b = mpb_wbuf_push(L);
    if (mpb_wire_encode(L, v, 1, b, lua_gettop(L), err, sizeof err) == 0) {
      f.value = malloc(b->len + b->extlen + 1);
      if (f.value) {
        mpb_wbuf_flatten(b, f.value);
        f.vlen = b->len + b->extlen;
      }
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, FAULT_VALUE);
  return f;
}

/* Report this rank's fault (the error's text on top, left there): rank 0
** records it and starts the abort, a worker sends it to rank 0 (FAULT: u32
** text length, text, the value; arg: an echo). Once per task: the first
** error wins. */
static void fault_report(lua_State *L, mpb_state *st, int echo) {
  fault f = fault_of(L);
  if (st->rank == 0) {
    mpb_fault_record_value(st, 0, f.text, f.tlen, f.value, f.vlen, f.job, echo);
  } else {
    uint32_t tl = (uint32_t)(f.tlen > UINT32_MAX ? UINT32_MAX : f.tlen);
    char *body = malloc(4 + tl + f.vlen);
    if (body) {
      memcpy(body, &tl, 4);
      memcpy(body + 4, f.text, tl);
      if (f.vlen) memcpy(body + 4 + tl, f.value, f.vlen);
      mpb_ctl_send(st, 0, MPB_CTL_FAULT, st->task, echo, f.job, body, 4 + tl + f.vlen);
    } else {
      mpb_ctl_send(st, 0, MPB_CTL_FAULT, st->task, echo, f.job, &tl, 0);
    }
    free(body);
  }
  lua_pop(L, 1); /* fault_of's string */
  free(f.value);
  st->faulted = 1;
  snprintf(st->where, sizeof st->where, echo ? "faulted: an echo of another rank's failure" : "faulted");
  if (st->rank == 0 && !st->aborting) mpb_abort_begin(st);
}

/* The message handler of a task: mpb_msgh's text, without the frames of the
** runtime that ran the task ("[C]: in ?" lines), the error value kept
** aside for the report (FAULT_VALUE), and the fault reported at once: an
** error here ends the task on this rank, and what runs before the task
** runner has it back (the __close handlers of the unwinding) may block or
** fail in its turn; the first error is what the report says. */
static int task_msgh(lua_State *L) {
  if (mpb_is_abort(L, 1)) return 1;
  mpb_state *st = mpb_get(L);
  /* a rank's own failure of a collective step is its report even when the
  ** abort that another member's echo of it started came first */
  int kind = mpb_error_kind(L, 1), echo = kind == MPB_ERR_ECHO;
  int first = !st->faulted && (!st->aborting || kind == MPB_ERR_OWN);
  if (first) {
    lua_pushvalue(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, FAULT_VALUE);
  }
  lua_settop(L, 1);
  mpb_msgh(L);
  if (lua_type(L, -1) == LUA_TSTRING) /* unnamed C frames are the runtime's */
    luaL_gsub(L, lua_tostring(L, -1), "\n\t[C]: in ?", "");
  if (first) {
    fault_report(L, st, echo);
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, FAULT_EARLY);
  }
  return 1;
}

/* After the task body failed: report the error unless its message handler
** did (a memory error has none), and say what its __close handlers were
** doing when the abort stopped them, after the fault. */
static void after_fault(lua_State *L, mpb_state *st) {
  int early = lua_getfield(L, LUA_REGISTRYINDEX, FAULT_EARLY) != LUA_TNIL;
  lua_pop(L, 1);
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, FAULT_EARLY);
  if (!st->faulted) {
    if (mpb_is_abort(L, -1) || st->aborting) return;
    fault_report(L, st, 0);
    return;
  }
  /* a wait the abort stopped after the fault says where it was (wait.c) */
  if (early && strncmp(st->where, "in mp.", 6) == 0) {
    char was[sizeof st->where];
    snprintf(was, sizeof was, "%s", st->where);
    snprintf(st->where, sizeof st->where, "faulted, then a __close handler waited %.150s", was);
  }
}

/* ---------------------------------------------------------- operations */
void mpb_task_register(mpb_state *st, int op, lua_CFunction body) {
  if (op > 0 && op < MPB_NTASK) mpb_tasks_of(st)->ops[op] = body;
}

static int tasks_gc(lua_State *L) {
  mpb_tasks *t = lua_touserdata(L, 1);
  free(t->first.msg);
  free(t->first.value);
  free(t->wheres);
  t->first.msg = t->first.value = t->wheres = NULL;
  mpb_resync_close(t);
  return 0;
}

void mpb_tasks_open(lua_State *L, mpb_state *st) {
  mpb_tasks *t = lua_newuserdatauv(L, sizeof *t, 0);
  memset(t, 0, sizeof *t);
  t->first.rank = -1;
  lua_newtable(L);
  lua_pushcfunction(L, tasks_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, "mp.tasks");
  st->slot[MPB_SLOT_TASKS] = t;
}

/* op, values... -> results. Runs on every rank, rank 0 with the caller's
** original values, workers with decoded copies. */
static int op_run(lua_State *L) {
  int op = (int)lua_tointeger(L, 1);
  lua_remove(L, 1);
  int n = lua_gettop(L);
  switch (op) {
    case MPB_TASK_CALL:
      luaL_checktype(L, 1, LUA_TFUNCTION);
      lua_call(L, n - 1, LUA_MULTRET);
      return lua_gettop(L);
    case MPB_TASK_CHUNK: { /* text, chunkname, args... */
      size_t len;
      const char *text = luaL_checklstring(L, 1, &len);
      const char *name = luaL_checkstring(L, 2);
      if (luaL_loadbufferx(L, text, len, name, "t") != LUA_OK) return lua_error(L);
      lua_replace(L, 1);
      lua_remove(L, 2);
      lua_call(L, n - 2, LUA_MULTRET);
      return lua_gettop(L);
    }
    case MPB_TASK_REQUIRE: { /* modname, text|nil, path|nil */
      const char *mod = luaL_checkstring(L, 1);
      if (lua_isnil(L, 2)) {
        lua_getglobal(L, "require");
        lua_pushvalue(L, 1);
        lua_call(L, 1, 1);
        return 1;
      }
      size_t len;
      const char *text = luaL_checklstring(L, 2, &len);
      lua_pushfstring(L, "@%s", luaL_checkstring(L, 3));
      if (luaL_loadbufferx(L, text, len, lua_tostring(L, -1), "t") != LUA_OK)
        return lua_error(L);
      lua_pushvalue(L, 1);
      lua_pushvalue(L, 3);
      lua_call(L, 2, 1);
      luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
      if (!lua_isnil(L, -2)) {
        lua_pushvalue(L, -2);
        lua_setfield(L, -2, mod);
      }
      if (lua_getfield(L, -1, mod) == LUA_TNIL) {
        lua_pushboolean(L, 1);
        lua_copy(L, -1, -2);
        lua_setfield(L, -3, mod);
      }
      return 1;
    }
    case MPB_TASK_CD: {
      const char *dir = luaL_checkstring(L, 1);
      if (chdir(dir) != 0) {
        mpb_state *st = mpb_get(L);
        return luaL_error(L, "mp.cd: " MPB_RANKFMT " cannot change to '%s': %s", st->rank,
                          st->size, dir, strerror(errno));
      }
      return 0;
    }
  }
  lua_CFunction body = op > 0 && op < MPB_NTASK ? mpb_tasks_of(mpb_get(L))->ops[op] : NULL;
  if (body) return body(L);
  return luaL_error(L, "mp: unknown task operation %d", op);
}

/* The operation, then the collectives' root checks still due: a task ends
** only when its calls agreed (coll.c); then what upper layers end with it. */
static int op_body(lua_State *L) {
  int n = op_run(L);
  mpb_coll_settle(L);
  mpb_task_ends(L, mpb_get(L), 0);
  return n;
}

/* The upper layers' ends: a list in userdata anchored in the registry. */
struct mpb_task_end { mpb_task_end_fn fn; struct mpb_task_end *next; };

void mpb_task_on_end(lua_State *L, mpb_state *st, mpb_task_end_fn end) {
  struct mpb_task_end *e = lua_newuserdatauv(L, sizeof *e, 0), **p = &mpb_tasks_of(st)->ends;
  luaL_ref(L, LUA_REGISTRYINDEX);
  e->fn = end;
  e->next = NULL;
  while (*p) p = &(*p)->next;
  *p = e;
}

void mpb_task_ends(lua_State *L, mpb_state *st, int aborted) {
  for (struct mpb_task_end *e = mpb_tasks_of(st)->ends; e; e = e->next) e->fn(L, st, aborted);
}

/* ------------------------------------------------------------- helpers */
static void task_reset(mpb_state *st, int64_t task) {
  st->task = task;
  mpb_tasks_of(st)->begun = task;
  st->wbusy = 0; /* an error between encoding and sending left it claimed */
  st->rbusy = 0;
  mpb_tasks_of(st)->done_count = 0;
  mpb_tasks_of(st)->unrecv = 0;
  st->user_sent = st->user_taken = 0;
  st->faulted = 0;
  mpb_tasks_of(st)->nfault_msgs = 0;
  mpb_tasks_of(st)->first.rank = -1;
  free(mpb_tasks_of(st)->first.msg);
  free(mpb_tasks_of(st)->first.value);
  mpb_tasks_of(st)->first.msg = mpb_tasks_of(st)->first.value = NULL;
  mpb_tasks_of(st)->first.vlen = 0;
  mpb_tasks_of(st)->first.job = 0;
  mpb_tasks_of(st)->first.echo = 0;
  mpb_inbox_clear(st, 0);
  mpb_where_reset(st);
}

static void send_children(mpb_state *st, int kind, int32_t arg, int64_t value,
                          const void *body, size_t len) {
  int f, l;
  mpb_children(st, st->rank, &f, &l);
  for (int r = f; r <= l; r++) mpb_ctl_send(st, r, kind, st->task, arg, value, body, len);
}

static int fanin_ready(mpb_state *st, void *ud) {
  (void)ud;
  return mpb_tasks_of(st)->done_count >= nchildren(st) || st->aborting || (st->rank == 0 && mpb_sigint);
}

/* ----------------------------------------------------------- the leader */
int mpb_task_run(lua_State *L, mpb_state *st, int op, int n, const char *fname) {
  if (st->rank != 0)
    return luaL_error(L, "mp.%s: " MPB_RANKFMT " only rank 0 starts parallel tasks", fname,
                      st->rank, st->size);
  if (st->in_task)
    return luaL_error(L, "mp.%s: " MPB_RANKFMT " cannot start a task inside a task", fname,
                      st->rank, st->size);
  /* a finalizer at the program's end: workers gone, or the runtime itself
  ** stopped (an object older than it, in a stock lua5.4) */
  if ((st->exit_seen && st->size > 1) || !st->L)
    return luaL_error(L, "mp.%s: " MPB_RANKFMT " the program has ended: the other ranks "
                      "have left and run no more tasks", fname, st->rank, st->size);
  int base = lua_gettop(L) - n;
  mpb_wire_names_check(L); /* modules loaded since the last task are sent by name */
  struct mpb_wbuf *b = mpb_encode_msg(L, base + 1, n, fname, 0, 0);
  char *body = b->data;
  size_t len = b->len + b->extlen;
  if (b->nseg) { /* the control channel sends contiguous bytes */
    body = lua_newuserdatauv(L, len ? len : 1, 0);
    mpb_wbuf_flatten(b, body);
  }
  task_reset(st, st->task + 1);
  MPB_TRACE_SPAN(L, st, MPB_TR_TASK, op, -1, (uint32_t)st->task, mpb_trace_name(st, fname));
  send_children(st, MPB_CTL_CMD, op, st->nfan, body, len);
  mpb_encode_done(st, b);
  lua_settop(L, base + n);

  lua_pushcfunction(L, task_msgh);
  lua_pushcfunction(L, op_body);
  lua_pushinteger(L, op);
  lua_rotate(L, base + 1, 3);
  st->in_task = 1;
  st->phase = MPB_PHASE_RUN;
  mpb_hook_arm(st, 1);
  int status = lua_pcall(L, n + 1, LUA_MULTRET, base + 1);
  st->in_task = 0;
  if (status != LUA_OK) {
    mpb_poll(st); /* a FAULT that arrived while this rank was busy came first */
    after_fault(L, st);
    if (!st->aborting) mpb_abort_begin(st);
  } else if (!st->aborting) {
    st->phase = MPB_PHASE_FINISHED;
    mpb_wait(L, st, fanin_ready, NULL, MPB_WAIT_NOABORT | MPB_WAIT_CTL);
    if (mpb_sigint && !st->aborting) { /* Ctrl-C while the others finish */
      mpb_interrupt_clear();
      st->on_interrupt(st);
    }
  }
  mpb_hook_arm(st, 0);
  if (st->aborting) {
    lua_settop(L, base);
    mpb_resync(L, st);
    mpb_interrupt_clear(); /* one still pending came as the task ended: it was the task's */
    st->phase = MPB_PHASE_IDLE;
    mpb_fault_report(L, st, fname);
    MPB_TRACE_END();
    if (st->host.fault) st->host.fault(L, st->host.ud); /* e.g. batch mode ends the job */
    return lua_error(L);
  }
  st->phase = MPB_PHASE_IDLE;
  int64_t unrecv = mpb_tasks_of(st)->unrecv + st->user_sent - st->user_taken;
  st->dropped_job += unrecv > 0 ? unrecv : 0;
  if (unrecv > 0)
    mpb_warn(L, "mp.%s: warning: %lld message%s sent during the task %s never received (dropped)",
             fname, (long long)unrecv, unrecv == 1 ? "" : "s", unrecv == 1 ? "was" : "were");
  lua_remove(L, base + 1); /* the message handler */
  return lua_gettop(L) - base;
}

/* Once: os.exit in a finalizer run by the program's end would send a second
** notice, left unreceived by workers already finalizing MPI. */
void mpb_task_exit(mpb_state *st, int status) {
  if (st->exit_seen) return;
  mpb_trace_exit(st); /* MPLUA_TRACE gathers the job's trace in a last task */
  st->exit_seen = 1;
  if (st->use_mpi) send_children(st, MPB_CTL_EXIT, status, 0, NULL, 0);
}

void mpb_task_release(mpb_state *st, int status) {
  mpb_trace_exit(st);
  if (st->use_mpi) send_children(st, MPB_CTL_EXIT, status, 0, NULL, 0);
}

/* ------------------------------------------------------------- workers */
/* The protected part of a worker's task: the command's message (owned by
** the mp.Msg at 1) decoded, then run. */
static int task_main(lua_State *L) {
  mpb_msg **h = lua_touserdata(L, 1);
  lua_Integer op = lua_tointeger(L, 2);
  mpb_msg *m = *h;
  *h = NULL; /* mpb_push_msg owns it now */
  lua_settop(L, 0);
  lua_pushcfunction(L, op_body);
  lua_pushinteger(L, op);
  int n = mpb_push_msg(L, mpb_get(L), m, "exec");
  lua_call(L, n + 1, 0);
  return 0;
}

/* A worker whose program has ended (stock lua without mp.serve(), waiting
** for rank 0's exit notice in lua_close) runs no more tasks: each fails,
** so rank 0 hears why instead of waiting. */
static int task_closed(lua_State *L) {
  mpb_state *st = mpb_get(L);
  return luaL_error(L, "mp.exec: rank %d has ended its program without mp.serve(): it "
                    "runs no tasks", st->rank);
}

static void worker_task(lua_State *L, mpb_state *st, mpb_msg *m) {
  mpb_chdr h;
  memcpy(&h, m->buf, sizeof h);
  st->nfan = (int)h.value;
  task_reset(st, h.task);
  MPB_TRACE_SPAN(NULL, st, MPB_TR_TASK, h.arg, -1, (uint32_t)h.task, 0);
  send_children(st, MPB_CTL_CMD, h.arg, h.value, m->buf + sizeof h, m->len - sizeof h);
  /* the body becomes a message the decoder reads: a user header before it */
  mpb_msg *u = mpb_msg_new(&st->msgmem, m->len - sizeof h + sizeof(mpb_uhdr));
  if (!u) mpb_fatal(st, "out of memory starting a task");
  memset(u->buf, 0, sizeof(mpb_uhdr));
  memcpy(u->buf + sizeof(mpb_uhdr), m->buf + sizeof h, m->len - sizeof h);
  u->src = m->src;
  mpb_msg_free(m);
  int top = lua_gettop(L);
  lua_pushcfunction(L, task_msgh);
  if (st->closing) { /* no userdata: lua_close would never finalize it */
    mpb_msg_free(u);
    lua_pushcfunction(L, task_closed);
    lua_pushnil(L);
    lua_pushnil(L);
  } else {
    mpb_wire_names_check(L);
    lua_pushcfunction(L, task_main);
    mpb_msg_hold(L, u);
    lua_pushinteger(L, h.arg);
  }
  st->in_task = 1;
  st->phase = MPB_PHASE_RUN;
  mpb_hook_arm(st, 1);
  int status = lua_pcall(L, 2, 0, top + 1);
  st->in_task = 0;
  fflush(stdout); /* what the task wrote is out before it is over (an unfinished line too) */
  if (status != LUA_OK) after_fault(L, st);
  lua_settop(L, top);
  if (status == LUA_OK && !st->aborting) {
    st->phase = MPB_PHASE_FINISHED;
    mpb_wait(L, st, fanin_ready, NULL, MPB_WAIT_NOABORT | MPB_WAIT_CTL);
    if (!st->aborting) {
      int64_t unrecv = mpb_tasks_of(st)->unrecv + st->user_sent - st->user_taken;
      mpb_ctl_send(st, mpb_parent(st, st->rank), MPB_CTL_DONE, st->task, 0, unrecv, NULL, 0);
    }
  }
  mpb_hook_arm(st, 0);
  if (st->aborting || status != LUA_OK) mpb_resync(L, st);
  st->phase = MPB_PHASE_IDLE;
}

static int idle_ready(mpb_state *st, void *ud) {
  (void)ud;
  return st->cmdq.head != NULL || st->aborting;
}

int mpb_worker_loop(lua_State *L, mpb_state *st) {
  st->in_loop = 1;
  for (;;) {
    mpb_wait(L, st, idle_ready, NULL, MPB_WAIT_NOABORT | MPB_WAIT_CTL);
    if (st->aborting) { /* a late ABORT for a task this rank had finished */
      mpb_resync(L, st);
      continue;
    }
    mpb_msg *m = mpb_queue_pop(&st->cmdq);
    mpb_chdr h;
    memcpy(&h, m->buf, sizeof h);
    if (h.kind == MPB_CTL_EXIT) {
      st->in_loop = 0;
      st->exit_seen = 1;
      mpb_msg_free(m);
      send_children(st, MPB_CTL_EXIT, h.arg, 0, NULL, 0);
      return h.arg;
    }
    if (h.kind == MPB_CTL_CMD && h.task > st->task) worker_task(L, st, m);
    else mpb_msg_free(m); /* a command of a task aborted before it got here */
  }
}

/* ------------------------------------------------------ control handlers */
static void on_done(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  if (h->task == st->task) {
    mpb_tasks_of(st)->done_count++;
    mpb_tasks_of(st)->unrecv += h->value;
  }
  mpb_msg_free(m);
}

void mpb_task_handlers(mpb_state *st) {
  mpb_ctl_on(st, MPB_CTL_DONE, on_done); /* CMD, EXIT, OUT: kept in cmdq */
}
