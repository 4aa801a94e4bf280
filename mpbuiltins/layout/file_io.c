/* SPDX-License-Identifier: MIT */
/* What the callers of MPI-IO share (file_io.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "array/array.h"
#include "layout/file_io.h"

uint64_t mpb_file_hash(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211u;
  return h;
}

/* ------------------------------------------------------------ agreement */
int mpb_file_agree(lua_State *L, mpb_comm *c, const char *fname, mpb_file_vote mine,
                   mpb_file_vote *all) {
  mpb_state *st = mpb_get(L);
  mpb_coll x = mpb_coll_on(L, st, c, fname, MPB_COLL_FILE);
  mpb_coll_agree(L, &x, &mine, sizeof mine, all);
  for (int r = 0; r < c->size; r++)
    if (all[r].sig != mine.sig || all[r].status != 0) return r;
  return -1;
}

void mpb_file_verdict(lua_State *L, const char *fname, const mpb_file_vote *all, int bad,
                      const char *mine, const char *differs) {
  mpb_state *st = mpb_get(L);
  if (bad < 0) return;
  if (mine)
    mpb_raise_as(L, MPB_ERR_OWN, "mp.%s: " MPB_RANKFMT " %s", fname, st->rank, st->size, mine);
  if (all[bad].status == 0)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " rank %d of the communicator calls it with another %s",
               fname, st->rank, st->size, bad, differs);
  /* bad raises its own error (why, only it knows): this one is its echo,
  ** which the report gives way to */
  mpb_raise_as(L, MPB_ERR_ECHO,
               "mp.%s: " MPB_RANKFMT " rank %d of the communicator failed (it says why)", fname,
               st->rank, st->size, bad);
}

/* ------------------------------------------------------------ views */
MPI_Datatype mpb_file_etype(int dtype) {
  switch (dtype) {
    case MPB_F64: return MPI_DOUBLE;
    case MPB_F32: return MPI_FLOAT;
    case MPB_I64: return MPI_INT64_T;
    case MPB_I32: return MPI_INT32_T;
    case MPB_C64: return MPI_C_FLOAT_COMPLEX;
    case MPB_C128: return MPI_C_DOUBLE_COMPLEX;
    default: return MPI_UINT8_T;
  }
}

/* Checked on every rank before any message: every rank raises the same error. */
void mpb_file_layout_ok(lua_State *L, const mpb_lay *y, int arg, const char *fname) {
  for (int k = 0; k < y->l.ndim; k++)
    if (y->l.extent[k] > INT32_MAX)
      mpb_lay_argerror(L, arg, fname, "extent %I of '%s' is beyond MPI-IO's subarrays (2^31 - 1)",
                       (LUAI_UACINT)y->l.extent[k], y->l.name[k]);
}

/* A box is one run of the file when the dimensions before its first partial
** one are whole and those after it of extent 1 (a split of the last
** dimension): a plain displacement, which ROMIO writes as C's write_at
** does. The int-count subarray type: ROMIO (MPICH 4.0) cannot flatten the
** large-count one (mpb_file_layout_ok refuses what it cannot describe). */
int mpb_file_box(const mpb_lay *y, int me, MPI_Offset *disp, MPI_Datatype *ftype, int *own,
                 const char **what) {
  int nd = y->l.ndim;
  int sizes[MPB_LAYOUT_MAXDIM], sub[MPB_LAYOUT_MAXDIM], start[MPB_LAYOUT_MAXDIM];
  int64_t lo[MPB_LAYOUT_MAXDIM], len[MPB_LAYOUT_MAXDIM], n = 1, at = 0, stride = 1;
  int run = 1, partial = 0;
  mpb_layout_range(&y->l, me, lo, len);
  for (int k = 0; k < nd; k++) {
    sizes[k] = (int)y->l.extent[k], sub[k] = (int)len[k], start[k] = (int)lo[k];
    n *= len[k];
    if (partial && len[k] != 1) run = 0;
    if (len[k] != y->l.extent[k]) partial = 1;
    at += lo[k] * stride;
    stride *= y->l.extent[k];
  }
  MPI_Datatype etype = mpb_file_etype(y->dtype);
  *ftype = etype;
  *own = 0;
  if (run) *disp += (MPI_Offset)at * (MPI_Offset)mpb_dtype_size(y->dtype);
  if (n == 0 || run) return MPI_SUCCESS;
  *what = "MPI_Type_create_subarray";
  int rc = MPI_Type_create_subarray(nd, sizes, sub, start, MPI_ORDER_FORTRAN, etype, ftype);
  if (rc != MPI_SUCCESS) return *ftype = etype, rc;
  *what = "MPI_Type_commit";
  if ((rc = MPI_Type_commit(ftype)) != MPI_SUCCESS) {
    MPI_Type_free(ftype);
    return *ftype = etype, rc;
  }
  *own = 1;
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------ waiting */
typedef struct { MPI_Request *req; MPI_Status *status; int n, rc; } reqs;

static int io_done(mpb_state *st, void *ud) {
  (void)st;
  reqs *q = ud;
  int flag = 0;
  int rc = MPI_Testall(q->n, q->req, &flag, q->status ? q->status : MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) return q->rc = rc, 1;
  return flag;
}

int mpb_file_wait(lua_State *L, MPI_Request *req, int n, MPI_Status *status) {
  mpb_state *st = mpb_get(L);
  reqs q = {req, status, n, MPI_SUCCESS};
  if (n > 0 && !io_done(st, &q)) mpb_wait(L, st, io_done, &q, MPB_WAIT_NOABORT | MPB_WAIT_HOT);
  return q.rc;
}

/* ------------------------------------------------------------ errors */
const char *mpb_file_message(lua_State *L, int rc, const char *what, const char *path) {
  int cls = 0, err = 0;
  if (MPI_Error_class(rc, &cls) == MPI_SUCCESS) {
    if (cls == MPI_ERR_NO_SUCH_FILE) err = ENOENT;
    else if (cls == MPI_ERR_ACCESS) err = EACCES;
    else if (cls == MPI_ERR_FILE_EXISTS) err = EEXIST;
    else if (cls == MPI_ERR_NO_SPACE) err = ENOSPC;
    else if (cls == MPI_ERR_QUOTA) err = EDQUOT;
  }
  if (err) return lua_pushfstring(L, "%s '%s': %s", what, path, strerror(err));
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", rc);
  return lua_pushfstring(L, "%s '%s': %s", what, path, s);
}
