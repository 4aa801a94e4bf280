/* SPDX-License-Identifier: MIT */
/*
** A host that opts out of everything (MPLUA_OUT_ALL) on an MPI it has
** initialized itself: opening and closing mplua changes no signal
** disposition, no timer, no malloc setting, not the state's allocator, and
** reads no LUA_PATH; tasks still work, a busy loop is still interruptible
** (a count hook instead of the timer), os.exit raises, MPI stays usable after
** mplua_close. Then the same checks against the defaults show that they do
** see mplua's changes (the checks can fail). Prints "ok ..." lines on rank 0;
** any failure prints FAIL and exits 1.
*/
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <mpi.h>
#include "lauxlib.h"
#include "lualib.h"
#include "mplua.h"
#include "host_check.h"

static void ok(const char *what) {
  if (rank == 0) printf("ok %s\n", what);
}

typedef struct { struct sigaction sa[NSIG]; } sigset_snap;

static void snap_signals(sigset_snap *s) {
  memset(s, 0, sizeof *s);
  for (int i = 1; i < NSIG; i++) sigaction(i, NULL, &s->sa[i]);
}

/* The first signal whose disposition differs, or 0. */
static int signals_differ(const sigset_snap *a, const sigset_snap *b) {
  for (int i = 1; i < NSIG; i++)
    if (a->sa[i].sa_handler != b->sa[i].sa_handler || a->sa[i].sa_flags != b->sa[i].sa_flags)
      return i;
  return 0;
}

static int timer_on(void) {
  struct itimerval it;
  getitimer(ITIMER_REAL, &it);
  return it.it_interval.tv_sec || it.it_interval.tv_usec || it.it_value.tv_sec || it.it_value.tv_usec;
}

/* glibc serves a 64 MiB block from mmap (mallinfo2's hblkhd grows by it)
** unless the mmap threshold was raised above it (mplua's mallopt does). */
#ifdef __SANITIZE_ADDRESS__
#define MALLOC_CHECKED 0 /* ASan's allocator is not glibc's: mallopt has no effect to see */
#else
#define MALLOC_CHECKED 1
#endif
static int big_block_mmapped(void) {
  if (!MALLOC_CHECKED) return 1;
  size_t n = (size_t)64 << 20, h0 = mallinfo2().hblkhd;
  char *volatile p = malloc(n);
  if (!p) fail("malloc");
  int mm = mallinfo2().hblkhd >= h0 + n;
  free(p);
  return mm;
}

static int l_itimer(lua_State *L) {
  lua_pushboolean(L, timer_on());
  return 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int size, one = 1, sum = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* the host's own traffic first: MPI sets up what it sets up lazily */
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  setenv("LUA_PATH", "/nonexistent-mplua/?.lua", 1);

  sigset_snap before, after;
  snap_signals(&before);
  if (timer_on()) fail("a timer runs before mplua");
  if (!big_block_mmapped()) fail("glibc's default: 64 MiB is mmapped");

  mplua_config c;
  mplua_config_init(&c);
  c.out = MPLUA_OUT_ALL;
  lua_State *L = mplua_open_config(&argc, &argv, &c);
  if (!L) fail("mplua_open_config");
  lua_State *ref = luaL_newstate();
  void *ud, *rud;
  if (lua_getallocf(L, &ud) != lua_getallocf(ref, &rud)) fail("the state's allocator was swapped");
  lua_close(ref);
  ok("allocator unchanged");
  lua_register(L, "itimer", l_itimer);
  snap_signals(&after);
  int sig = signals_differ(&before, &after);
  if (sig) {
    fprintf(stderr, "signal %d (%s) changed by mplua_open\n", sig, strsignal(sig));
    fail("signal dispositions");
  }
  ok("signal dispositions unchanged after open");
  if (!big_block_mmapped()) fail("malloc settings changed by mplua_open");
  ok(MALLOC_CHECKED ? "malloc settings unchanged" : "malloc settings not checked (ASan)");
  if (mplua_rank(L) == 0) {
    run(L, "return not package.path:find('nonexistent-mplua', 1, true)");
    ok("LUA_PATH not read");
    run(L, "return mp.exec(function() return mp.allreduce(1, 'sum') end) == mp.size");
    run(L, "return mp.exec(function() return mp.allreduce(itimer() and 1 or 0, 'max') end) == 0");
    ok("tasks run without a timer");
    if (mplua_size(L) > 1) {
      run(L, "local ok, e = pcall(mp.exec, function() if mp.rank == 1 then error('planned') end "
             "while true do end end) return not ok and tostring(e):find('planned') ~= nil");
      run(L, "return mp.exec(function() return mp.allreduce(1, 'sum') end) == mp.size");
      ok("a busy loop is interrupted by a fault elsewhere (count hook)");
    }
    run(L, "return not pcall(os.exit, 3)");
    ok("os.exit raises");
    mplua_close(L, 0);
  } else {
    mplua_close(L, mplua_worker(L));
  }
  snap_signals(&after);
  if (signals_differ(&before, &after)) fail("signal dispositions after mplua_close");
  if (timer_on()) fail("a timer runs after mplua_close");
  if (!big_block_mmapped()) fail("malloc settings after mplua_close");
  sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (sum != size) fail("MPI after mplua_close");
  ok("nothing changed after close; MPI still usable");

  /* the checks see mplua's changes when it is allowed to make them */
  mplua_config_init(&c);
  L = mplua_open_config(&argc, &argv, &c);
  if (!L) fail("mplua_open_config (defaults)");
  snap_signals(&after);
  if (!signals_differ(&before, &after)) fail("the defaults changed no signal disposition?");
  if (MALLOC_CHECKED && big_block_mmapped()) fail("the defaults left malloc's mmap threshold?");
  ok("the defaults are seen by the same checks");
  if (mplua_rank(L) == 0) mplua_close(L, 0);
  else mplua_close(L, mplua_worker(L));
  MPI_Finalize(); /* mplua never finalizes the host's MPI */
  return 0;
}
