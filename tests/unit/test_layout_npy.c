/* SPDX-License-Identifier: MIT */
/*
** NumPy's .npy header (layout_npy.h): what mp.save writes is what NumPy
** writes for a Fortran-order array (64-byte aligned data), and the parser
** reads NumPy's headers (versions 1 to 3, either order, any spacing) and
** refuses everything else with a message.
*/
#include <criterion/criterion.h>
#include <string.h>

#include "layout/layout_npy.h"

Test(npy, header_as_numpy_writes_it) {
  char buf[256];
  int64_t dims[3] = {7, 5, 4};
  size_t off = mpb_npy_header(0, 3, dims, buf, sizeof buf);
  cr_assert_eq(off, 128);
  cr_assert(memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
  cr_assert_eq((unsigned char)buf[8] | (unsigned char)buf[9] << 8, 118);
  const char *dict = "{'descr': '<f8', 'fortran_order': True, 'shape': (7, 5, 4), }";
  cr_assert(memcmp(buf + 10, dict, strlen(dict)) == 0);
  cr_assert_eq(buf[127], '\n');
  cr_assert_eq(buf[126], ' ');
  int64_t one[1] = {9};
  off = mpb_npy_header(6, 1, one, buf, sizeof buf);
  cr_assert(strstr(buf + 10, "'descr': '<c16'") && strstr(buf + 10, "'shape': (9,)"));
  cr_assert_eq(mpb_npy_header(0, 1, one, buf, 32), 0); /* too small */
  mpb_npy h;
  size_t need;
  cr_assert_null(mpb_npy_parse(buf, off, &h, &need));
  cr_assert(h.dtype == 6 && h.fortran && h.ndim == 1 && h.dims[0] == 9 && h.offset == off);
}

static const char *parse(const char *dict, int version, mpb_npy *h) {
  static char buf[512];
  size_t n = strlen(dict), pre = version == 1 ? 10 : 12;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (char)version, buf[7] = 0;
  buf[8] = (char)n, buf[9] = 0;
  if (version > 1) buf[10] = 0, buf[11] = 0;
  memcpy(buf + pre, dict, n);
  size_t need;
  return mpb_npy_parse(buf, pre + n, h, &need);
}

Test(npy, numpy_headers) {
  mpb_npy h;
  cr_assert_null(parse("{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }   \n", 1, &h));
  cr_assert(h.dtype == 3 && !h.fortran && h.ndim == 2 && h.dims[0] == 3 && h.dims[1] == 4);
  cr_assert_null(parse("{\"shape\":(2,),\"fortran_order\":True,\"descr\":\"|u1\"}", 2, &h));
  cr_assert(h.dtype == 4 && h.fortran && h.dims[0] == 2);
  cr_assert_eq(h.offset, 12 + strlen("{\"shape\":(2,),\"fortran_order\":True,\"descr\":\"|u1\"}"));
  cr_assert_null(parse("{'descr': '<c8', 'fortran_order': False, 'shape': (5L, 6L)}", 3, &h));
  cr_assert(h.dtype == 5 && h.dims[1] == 6);
  cr_assert_str_eq(parse("{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }", 1, &h),
                   "an element type mplua has not (descr: f8, f4, i8, i4, u1, c8, c16, little-endian)");
  cr_assert_str_eq(parse("{'descr': '<f8', 'fortran_order': False}", 1, &h),
                   "the header lacks descr, fortran_order or shape");
  cr_assert_str_eq(parse("{'descr': '<f8', 'extra': 1, 'shape': (3,)}", 1, &h),
                   "an unknown key in the header");
  cr_assert_str_eq(parse("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (3,)}", 1, &h),
                   "fortran_order is not True or False");
  cr_assert_str_eq(parse("{'descr': '<f8', 'fortran_order': True, 'shape': (1,2,3,4,5,6,7,8,9)}", 1, &h),
                   "more than 8 dimensions");
  size_t need;
  cr_assert_str_eq(mpb_npy_parse("\x93NUMPY\x01\x00\x40\x00{", 11, &h, &need), "truncated header");
  cr_assert_eq(need, 74);
  cr_assert_str_eq(mpb_npy_parse("PK\x03\x04 not npy", 14, &h, &need),
                   "not a .npy file (no \\x93NUMPY magic)");
}
