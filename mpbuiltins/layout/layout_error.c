/* SPDX-License-Identifier: MIT */
/* Names and messages of the layout core's error codes (MPB_LAYOUT_ERRNO_MAP). */
#include "layout/layout_error.h"

const char *mpb_layout_err_name(int code) {
  switch (code) {
    case MPB_LAYOUT_OK: return "MPB_LAYOUT_OK";
#define MPB_LAYOUT_X_(name, msg) case MPB_LAYOUT_E##name: return "MPB_LAYOUT_E" #name;
    MPB_LAYOUT_ERRNO_MAP(MPB_LAYOUT_X_)
#undef MPB_LAYOUT_X_
    default: return "MPB_LAYOUT_UNKNOWN";
  }
}

const char *mpb_layout_strerror(int code) {
  switch (code) {
    case MPB_LAYOUT_OK: return "success";
#define MPB_LAYOUT_X_(name, msg) case MPB_LAYOUT_E##name: return msg;
    MPB_LAYOUT_ERRNO_MAP(MPB_LAYOUT_X_)
#undef MPB_LAYOUT_X_
    default: return "unknown error";
  }
}
