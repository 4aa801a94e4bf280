# SPDX-License-Identifier: MIT
# Read by cpack (CPACK_PROJECT_CONFIG_FILE): a Debian package is laid out for
# /usr, so it comes from a build configured for /usr.
if(CPACK_GENERATOR STREQUAL "DEB" AND NOT CPACK_MPLUA_CONFIGURED_PREFIX MATCHES "^/usr/?$")
  message(FATAL_ERROR "mplua: Debian packages need a build configured with "
    "-DCMAKE_INSTALL_PREFIX=/usr (this one is for ${CPACK_MPLUA_CONFIGURED_PREFIX})")
endif()
