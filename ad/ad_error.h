/* SPDX-License-Identifier: MIT */
/*
** Error codes of the autodiff core, libuv style: one X-macro list yields the
** negative codes, their names and their messages. Every fallible core
** function returns 0 (AD_OK) or one of these; the core never aborts.
*/
#ifndef AD_ERROR_H
#define AD_ERROR_H

#define AD_ERRNO_MAP(X)                                                   \
  X(NOMEM, "out of memory")                                               \
  X(SIZE, "lengths do not match")                                         \
  X(STALE, "var from a finished tape")                                    \
  X(DEPTH, "too many nested regions")                                     \
  X(NOREGION, "no open region to end")                                    \
  X(ARG, "invalid argument")                                              \
  X(TOOBIG, "tape too large (2^32-2 vars or entries)")                    \
  X(NOSECOND, "no second-order information (precomputed-gradient node)")  \
  X(NOTLEAF, "input var is not a leaf (it has recorded partials)")         \
  X(COUNT, "counts must be non-negative integers")                        \
  X(NOSECOND_OP, "no second-order information for this operation")

enum ad_errno_pos_ {
  AD__EPOS0 = 0,
#define AD_X_(name, msg) AD__EPOS_##name,
  AD_ERRNO_MAP(AD_X_)
#undef AD_X_
  AD__EPOSN
};

enum ad_errno {
  AD_OK = 0,
#define AD_X_(name, msg) AD_E##name = -AD__EPOS_##name,
  AD_ERRNO_MAP(AD_X_)
#undef AD_X_
};

/* "AD_ENOMEM", ...; "AD_UNKNOWN" for an unknown code. */
const char *ad_err_name(int code);
/* Human message; "unknown error" for an unknown code. */
const char *ad_strerror(int code);

#endif
