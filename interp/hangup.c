/* SPDX-License-Identifier: MIT */
/*
** SIGHUP back to what the program was started with.
**
** UCX, the transport under Debian's MPICH, takes SIGHUP as its debug signal
** when its library loads, before main (UCX_DEBUG_SIGNO, default SIGHUP): its
** handler raises UCX's log level and returns, and its wrappers of signal()
** and sigaction() drop any later change to that signal. So a closed
** terminal no longer ended mplua as it ends lua (a script spinning at 1 rank
** ran on, orphaned), and the front end never saw its own hangup. UCX keeps
** the disposition it replaced; ucs_debug_disable_signal puts it back (the
** default action, or nohup's SIG_IGN) and lets go of the signal. Looked up
** by name, and only when the handler is UCX's: an MPI without UCX, or a UCX
** told to leave SIGHUP alone, has nothing to undo.
*/
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <signal.h>
#include <string.h>

#include "host.h"

void host_restore_hangup(void) {
  struct sigaction now;
  Dl_info where;
  union { void (*fn)(int); void *p; } handler, release;
  if (sigaction(SIGHUP, NULL, &now) != 0 || (now.sa_flags & SA_SIGINFO))
    return;
  handler.fn = now.sa_handler;
  if (handler.fn == SIG_DFL || handler.fn == SIG_IGN)
    return;
  if (dladdr(handler.p, &where) == 0 || where.dli_fname == NULL
      || strstr(where.dli_fname, "libucs") == NULL)
    return;
  release.p = dlsym(RTLD_DEFAULT, "ucs_debug_disable_signal");
  if (release.p != NULL)
    release.fn(SIGHUP);
}
