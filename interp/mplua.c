/* SPDX-License-Identifier: MIT */
/*
** The embedding API (mplua.h): what main.c, or any C host, uses to run an
** mplua rank. Everything below it (mp, ad) knows nothing of prompts.
*/
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lauxlib.h"
#include "lualib.h"
#include "embed.h"
#include "mp.h"
#include "tasks/tasks.h"
#include "mplua.h"

/* What the host chose for a state made by mplua_open* (a userdata in its
** registry): none of it exists in a stock lua5.4 that loaded mp.so. */
typedef struct policy {
  unsigned out;              /* mplua_config.out */
  int interactive;           /* mplua_set_interactive */
  mplua_progressfn progress; /* mplua_set_progress */
  void *progress_ud;
  int served;                /* host_note_served */
  /* The program's name in messages: argv[0] as given, as lua.c (Lua's own
  ** test suite checks it); none at the prompt, as in lua. */
  char progname[];
} policy;

static const char POLICY_KEY = 0; /* its address keys the policy */

static policy *get_policy(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &POLICY_KEY);
  policy *p = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return p;
}

void mplua_set_interactive(lua_State *L, int on) {
  policy *p = get_policy(L);
  if (p) p->interactive = on;
}

void mplua_set_progress(lua_State *L, mplua_progressfn fn, void *ud) {
  policy *p = get_policy(L);
  if (p) {
    p->progress = fn;
    p->progress_ud = ud;
  }
}

void host_note_served(lua_State *L) {
  policy *p = get_policy(L);
  if (p) p->served = 1;
}

/* Write an error message, with the program's name unless interactive. */
static void message(lua_State *L, const char *msg) {
  const policy *p = get_policy(L);
  fflush(stdout);
  if (p && p->interactive)
    fprintf(stderr, "%s\n", msg);
  else
    fprintf(stderr, "%s: %s\n", p ? p->progname : "mplua", msg);
  fflush(stderr);
}

/* The string of an error object through its __tostring (run protected: a
** report must not raise). */
static int meta_tostring(lua_State *L) {
  if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
  return 0;
}

const char *mplua_errmsg(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TSTRING || lua_type(L, idx) == LUA_TNUMBER)
    return lua_pushstring(L, lua_tostring(L, idx));
  lua_pushcfunction(L, meta_tostring);
  lua_pushvalue(L, idx);
  if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
    return lua_tostring(L, -1);
  lua_pop(L, 1);
  return lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, idx));
}

/* os.exit on rank 0 ends every rank: stop a running task, tell the workers.
** Also a stock lua5.4's os.exit once `mp` has started the runtime there
** (module.c): lua's own would leave the workers waiting and MPI running. */
int host_leader_exit(lua_State *L) {
  int status;
  if (lua_isboolean(L, 1)) status = lua_toboolean(L, 1) ? EXIT_SUCCESS : EXIT_FAILURE;
  else status = (int)luaL_optinteger(L, 1, EXIT_SUCCESS);
  int close = lua_toboolean(L, 2);
  mpb_state *st = mpb_get(L);
  if (st->in_task) {
    mpb_abort_begin(st);
    mpb_resync(L, st);
  }
  fflush(stdout);
  mpb_task_exit(st, status);
  const policy *pol = get_policy(L);
  if (close && !(pol && (pol->out & MPLUA_OUT_SIGNALS))) { /* as lua: __close handlers
    ** and finalizers run (workers are gone) */
    signal(SIGINT, SIG_IGN); /* the runtime's handler would touch the closed state */
    signal(SIGUSR1, SIG_IGN);
  }
  mpb_end_process(L, status, close);
  return 0;
}

/* ------------------------------------------------- the host's decisions */
/* The progress line: handed to the host's function when it set one (the
** front end keeps it below the output), else drawn on stderr when it is a
** terminal; erased when done. */
static void show_progress(lua_State *L, const mpb_progress *p, void *ud) {
  char line[160];
  double rate = p->elapsed > 0 ? (double)p->done / p->elapsed : 0;
  const policy *pol = get_policy(L);
  (void)ud;
  if (!(pol && pol->progress) && !isatty(STDERR_FILENO)) return;
  if (p->final) {
    line[0] = '\0';
  } else if (p->total >= 0) {
    char eta[32] = "?";
    if (p->total > 0 && rate > 0)
      snprintf(eta, sizeof eta, "%.0fs", (double)(p->total - p->done) / rate);
    snprintf(line, sizeof line, "%s: %lld/%lld done, %.0f/s, ETA %s", p->what,
             (long long)p->done, (long long)p->total, rate, eta);
  } else {
    snprintf(line, sizeof line, "%s: %lld done, %.0f/s", p->what, (long long)p->done, rate);
  }
  if (pol && pol->progress) {
    pol->progress(pol->progress_ud, p->final ? NULL : line);
    return;
  }
  fprintf(stderr, "\r\033[K%s", line);
  fflush(stderr);
}

static void warn_stderr(lua_State *L, const char *msg, void *ud) {
  (void)L, (void)ud;
  fflush(stdout);
  fprintf(stderr, "%s\n", msg);
  fflush(stderr);
}

/* Batch mode: a fault ends the job after its report, whoever catches it. */
static void batch_fault(lua_State *L, void *ud) {
  (void)ud;
  message(L, mplua_errmsg(L, -1));
  mpb_task_exit(mpb_get(L), 1);
  mpb_end_process(L, 1, 0);
}

/* os.exit in a host that keeps its process (MPLUA_OUT_EXIT). */
static int no_exit(lua_State *L) {
  return luaL_error(L, "os.exit: this program keeps its process (it opened mplua with "
                       "MPLUA_OUT_EXIT)");
}

static int open_all(lua_State *L) {
  const mplua_config *c = lua_touserdata(L, 1);
  int *argc = lua_touserdata(L, 2);
  char ***argv = lua_touserdata(L, 3);
  const char *name = lua_touserdata(L, 4);
  if (c->out & MPLUA_OUT_ENV) { /* as lua -E: package ignores LUA_PATH and LUA_CPATH */
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  size_t len = strlen(name);
  policy *pol = lua_newuserdatauv(L, sizeof *pol + len + 1, 0);
  memset(pol, 0, sizeof *pol);
  pol->out = c->out;
  memcpy(pol->progname, name, len + 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &POLICY_KEY);
  luaL_openlibs(L);
  /* as lua.c: Lua 5.4's interpreter collects in generational mode, so a
  ** program runs under mplua with the collector it has under lua5.4 (and
  ** received long strings, new objects that die young, are cheap to free) */
  lua_gc(L, LUA_GCGEN, 0, 0);
  char err[MPB_ERRLEN];
  mpb_opts o = {c->use_mpi, c->comm, 0};
  if (c->out & MPLUA_OUT_SIGNALS) o.out |= MPB_OUT_SIGNALS;
  if (c->out & MPLUA_OUT_TIMER) o.out |= MPB_OUT_TIMER;
  if (!mpb_start(L, &o, argc, argv, err, sizeof err))
    return luaL_error(L, "cannot start the runtime: %s", err);
  if (!(c->out & MPLUA_OUT_STDIO)) /* ranks share mpiexec's pipe: keep lines whole */
    host_lines(L, mpb_get(L)->rank);
  luaL_requiref(L, "mp", luaopen_mp, 1);
  luaL_requiref(L, "ad", mpb_open_ad, 1);
  lua_pop(L, 2);
  /* the Lua library (optimizers, samplers) is found without configuration */
  host_add_libdir(L, !(c->out & MPLUA_OUT_ENV));
  mpb_state *st = mpb_get(L);
  st->host.progress = show_progress;
  st->host.warn = warn_stderr;
  if (st->rank == 0 || (c->out & MPLUA_OUT_EXIT)) {
    lua_getglobal(L, "os");
    lua_pushcfunction(L, (c->out & MPLUA_OUT_EXIT) ? no_exit : host_leader_exit);
    lua_setfield(L, -2, "exit");
    lua_pop(L, 1);
  }
  return 0;
}

void mplua_config_init(mplua_config *c) {
  c->use_mpi = 1;
  c->comm = MPI_COMM_NULL;
  c->out = 0;
  c->progname = NULL;
}

lua_State *mplua_open(int *argc, char ***argv, int use_mpi) {
  mplua_config c;
  mplua_config_init(&c);
  c.use_mpi = use_mpi;
  return mplua_open_config(argc, argv, &c);
}

lua_State *mplua_open_config(int *argc, char ***argv, const mplua_config *c) {
  const char *name = c->progname;
  if (!name && argv && *argv && (*argv)[0] && (*argv)[0][0]) name = (*argv)[0];
  if (!name) name = "mplua";
  /* Messages of a few MiB are allocated and freed at a high rate (receive
  ** buffers, Lua strings): served from fresh mmaps, every one of them costs
  ** page faults that take longer than the transfer itself. Keep them in the
  ** heap instead. */
  if (!(c->out & MPLUA_OUT_MALLOPT)) {
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    mallopt(M_TOP_PAD, 64 << 20);
  }
  lua_State *L = luaL_newstate();
  if (!L) {
    fprintf(stderr, "%s: cannot create state: not enough memory\n", name);
    return NULL;
  }
  lua_pushcfunction(L, open_all);
  lua_pushlightuserdata(L, (void *)c);
  lua_pushlightuserdata(L, argc);
  lua_pushlightuserdata(L, argv);
  lua_pushlightuserdata(L, (void *)name);
  if (lua_pcall(L, 4, 0, 0) != LUA_OK) {
    fprintf(stderr, "%s: %s\n", name, lua_tostring(L, -1));
    lua_close(L);
    return NULL;
  }
  mplua_set_batch(L, 0);
  return L;
}

int mplua_rank(lua_State *L) { return mpb_get(L)->rank; }
int mplua_size(lua_State *L) { return mpb_get(L)->size; }

/* mp.batch tells a script whether a fault it catches still ends the job. */
void mplua_set_batch(lua_State *L, int on) {
  mpb_get(L)->host.fault = on ? batch_fault : NULL;
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "mp") == LUA_TTABLE) {
    lua_pushboolean(L, on);
    lua_setfield(L, -2, "batch");
  }
  lua_pop(L, 2);
}

void mplua_report(lua_State *L, int status) {
  if (status != LUA_OK) {
    int top = lua_gettop(L);
    message(L, mplua_errmsg(L, -1));
    lua_settop(L, top - 1);
  }
}

/* lua.c's message handler (the runtime's), except that a task's report,
** which carries the faulting rank's traceback, gets no second one. */
static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg != NULL && strstr(msg, "\nstack traceback:") != NULL)
    return 1;
  return mpb_msgh(L);
}

int mplua_docall(lua_State *L, int nargs, int nres) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  int status = lua_pcall(L, nargs, nres, base);
  lua_remove(L, base);
  return status;
}

int mplua_run_all(lua_State *L, const char *file) {
  lua_getglobal(L, "mp");
  lua_getfield(L, -1, "include");
  lua_remove(L, -2);
  lua_pushstring(L, file);
  int status = mplua_docall(L, 1, 0);
  mplua_report(L, status);
  return status == LUA_OK ? 0 : 1;
}

void mplua_interrupt(void) { mpb_interrupt(); }

void mplua_interrupt_clear(void) { mpb_interrupt_clear(); }

int mplua_target(lua_State *L) { return mpb_tasks_of(mpb_get(L))->connect; }

static int remote_main(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_pushinteger(L, mpb_tasks_of(st)->connect);
  lua_insert(L, 1);
  int n = mpb_task_run(L, st, MPB_TASK_LINE, 2, "connect");
  int base = lua_gettop(L) - n;
  size_t len;
  const char *out = lua_tolstring(L, base + 2, &len);
  if (out && len) {
    fwrite(out, 1, len, stdout);
    fflush(stdout);
  }
  int target = mpb_tasks_of(st)->connect;
  if (lua_toboolean(L, base + 3)) mpb_tasks_of(st)->connect = 0; /* mp.disconnect() ran there */
  if (!lua_toboolean(L, base + 1)) {
    lua_pushfstring(L, "[rank %d] %s", target, n > 3 ? lua_tostring(L, base + 4) : "?");
    return lua_error(L);
  }
  return n - 3;
}

int mplua_remote(lua_State *L) {
  int base = lua_gettop(L) - 1;
  lua_pushcfunction(L, remote_main);
  lua_insert(L, base + 1);
  int status = lua_pcall(L, 1, LUA_MULTRET, 0);
  (void)base;
  return status;
}

static int worker_main(lua_State *L) {
  lua_pushinteger(L, mpb_worker_loop(L, mpb_get(L)));
  return 1;
}

int mplua_worker(lua_State *L) {
  lua_pushcfunction(L, worker_main);
  if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
    /* the loop itself failed (out of memory): nothing can resynchronize */
    const policy *pol = get_policy(L);
    fprintf(stderr, "%s: [rank %d] worker loop failed: %s\n", pol ? pol->progname : "mplua",
            mplua_rank(L), lua_tostring(L, -1));
    mpb_abort_job(mpb_get(L)->base, 1);
  }
  int status = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return status;
}

int mplua_close(lua_State *L, int status) {
  if (!L) return status;
  fflush(stdout);
  mpb_state *st = mpb_get(L);
  /* workers idle in mplua_worker wait for this; a host's that stepped
  ** mplua_serve are back in its code */
  const policy *pol = get_policy(L);
  if (st->rank == 0 && !(pol && pol->served)) mpb_task_exit(st, status);
  if (st->use_mpi && st->own_mpi && !mpb_all_local(st)) mpb_end_process(L, status, 1);
  lua_close(L); /* the runtime's __gc finalizes MPI */
  return status;
}

MPI_Comm mplua_comm(lua_State *L) { return mpb_ccomm(mpb_get(L)); }
