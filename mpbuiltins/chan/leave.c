/* SPDX-License-Identifier: MIT */
/*
** Leaving a job that spans hosts. MPI_Finalize is the way out, except where
** it is known to hang: MPICH before 4.2 with UCX first closes every UCX
** connection, progressing until its own closes are acknowledged, then waits
** in its process manager's barrier without progressing UCX any more. Over
** TCP a close is acknowledged by the peer's progress, so a rank that has
** finished closing leaves a slower peer waiting for ever (openucx/ucx#8738;
** MPICH 4.2 meets in the barrier before closing: pmodels/mpich d6c7cd5).
** No setting avoids it, nor does anything done before MPI_Finalize
** (mpbuiltins/README.md, "Ending across hosts", has the measurements).
**
** There, a rank leaves without MPI_Finalize (interp/mplua.c): after a last
** barrier it tells the process manager it is done, as MPI_Finalize does at
** its very end (PMI-1's "cmd=finalize" on the connection Hydra hands its
** processes, PMI_FD, answered by "cmd=finalize_ack"), and _exits. Without
** that word Hydra takes the first exit for a crash and kills the ranks a
** moment behind it, and a job that ended normally reports failure. This is
** the one place mplua speaks to MPICH's process manager itself, for the
** versions MPI_Get_library_version names as affected; no answer within a
** few seconds leaves as before.
*/
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chan/state.h"

#define ANSWER_MS 5000

int mpb_finalize_may_hang(void) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0, major = 0, minor = 0;
  if (MPI_Get_library_version(v, &len) != MPI_SUCCESS) return 0;
  v[sizeof v - 1] = '\0';
  const char *p = strstr(v, "MPICH Version:");
  if (!p || !strstr(v, "ucx") || sscanf(p + 14, " %d.%d", &major, &minor) != 2) return 0;
  return major < 4 || (major == 4 && minor < 2);
}

static int write_all(int fd, const char *s, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

int mpb_pmi_leave(void) {
  const char *env = getenv("PMI_FD");
  char *end;
  long fd = env ? strtol(env, &end, 10) : -1;
  if (!env || *end || fd < 0 || fd > 1 << 20) return 0;
  static const char cmd[] = "cmd=finalize\n";
  if (write_all((int)fd, cmd, sizeof cmd - 1) != 0) return -1;
  char line[128];
  size_t got = 0;
  while (got < sizeof line - 1) { /* one line back */
    struct pollfd p = {(int)fd, POLLIN, 0};
    int rc = poll(&p, 1, ANSWER_MS);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return -1;
    ssize_t r = read((int)fd, line + got, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    if (line[got++] == '\n') break;
  }
  line[got] = '\0';
  return strstr(line, "finalize_ack") ? 1 : -1;
}
