/* SPDX-License-Identifier: MIT */
/*
** Error codes of the layout core, libuv style (as ad/ad_error.h): one X-macro
** list yields the negative codes, their names and their messages. Every
** fallible layout function returns 0 (or a rank, a count) or one of these.
*/
#ifndef MPB_LAYOUT_ERROR_H
#define MPB_LAYOUT_ERROR_H

#define MPB_LAYOUT_ERRNO_MAP(X)                                                    \
  X(NDIM, "a layout has 1 to 8 dimensions")                                        \
  X(EXTENT, "negative extent")                                                     \
  X(NAME, "dimension names are 1 to 15 letters, digits or _, not starting with a digit, and distinct") \
  X(GRID, "a process grid has 1 to 8 axes of extent 1 or more")                   \
  X(AXIS, "split axis out of range")                                               \
  X(AXISTWICE, "two dimensions split over the same grid axis")                     \
  X(IDLEAXIS, "a grid axis of extent above 1 splits no dimension")                 \
  X(UNEVEN, "extent does not divide evenly over its grid axis (use a balanced split)") \
  X(ORDER, "the memory order is not a permutation of the dimensions")              \
  X(RANK, "rank out of range")                                                     \
  X(INDEX, "global index out of range")                                            \
  X(FIXED, "the fixed grid extents do not divide the number of ranks")             \
  X(WEIGHT, "weights (extents) must be 1 or more")                                \
  X(MATCH, "the layouts do not have the same dimensions (names and extents)")     \
  X(NRANKS, "the layouts are for different numbers of ranks")                    \
  X(FFTDIM, "the dimensions to transform are distinct dimensions of the layout, at least one") \
  X(FFTEMPTY, "a dimension to transform has extent 0")                            \
  X(FFTLOCAL, "no dimension can take over the split of a dimension to transform (each is transformed where it is whole on every rank: leave a dimension that is not split and not still to transform)")

enum mpb_layout_errno_pos_ {
  MPB_LAYOUT__EPOS0 = 0,
#define MPB_LAYOUT_X_(name, msg) MPB_LAYOUT__EPOS_##name,
  MPB_LAYOUT_ERRNO_MAP(MPB_LAYOUT_X_)
#undef MPB_LAYOUT_X_
  MPB_LAYOUT__EPOSN
};

enum mpb_layout_errno {
  MPB_LAYOUT_OK = 0,
#define MPB_LAYOUT_X_(name, msg) MPB_LAYOUT_E##name = -MPB_LAYOUT__EPOS_##name,
  MPB_LAYOUT_ERRNO_MAP(MPB_LAYOUT_X_)
#undef MPB_LAYOUT_X_
};

/* "MPB_LAYOUT_ENDIM", ...; "MPB_LAYOUT_UNKNOWN" for an unknown code. */
const char *mpb_layout_err_name(int code);
/* Human message; "unknown error" for an unknown code. */
const char *mpb_layout_strerror(int code);

#endif
