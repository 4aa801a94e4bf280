/* SPDX-License-Identifier: MIT */
/*
** SIGINT taken by a thread other than the one that runs rank 0's state (the
** kernel hands a process's signal to any thread that does not block it,
** MPI's own threads too). The handler must not hook the state from there
** (lua_sethook beside the thread it hooks is a data race): it passes the
** signal on to the state's thread, where it interrupts the running Lua as
** Ctrl-C does.
**
** The main thread opens the state and blocks SIGINT; a second thread
** raises SIGINT on itself. Once it is over the state must still be
** unhooked (the signal waits, pending, on the main thread); when the main
** thread unblocks SIGINT, a long loop is then interrupted.
** Prints "ok ..." lines; any failure prints FAIL and exits 1.
*/
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "mplua.h"

static lua_State *L;
static int hooked_from_thread;

static void *raiser(void *ud) {
  (void)ud;
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &s, NULL);
  raise(SIGINT); /* this thread's: the handler has run when raise returns */
  hooked_from_thread = lua_gethook(L) != NULL;
  return NULL;
}

static int failed(const char *what) {
  printf("FAIL: %s\n", what);
  return 1;
}

int main(int argc, char **argv) {
  L = mplua_open(&argc, &argv, 0);
  if (!L) return failed("mplua_open");
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  pthread_sigmask(SIG_BLOCK, &s, NULL);
  pthread_t t;
  if (pthread_create(&t, NULL, raiser, NULL) != 0 || pthread_join(t, NULL) != 0)
    return failed("pthread");
  if (hooked_from_thread) return failed("the other thread's handler hooked the state");
  printf("ok the other thread left the state alone\n");
  pthread_sigmask(SIG_UNBLOCK, &s, NULL); /* the signal passed on arrives */
  if (luaL_loadstring(L, "local x = 0 for i = 1, 2e8 do x = x + i end return x") != LUA_OK)
    return failed("load");
  int status = mplua_docall(L, 0, 0);
  const char *msg = status != LUA_OK ? lua_tostring(L, -1) : NULL;
  if (!msg || !strstr(msg, "interrupted!")) return failed("the loop was not interrupted");
  printf("ok the state's thread was interrupted\n");
  return mplua_close(L, 0);
}
