/* SPDX-License-Identifier: MIT */
/* Names and messages of the core's error codes (generated from AD_ERRNO_MAP). */
#include "ad_error.h"

const char *ad_err_name(int code) {
  switch (code) {
    case AD_OK: return "AD_OK";
#define AD_X_(name, msg) case AD_E##name: return "AD_E" #name;
    AD_ERRNO_MAP(AD_X_)
#undef AD_X_
    default: return "AD_UNKNOWN";
  }
}

const char *ad_strerror(int code) {
  switch (code) {
    case AD_OK: return "success";
#define AD_X_(name, msg) case AD_E##name: return msg;
    AD_ERRNO_MAP(AD_X_)
#undef AD_X_
    default: return "unknown error";
  }
}
