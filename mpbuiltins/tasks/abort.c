/* SPDX-License-Identifier: MIT */
/*
** The abort/restart protocol (DESIGN.md section 5).
**
** A rank that raises an error in a task sends FAULT to rank 0; rank 0 (on a
** FAULT, its own error, or Ctrl-C) sends ABORT to every worker, down the
** fan-out tree. Waiting ranks see ABORT in the one wait, computing ranks in
** the poll hook; all unwind to their task runner and meet in mpb_resync
** (resync.c), which drains what the task left and gathers the whereabouts
** of the report made here. Messages also carry their task number, so nothing
** from before the abort is ever delivered after it.
*/
#include <stdlib.h>
#include <string.h>

#include "chan/start.h"
#include "tasks/tasks.h"
#include "wire/wire.h"

void mpb_fault_record_value(mpb_state *st, int rank, const char *msg, size_t len,
                            const char *value, size_t vlen, int64_t job, int echo) {
  mpb_fault *f = &mpb_tasks_of(st)->first;
  if (f->rank != -1 && !(f->echo && !echo)) return;
  free(f->msg);
  free(f->value);
  f->msg = f->value = NULL;
  f->vlen = 0;
  f->echo = echo;
  mpb_tasks_of(st)->first.rank = rank;
  mpb_tasks_of(st)->first.job = job;
  mpb_tasks_of(st)->first.msg = malloc(len + 1);
  if (mpb_tasks_of(st)->first.msg) {
    memcpy(mpb_tasks_of(st)->first.msg, msg, len);
    mpb_tasks_of(st)->first.msg[len] = '\0';
  }
  if (vlen && (mpb_tasks_of(st)->first.value = malloc(vlen))) {
    memcpy(mpb_tasks_of(st)->first.value, value, vlen);
    mpb_tasks_of(st)->first.vlen = vlen;
  }
}

void mpb_fault_record(mpb_state *st, int rank, const char *msg, size_t len) {
  mpb_fault_record_value(st, rank, msg, len, NULL, 0, 0, 0);
}

/* ABORT goes down a tree of fan-out fan (carried in its value): each rank
** passes it on to its children when it first sees it, so the ranks it wakes
** do not race one sender of P - 1 messages for the cores. */
static void send_abort(mpb_state *st, int64_t task, int64_t fan) {
  int64_t first = (int64_t)st->rank * fan + 1;
  for (int64_t r = first; r < st->size && r < first + fan; r++)
    mpb_ctl_send(st, (int)r, MPB_CTL_ABORT, task, 0, fan, NULL, 0);
}

void mpb_abort_begin(mpb_state *st) {
  st->aborting = 1;
  if (st->use_mpi) send_abort(st, st->task, st->nfan > 0 ? st->nfan : 1);
}

/* ---------------------------------------------------------- abort error */
/* The error a stopped task's ranks raise (the hook raises it: chan/hook.h,
** MPB_MPB_ABORT_KEY). */
static int abort_tostring(lua_State *L) {
  lua_getfield(L, 1, "message");
  return 1;
}

/* A unique value that user code cannot forge. */
static void abort_error_init(lua_State *L) {
  lua_newtable(L);
  lua_pushliteral(L, "mp: task stopped (another rank faulted)");
  lua_setfield(L, -2, "message");
  luaL_newmetatable(L, "mp.AbortError");
  lua_pushcfunction(L, abort_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, MPB_ABORT_KEY);
}

int mpb_is_abort(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_ABORT_KEY);
  int r = lua_rawequal(L, idx, -1);
  lua_pop(L, 1);
  return r;
}

/* ------------------------------------------------------------ reports */
/* The error a failed task raises on rank 0 (mp.TaskError): its fields say
** who faulted, what, where every rank was; tostring gives the text, and
** string methods work on that text (err:find(...) as on a message). */
static int te_tostring(lua_State *L) {
  lua_getfield(L, 1, "text");
  return 1;
}

static int te_index(lua_State *L) {
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  lua_getglobal(L, "string");
  if (lua_type(L, -1) != LUA_TTABLE || lua_getfield(L, -1, lua_tostring(L, 2)) != LUA_TFUNCTION)
    return 0;
  return 1; /* called as err:find(...): string.find(err, ...), err's __tostring below */
}

static int te_string_arg(lua_State *L) {
  luaL_tolstring(L, 1, NULL);
  return 1;
}

static int te_concat(lua_State *L) {
  luaL_tolstring(L, 1, NULL);
  luaL_tolstring(L, 2, NULL);
  lua_concat(L, 2);
  return 1;
}

static int te_len(lua_State *L) {
  lua_getfield(L, 1, "text");
  lua_pushinteger(L, (lua_Integer)luaL_len(L, -1));
  return 1;
}

static void push_meta(lua_State *L) {
  if (luaL_newmetatable(L, "mp.TaskError")) {
    static const luaL_Reg mm[] = {{"__tostring", te_tostring}, {"__index", te_index},
                                  {"__concat", te_concat}, {"__len", te_len}, {NULL, NULL}};
    luaL_setfuncs(L, mm, 0);
  }
}

/* string.find(err, ...) gets the table: string functions take their first
** argument through tostring only for numbers, so wrap each in a closure
** that converts the error object first. */
static int te_method(lua_State *L) {
  lua_pushcfunction(L, te_string_arg);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  lua_replace(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

static int te_index_wrapped(lua_State *L) {
  if (!te_index(L)) return 0;
  lua_pushcclosure(L, te_method, 1);
  return 1;
}

void mpb_fault_report(lua_State *L, mpb_state *st, const char *fname) {
  int others = st->size - mpb_tasks_of(st)->nself, r = mpb_tasks_of(st)->first.rank;
  const char *msg = mpb_tasks_of(st)->first.msg ? mpb_tasks_of(st)->first.msg : "?";
  char where[4096];
  /* the faulting rank is left out, unless it did more after its fault (a
  ** __close handler that waited: task.c says "faulted, then ...") */
  int also = r >= 0 && mpb_tasks_of(st)->wheres && strncmp(mpb_tasks_of(st)->wheres + MPB_WHERE_LEN * (size_t)r, "faulted, then", 13) == 0;
  mpb_where_text(st, r >= 0 && !also ? r : -1, where, sizeof where);
  lua_createtable(L, 0, 8);
  int t = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  if (r == -1) luaL_addstring(&b, lua_pushfstring(L, "mp.%s: task aborted", fname)), lua_pop(L, 1);
  else if (r == MPB_DEADLOCK || r == MPB_INTERRUPTED) {
    lua_pushfstring(L, "mp.%s: %s", fname, msg);
    luaL_addvalue(&b);
  } else {
    lua_pushfstring(L, "mp.%s: rank %d/%d faulted: %s\n(%d rank%s faulted on %s own, %d stopped)",
                    fname, r, st->size, msg, mpb_tasks_of(st)->nself, mpb_tasks_of(st)->nself == 1 ? "" : "s",
                    mpb_tasks_of(st)->nself == 1 ? "its" : "their", others < 0 ? 0 : others);
    luaL_addvalue(&b);
  }
  if (where[0] && r != MPB_DEADLOCK) { /* a deadlock's message says it already */
    luaL_addstring(&b, r >= 0 && !also ? "\nwhere the others were:\n  "
                                       : "\nwhere the ranks were:\n  ");
    luaL_addstring(&b, where);
  }
  luaL_pushresult(&b);
  lua_setfield(L, t, "text");
  lua_pushinteger(L, r >= 0 ? r : -1);
  lua_setfield(L, t, "rank");
  const char *tb = strstr(msg, "\nstack traceback:");
  lua_pushlstring(L, msg, tb ? (size_t)(tb - msg) : strlen(msg));
  lua_setfield(L, t, "message");
  lua_pushstring(L, tb ? tb + 1 : "");
  lua_setfield(L, t, "traceback");
  lua_pushboolean(L, r == MPB_DEADLOCK);
  lua_setfield(L, t, "deadlock");
  lua_pushboolean(L, r == MPB_INTERRUPTED);
  lua_setfield(L, t, "interrupted");
  if (mpb_tasks_of(st)->first.job) {
    lua_pushinteger(L, mpb_tasks_of(st)->first.job);
    lua_setfield(L, t, "job");
  }
  if (mpb_tasks_of(st)->first.vlen) { /* the error value itself, when it could travel */
    char err[MPB_ERRLEN];
    if (mpb_wire_decode(L, mpb_tasks_of(st)->first.value, mpb_tasks_of(st)->first.vlen, 0, err, sizeof err) == 1)
      lua_setfield(L, t, "value");
  }
  lua_createtable(L, st->size, 1);
  for (int p = 0; mpb_tasks_of(st)->wheres && p < st->size; p++) {
    lua_pushstring(L, mpb_tasks_of(st)->wheres + MPB_WHERE_LEN * (size_t)p);
    lua_rawseti(L, -2, p);
  }
  lua_setfield(L, t, "where");
  push_meta(L);
  lua_pushcfunction(L, te_index_wrapped);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, t);
}

/* mp.abort([msg]): stop the current task on purpose (an error on this rank). */
static int mp_abort(lua_State *L) {
  mpb_state *st = mpb_get(L);
  const char *msg = luaL_optstring(L, 1, "aborted");
  return luaL_error(L, "mp.abort: [rank %d/%d] %s", st->rank, st->size, msg);
}

/* os.exit on a worker inside a job would leave the others waiting forever:
** end the whole job instead, with a report. At the worker's end (a finalizer
** run after rank 0's exit notice came, or once the runtime has stopped) the
** job is over: this process ends. A worker running its own program (a stock
** lua without mp.serve(): every rank runs the whole program) ends it as its
** program's end would (interp/module.c): it waits for rank 0's exit notice,
** passing it on to the ranks below it in the tree, failing any task. */
static int worker_exit(lua_State *L) {
  mpb_state *st = mpb_get(L);
  int status = lua_isboolean(L, 1) ? (lua_toboolean(L, 1) ? 0 : 1)
                                   : (int)luaL_optinteger(L, 1, 0);
  fflush(stdout);
  if (!st->in_task && (st->exit_seen || !st->L)) mpb_end_process(L, status, 0);
  if (!st->in_task && !st->in_loop) {
    st->closing = 1;
    mpb_worker_loop(L, st);
    mpb_end_process(L, status, 0);
  }
  fprintf(stderr, "mplua: rank %d/%d called os.exit(%d) %s: ending the job\n", st->rank,
          st->size, status, st->in_task ? "in a task" : "while the job runs");
  mpb_abort_job(st->base, status ? status : 1);
  return 0;
}

/* ------------------------------------------------------ control handlers */
/* FAULT: u32 text length, the text (message and traceback), the error
** value wire-encoded (when it could be); the header's value: a map job; its
** arg: an echo (chan/state.h: MPB_ERR_ECHO). */
static void on_fault(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  if (h->task == st->task && st->rank == 0) {
    const char *body = m->buf + sizeof *h;
    size_t len = m->len - sizeof *h;
    uint32_t tl = 0;
    if (len >= 4) memcpy(&tl, body, 4);
    if (len < 4 || tl > len - 4) tl = 0;
    const char *text = len >= 4 ? body + 4 : "?";
    size_t vlen = len >= 4 ? len - 4 - tl : 0;
    mpb_tasks_of(st)->nfault_msgs++;
    mpb_fault_record_value(st, m->src, tl ? text : "?", tl ? tl : 1, text + tl, vlen, h->value,
                           h->arg != 0);
    if (!st->aborting) mpb_abort_begin(st);
  }
  mpb_msg_free(m);
}

static void on_abort(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  if (h->task > st->abort_task) {
    int64_t fan = h->value > 0 && h->value <= st->size ? h->value : st->size;
    send_abort(st, h->task, fan);
    mpb_tasks_of(st)->abort_fan = (int)fan; /* the resync's tree */
    st->abort_task = h->task;
    if (h->task >= st->task) {
      st->task = h->task;
      st->aborting = 1;
    }
  }
  mpb_msg_free(m);
}

/* Rank 0 interrupted inside a task: the task stops everywhere, whatever
** rank 0's code catches (the hook keeps raising until the task runner has
** it), and is reported as interrupted, not as a fault of rank 0. */
static void on_interrupt(mpb_state *st) {
  mpb_fault_record(st, MPB_INTERRUPTED, "interrupted!", 12);
  st->faulted = 1;
  if (!st->aborting) mpb_abort_begin(st);
}

void mpb_abort_handlers(mpb_state *st) {
  mpb_ctl_on(st, MPB_CTL_FAULT, on_fault);
  mpb_ctl_on(st, MPB_CTL_ABORT, on_abort);
  mpb_resync_handlers(st);
  st->on_interrupt = on_interrupt;
}

void mpb_open_abort(lua_State *L) {
  abort_error_init(L);
  mpb_abort_handlers(mpb_get(L));
  lua_pushcfunction(L, mp_abort);
  lua_setfield(L, -2, "abort");
  push_meta(L); /* getmetatable(err) == mp.TaskError tells a task's failure */
  lua_setfield(L, -2, "TaskError");
  mpb_state *st = mpb_get(L);
  if (st->rank != 0 && st->use_mpi) {
    lua_getglobal(L, "os");
    if (lua_istable(L, -1)) {
      lua_pushcfunction(L, worker_exit);
      lua_setfield(L, -2, "exit");
    }
    lua_pop(L, 1);
  }
}
