/* SPDX-License-Identifier: MIT */
/*
** Keeping long pure-Lua computations interruptible (DESIGN.md sections 4
** and 11), and Ctrl-C.
**
** As in lua.c, a signal handler only sets a flag and calls lua_sethook: the
** hook then runs at the main thread's next instruction, a safe point, and
** does the work there. During a task a periodic SIGALRM (every
** MPLUA_POLL_MS, default POLL_MS_DEFAULT) hooks the main thread for one
** instruction, and the hook polls the channel: a rank spinning in
** `while true do end` still sees an abort. Between ticks no hook is set, so
** a loop pays one signal and one poll per tick and nothing per instruction
** (Lua 5.4 sends every instruction of a thread that has a count or line
** hook through luaG_traceexec: a permanent count hook, at any count, makes
** a tight loop about twice as slow).
**
** The hook goes on the main thread only, the one thread whose pointer is
** known for the state's whole life (a signal handler must never touch a
** thread that may have been collected). A coroutine that runs when the
** tick comes is reached when control comes back to the main thread (it
** yields, returns or fails) or when it calls the runtime (every wait polls);
** one that spins in pure Lua without either cannot be interrupted: knowing
** which coroutine runs would take replacing coroutine.resume, or a count
** hook on every coroutine (which a thread inherits only from a hooked
** creator, so the main thread would pay for it too).
**
** A hook the user set (debug.sethook: a profiler, a coverage tool) is left
** alone by the tick: the handler hooks the main thread only when it has no
** hook or ours (it reads the hook field, which Lua declares volatile for
** this use, and writes nothing else). While a user's hook is set on the
** main thread, a pure-Lua loop there is polled only by its waits.
** Interrupts and aborts replace it as lua.c's Ctrl-C does; the one the
** main thread had when the task began is put back when the task ends.
**
** SIGINT (and SIGUSR1, which hydra forwards as often as it comes and the
** front end's link uses) on rank 0 interrupts the running command; in a
** task that means stopping the task on every rank, whatever rank 0's code
** catches. As in lua.c, SIGINT (not SIGUSR1) restores the default action
** until the interrupt has been taken, so a second one ends a process stuck
** in a C call. The kernel hands a process's signal to any thread that does
** not block it (MPI's own threads too); as the tick does, a handler on
** another thread passes the signal on to the thread that runs rank 0's
** state, so lua_sethook never runs beside the thread it hooks.
*/
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "chan/arrive.h"
#include "chan/hook.h"

#define POLL_MS_DEFAULT 5
/* A host that takes no timer (MPB_OUT_TIMER, MPB_OUT_SIGNALS): during a task
** the main thread keeps a count hook of this many instructions instead
** (coroutines made meanwhile inherit it). */
#define COUNT_POLL (1 << 17)

/* Process globals, because the signal handlers read them (signals and the
** interval timer are the process's, not a state's). */
volatile sig_atomic_t mpb_sigint = 0;       /* an interrupt is pending (rank 0) */
static volatile sig_atomic_t sigint_reset;  /* SIGINT is at SIG_DFL until taken */
static lua_State *volatile ticked;          /* the main thread whose task the timer polls */
static pthread_t ticked_thread;             /* the OS thread running it */
/* The main thread an interrupt hooks: the first state opened on rank 0
** (while it is open; then the next one opened). */
static lua_State *volatile interrupt_target;
static pthread_t interrupt_thread;          /* the OS thread that opened it */
static int alarm_on, sigint_on;             /* the handlers are installed (sigaction) */

static void poll_hook(lua_State *L, lua_Debug *ar);

/* Hook a main thread for its next instruction (signal handlers too). */
static void hook_next(lua_State *main) {
  if (main) lua_sethook(main, poll_hook, LUA_MASKCOUNT, 1);
}

/* Where the main thread's hook stands between polls: nothing, or the
** count hook of a host without timers. */
static void unhook(lua_State *L, const mpb_state *st) {
  if (lua_gethook(L) != poll_hook) return;
  if (st->hook.count_mode && st->hook.armed) lua_sethook(L, poll_hook, LUA_MASKCOUNT, COUNT_POLL);
  else lua_sethook(L, NULL, 0, 0);
}

static void note_running(lua_State *L, mpb_state *st) {
  if (st->where[0]) return;
  char line[96];
  mpb_lua_line(L, line, sizeof line);
  snprintf(st->where, sizeof st->where, "running at %s", line[0] ? line : "?");
}

int mpb_raise_abort(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, MPB_ABORT_KEY) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushliteral(L, "mp: task stopped");
  }
  return lua_error(L);
}

void mpb_raise_abort_hooked(lua_State *L) {
  /* keep raising at the main thread's every instruction until the task
  ** runner has it, even through user pcalls and coroutines: no user code
  ** runs after a pcall caught it */
  hook_next(mpb_get(L)->hook.main);
  mpb_raise_abort(L);
}

static void poll_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  mpb_state *st = mpb_get(L);
  unhook(L, st);
  mpb_poll(st);
  if (st->gc_wanted) mpb_arrivals_collect(L, st);
  if (st->aborting && st->in_task) {
    note_running(L, st);
    mpb_raise_abort_hooked(L);
  }
  mpb_check_interrupt(L, st);
}

/* ------------------------------------------------------------ signals */
static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* lua_sethook marks every Lua frame of the thread (Lua 5.4's settraps): a
** tick costs time in proportion to the stack's depth, a few milliseconds
** at a couple of hundred thousand levels, more than the tick's period on a
** loaded machine, so a deep recursion would spend all its time there. So a
** tick is taken only on the task's thread (another thread of the process,
** MPI's, passes it on: it must not walk frames the main thread is
** changing), only when no hook is set (ours pending: nothing to do; a
** user's: never over it), and only after a rest nine times as long as the
** last one took: ticks cost at most a tenth of the time. */
static void on_alarm(int sig) {
  static long long rest_until; /* the handler's alone: SIGALRM is blocked while it runs */
  lua_State *main = ticked;
  if (!main) return;
  if (!pthread_equal(pthread_self(), ticked_thread)) {
    pthread_kill(ticked_thread, sig);
    return;
  }
  if (lua_gethook(main) != NULL) return;
  long long t0 = now_ns();
  if (t0 < rest_until) return;
  hook_next(main);
  rest_until = t0 + 9 * (now_ns() - t0);
}

static void on_sigint(int sig);

static void catch_signal(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sa.sa_handler = on_sigint;
  sigaction(sig, &sa, NULL);
}

/* Whether this thread may hook the interrupt's target; if not, the
** signal goes on to the thread that may (its handler does the rest). */
static int on_target_thread(int sig) {
  if (!interrupt_target || pthread_equal(pthread_self(), interrupt_thread)) return 1;
  if (sigint_on) pthread_kill(interrupt_thread, sig);
  return 0;
}

void mpb_interrupt(void) {
  mpb_sigint = 1; /* without our handlers, the next poll sees the flag */
  if (on_target_thread(SIGUSR1)) hook_next(interrupt_target);
}

static void on_sigint(int sig) {
  if (!on_target_thread(sig)) return;
  if (sig == SIGINT) { /* a second one ends the process */
    signal(SIGINT, SIG_DFL);
    sigint_reset = 1;
  }
  mpb_interrupt();
}

/* SIGINT is caught again once the interrupt is taken or dropped. */
static void recatch_sigint(void) {
  if (sigint_on && sigint_reset) {
    sigint_reset = 0;
    catch_signal(SIGINT);
  }
}

void mpb_interrupt_clear(void) {
  mpb_sigint = 0;
  recatch_sigint();
}

void mpb_check_interrupt(lua_State *L, mpb_state *st) { mpb_take_interrupt(L, st, mpb_sigint); }

void mpb_take_interrupt(lua_State *L, mpb_state *st, int sig) {
  if (!sig || st->rank != 0) return;
  mpb_sigint = 0;
  st->waiting.d = NULL; /* raised out of below (see mpb_check_abort) */
  if (st->in_task) note_running(L, st);
  recatch_sigint();
  if (st->in_task && st->on_interrupt) { /* stop the task everywhere */
    st->on_interrupt(st);
    mpb_raise_abort_hooked(L);
  }
  luaL_error(L, "interrupted!");
}

lua_State *mpb_running(const mpb_state *st) { return st->hook.main; }

/* ------------------------------------------------------------ arming */
void mpb_hook_init(lua_State *L, mpb_state *st) {
  const char *ms = getenv("MPLUA_POLL_MS");
  st->hook.poll_ms = ms && atoi(ms) > 0 ? atoi(ms) : POLL_MS_DEFAULT;
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  st->hook.main = lua_tothread(L, -1);
  lua_pop(L, 1);
  if (st->rank == 0 && !interrupt_target) {
    interrupt_thread = pthread_self();
    interrupt_target = st->hook.main;
  }
  int sig = !(st->out & MPB_OUT_SIGNALS);
  st->hook.count_mode = !sig || (st->out & MPB_OUT_TIMER);
  if (!st->hook.count_mode && !alarm_on) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    alarm_on = 1;
  }
  if (sig && st->rank == 0 && !sigint_on) {
    catch_signal(SIGINT);
    catch_signal(SIGUSR1);
    sigint_on = 1;
  }
}

void mpb_hook_close(mpb_state *st) {
  mpb_hook_arm(st, 0);
  if (interrupt_target == st->hook.main) interrupt_target = NULL;
  st->hook.main = NULL;
}

void mpb_hook_arm(mpb_state *st, int on) {
  lua_State *L = st->hook.main;
  int polls = on && st->use_mpi && st->size > 1;
  if (on && L) { /* the user's hook, to put back when the task ends */
    lua_Hook h = lua_gethook(L);
    st->hook.user_fn = h == poll_hook ? NULL : h;
    st->hook.user_mask = st->hook.user_fn ? lua_gethookmask(L) : 0;
    st->hook.user_count = st->hook.user_fn ? lua_gethookcount(L) : 0;
  }
  st->hook.armed = polls;
  if (!on && L && lua_gethook(L) == poll_hook) {
    lua_sethook(L, st->hook.user_fn, st->hook.user_mask, st->hook.user_count);
    st->hook.user_fn = NULL;
  }
  if (st->hook.count_mode) {
    if (polls && L && !st->hook.user_fn) lua_sethook(L, poll_hook, LUA_MASKCOUNT, COUNT_POLL);
    return;
  }
  if (!alarm_on || (!polls && ticked != L)) return; /* the timer is not this state's */
  if (polls) ticked_thread = pthread_self();
  ticked = polls ? L : NULL;
  struct itimerval it;
  memset(&it, 0, sizeof it);
  if (polls) {
    it.it_interval.tv_sec = st->hook.poll_ms / 1000;
    it.it_interval.tv_usec = (st->hook.poll_ms % 1000) * 1000;
    it.it_value = it.it_interval;
  }
  setitimer(ITIMER_REAL, &it, NULL);
}
