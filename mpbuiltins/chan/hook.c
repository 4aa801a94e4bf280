/*
** Keeping long pure-Lua computations interruptible (DESIGN.md section 4),
** and Ctrl-C.
**
** During a task a periodic SIGALRM sets a count hook on the thread that is
** running Lua (lua.c's SIGINT technique: the handler only sets the hook;
** the hook runs at a safe point), and the hook polls the channel: a rank
** spinning in `while true do end` still sees an abort. The running thread
** is known because coroutine.resume and coroutine.wrap are replaced by
** versions that record which coroutine runs (a coroutine made before the
** task, or one nested in another, is hooked like the main thread). A hook
** the user set (a profiler, a coverage tool) is saved when ours replaces it
** and put back when ours has run; ours passes call and return events on to
** it.
**
** SIGINT (and SIGUSR1, which hydra forwards as often as it comes) on rank
** 0 interrupts the running command; in a task that means stopping the task
** on every rank, whatever rank 0's code catches. As in lua.c, the first
** SIGINT restores the default action until the interrupt has been taken, so
** a second one ends a process stuck in a C call.
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "chan/chan.h"

volatile sig_atomic_t mpb_sigint = 0;

static lua_State *volatile running;     /* the thread running Lua now */
static volatile sig_atomic_t armed;     /* a task is running: the timer hooks */
static volatile sig_atomic_t leader;    /* rank 0: SIGINT hooks too */
static int alarm_on, sigint_on, poll_ms = 50;
/* A host that takes no timer (MPB_OUT_TIMER, MPB_OUT_SIGNALS): during a task
** the running thread keeps a count hook of this many instructions instead. */
static int count_mode;
#define COUNT_POLL (1 << 17)

/* The hook a user had on a thread before ours replaced it. */
static struct {
  lua_State *L;
  lua_Hook fn;
  int mask, count;
} saved;

static void poll_hook(lua_State *L, lua_Debug *ar);

/* Put ours on L, saving what was there (called from signal handlers too:
** only lua_gethook*, lua_sethook and plain stores). */
static void install(lua_State *L, int mask, int count) {
  lua_Hook h = lua_gethook(L);
  if (h != poll_hook) {
    saved.L = NULL;
    saved.fn = h;
    saved.mask = lua_gethookmask(L);
    saved.count = lua_gethookcount(L);
    saved.L = L;
  }
  lua_sethook(L, poll_hook, mask, count);
}

/* Take ours off L, putting back the user's. */
static void uninstall(lua_State *L) {
  if (lua_gethook(L) != poll_hook) return;
  if (saved.L == L) lua_sethook(L, saved.fn, saved.mask, saved.count);
  else lua_sethook(L, NULL, 0, 0);
}

static void poll_hook(lua_State *L, lua_Debug *ar) {
  uninstall(L);
  if (count_mode && armed && L == running) install(L, LUA_MASKCOUNT, COUNT_POLL);
  if (saved.L == L && saved.fn && ar->event != LUA_HOOKCOUNT && ar->event != LUA_HOOKLINE) {
    int bit = ar->event == LUA_HOOKTAILCALL ? LUA_MASKCALL : 1 << ar->event;
    if (saved.mask & bit) saved.fn(L, ar); /* the event was the user's too */
  }
  mpb_state *st = mpb_get(L);
  mpb_poll(st);
  if (st->gc_wanted) mpb_arrivals_collect(L, st);
  if (st->aborting && st->in_task) {
    if (!st->where[0]) { /* where the abort found this rank */
      char line[96];
      mpb_lua_line(L, line, sizeof line);
      snprintf(st->where, sizeof st->where, "running at %s", line[0] ? line : "?");
    }
    /* keep raising until the task runner has it, even through user pcalls:
    ** at the next instruction, so no user code runs after a pcall caught it */
    install(L, LUA_MASKCOUNT, 1);
    mpb_raise_abort(L);
  }
  mpb_check_interrupt(L, st);
}

static void hook_running(void) {
  lua_State *L = running;
  if (L) install(L, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* ------------------------------------------------------------ signals */
static void on_alarm(int sig) {
  (void)sig;
  if (armed) hook_running();
}

static void on_sigint(int sig);

static void catch_sigint(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sa.sa_handler = on_sigint;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
}

void mpb_interrupt(void) {
  mpb_sigint = 1;
  if (leader) hook_running();
}

static void on_sigint(int sig) {
  if (sig == SIGINT) signal(SIGINT, SIG_DFL); /* a second one ends the process */
  mpb_interrupt();
}

void mpb_check_interrupt(lua_State *L, mpb_state *st) {
  if (!mpb_sigint || st->rank != 0) return;
  mpb_sigint = 0;
  st->waiting.d = NULL; /* raised out of below (see mpb_check_abort) */
  if (st->in_task && !st->where[0]) {
    char line[96];
    mpb_lua_line(L, line, sizeof line);
    snprintf(st->where, sizeof st->where, "running at %s", line[0] ? line : "?");
  }
  if (sigint_on) catch_sigint();
  if (st->in_task && st->on_interrupt) { /* stop the task everywhere */
    st->on_interrupt(st);
    install(L, LUA_MASKCOUNT, 1);
    mpb_raise_abort(L);
  }
  luaL_error(L, "interrupted!");
}

/* -------------------------------------------------------- coroutines */
/* Resume co with the narg values on top of L; returns the count of results
** moved to L, or -1 with the error value on top. Records co as running. */
static int resume(lua_State *L, lua_State *co, int narg) {
  if (!lua_checkstack(co, narg)) {
    lua_pushliteral(L, "too many arguments to resume");
    return -1;
  }
  lua_xmove(L, co, narg);
  lua_State *prev = running;
  int due = armed && prev && lua_gethook(prev) == poll_hook; /* a tick, or an abort */
  if (due) uninstall(prev);
  running = co;
  if (due) hook_running();
  int nres, status = lua_resume(co, L, narg, &nres);
  due = lua_gethook(co) == poll_hook;
  uninstall(co);
  running = prev;
  if (due && armed) hook_running();
  if (status == LUA_OK || status == LUA_YIELD) {
    if (!lua_checkstack(L, nres + 1)) {
      lua_pop(co, nres);
      lua_pushliteral(L, "too many results to resume");
      return -1;
    }
    lua_xmove(co, L, nres);
    return nres;
  }
  lua_xmove(co, L, 1);
  return -1;
}

static int co_resume(lua_State *L) {
  lua_State *co = lua_tothread(L, 1);
  luaL_argexpected(L, co, 1, "coroutine");
  int r = resume(L, co, lua_gettop(L) - 1);
  if (r < 0) {
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_insert(L, -(r + 1));
  return r + 1;
}

static int co_wrapped(lua_State *L) {
  lua_State *co = lua_tothread(L, lua_upvalueindex(1));
  int r = resume(L, co, lua_gettop(L));
  if (r >= 0) return r;
  int stat = lua_status(co);
  if (stat != LUA_OK && stat != LUA_YIELD) { /* an error in it: close its variables */
#if LUA_VERSION_RELEASE_NUM >= 50406
    lua_closethread(co, L);
#else
    lua_resetthread(co);
#endif
    lua_xmove(co, L, 1);
  }
  if (lua_type(L, -1) == LUA_TSTRING) { /* where the error went through */
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  return lua_error(L);
}

static int co_wrap(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_State *co = lua_newthread(L);
  lua_pushvalue(L, 1);
  lua_xmove(L, co, 1);
  lua_pushcclosure(L, co_wrapped, 1);
  return 1;
}

static void replace_coroutine_lib(lua_State *L) {
  if (lua_getglobal(L, "coroutine") == LUA_TTABLE) {
    lua_pushcfunction(L, co_resume);
    lua_setfield(L, -2, "resume");
    lua_pushcfunction(L, co_wrap);
    lua_setfield(L, -2, "wrap");
  }
  lua_pop(L, 1);
}

lua_State *mpb_running(void) { return running; }

/* ------------------------------------------------------------ arming */
void mpb_hook_init(lua_State *L, mpb_state *st) {
  const char *ms = getenv("MPLUA_POLL_MS");
  if (ms && atoi(ms) > 0) poll_ms = atoi(ms);
  running = L;
  leader = st->rank == 0;
  replace_coroutine_lib(L);
  int sig = !(st->out & MPB_OUT_SIGNALS);
  count_mode = !sig || (st->out & MPB_OUT_TIMER);
  if (!count_mode && !alarm_on) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    alarm_on = 1;
  }
  if (sig && st->rank == 0 && !sigint_on) {
    catch_sigint();
    sigint_on = 1;
  }
}

void mpb_hook_close(mpb_state *st) {
  mpb_hook_arm(st, 0);
  armed = 0;
  running = NULL;
}

void mpb_hook_arm(mpb_state *st, int on) {
  armed = on;
  if (!on && running) uninstall(running);
  if (count_mode) {
    if (on && running && st->use_mpi && st->size > 1) install(running, LUA_MASKCOUNT, COUNT_POLL);
    return;
  }
  if (!alarm_on) return;
  struct itimerval it;
  memset(&it, 0, sizeof it);
  if (on && st->use_mpi && st->size > 1) {
    it.it_interval.tv_sec = poll_ms / 1000;
    it.it_interval.tv_usec = (poll_ms % 1000) * 1000;
    it.it_value = it.it_interval;
  }
  setitimer(ITIMER_REAL, &it, NULL);
}
