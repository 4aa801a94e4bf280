/* SPDX-License-Identifier: MIT */
/*
** The outbox: sends in flight. Each is a record holding its request and
** whatever keeps its bytes alive (a block freed when it is done, or a
** registry ref anchoring zero-copy data); polls progress them. User sends
** are counted for back-pressure (MPB_PENDING_MAX_BYTES) and the abort
** drain; control sends are kept apart.
*/
#include <stdlib.h>

#include "chan/outbox.h"

/* ------------------------------------------------------------- records */
void mpb_sends_record(mpb_state *st, mpb_sendrec **list, mpb_sendrec *s, MPI_Request req,
                      void *own, int ref, size_t len, int dst) {
  s->req = req;
  s->own = own;
  s->ref = ref;
  s->len = len;
  s->dst = dst;
  s->id = ++st->send_ids;
  s->next = *list;
  *list = s;
  if (list == &st->sends && (st->send_bytes += len) > st->send_bytes_peak)
    st->send_bytes_peak = st->send_bytes;
}

int mpb_post_send(mpb_state *st, mpb_sendrec **list, const void *buf, size_t len, void *own,
                  int ref, int dst, int tag, MPI_Comm comm) {
  mpb_sendrec *s = malloc(sizeof *s);
  if (!s) {
    free(own);
    return MPI_ERR_NO_MEM;
  }
  MPI_Request req;
  int rc = MPI_Isend_c(buf, (MPI_Count)len, MPI_BYTE, dst, tag, comm, &req);
  if (rc != MPI_SUCCESS) {
    free(own);
    free(s);
    return rc;
  }
  mpb_sends_record(st, list, s, req, own, ref, len, dst);
  st->bytes_sent += len;
  return MPI_SUCCESS;
}

static int progress_list(mpb_state *st, mpb_sendrec **list) {
  int n = 0;
  for (mpb_sendrec **p = list; *p;) {
    int done = 0;
    int rc = MPI_Test(&(*p)->req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) { /* the request is gone either way: note it, drop it */
      mpb_mpi_note(st, rc, "a send failed");
      done = 1;
    }
    if (done) {
      mpb_sendrec *s = *p;
      *p = s->next;
      if (list == &st->sends) st->send_bytes -= s->len, st->sends_done++;
      if (s->ref != LUA_NOREF) luaL_unref(st->L, LUA_REGISTRYINDEX, s->ref);
      free(s->own);
      free(s);
      n++;
    } else {
      p = &(*p)->next;
    }
  }
  return n;
}

int mpb_sends_progress(mpb_state *st) {
  int n = 0;
  if (st->sends) n += progress_list(st, &st->sends);
  if (st->csends) n += progress_list(st, &st->csends);
  return n;
}

static void free_list(mpb_sendrec **list) {
  while (*list) {
    mpb_sendrec *s = *list;
    *list = s->next;
    free(s->own);
    free(s);
  }
}

void mpb_sends_free(mpb_state *st) {
  free_list(&st->sends);
  free_list(&st->csends);
  free(st->spare_send);
  st->spare_send = NULL;
}

int mpb_sends_gone(mpb_state *st, void *ud) {
  const uint64_t *ids = ud;
  for (mpb_sendrec *s = st->sends; s; s = s->next)
    if (s->id >= ids[0] && s->id <= ids[1]) return 0;
  return 1;
}

int mpb_sends_below_max(mpb_state *st, void *ud) {
  (void)ud;
  return st->send_bytes <= MPB_PENDING_MAX_BYTES;
}

