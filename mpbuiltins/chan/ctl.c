/* SPDX-License-Identifier: MIT */
/*
** The control channel: commands and the abort protocol travel on a
** communicator of their own (never with user data). What a kind of control
** message means is decided by the layer that registers a handler for it
** (tasks/ registers them all); a kind without a handler is kept in
** st->cmdq for whoever waits for it. The control channel cannot lose a
** message: a failure here ends the job with a report.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/ctl.h"
#include "chan/outbox.h"
#include "chan/wake.h"

void mpb_ctl_on(mpb_state *st, int kind, mpb_ctl_fn fn) {
  if (kind > 0 && kind < MPB_NCTL) st->ctl_handler[kind] = fn;
}

void mpb_ctl_dispatch(mpb_state *st, mpb_msg *m) {
  mpb_chdr h;
  if (m->len < sizeof h) { /* not from mplua */
    mpb_msg_free(m);
    return;
  }
  memcpy(&h, m->buf, sizeof h);
  mpb_ctl_fn fn = h.kind > 0 && h.kind < MPB_NCTL ? st->ctl_handler[h.kind] : NULL;
  if (fn) fn(st, m, &h);
  else mpb_queue_push(&st->cmdq, m);
}

void mpb_ctl_send(mpb_state *st, int dst, int kind, int64_t task, int32_t arg,
                  int64_t value, const void *body, size_t len) {
  char *buf = len <= SIZE_MAX - sizeof(mpb_chdr) ? malloc(sizeof(mpb_chdr) + len) : NULL;
  if (!buf) mpb_fatal(st, "out of memory on the control channel");
  mpb_chdr h = {task, kind, arg, value};
  memcpy(buf, &h, sizeof h);
  if (len) memcpy(buf + sizeof h, body, len);
  char what[64];
  snprintf(what, sizeof what, "cannot send on the control channel to rank %d", dst);
  int rc = mpb_post_send(st, &st->csends, buf, sizeof h + len, buf, LUA_NOREF, dst, kind, st->ctl);
  if (rc != MPI_SUCCESS) mpb_fatal_mpi(st, rc, what);
  int done; /* push it out now, then wake the receiver if it naps */
  if ((rc = MPI_Test(&st->csends->req, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
    mpb_fatal_mpi(st, rc, what);
  mpb_wake(st, dst, 1);
}
