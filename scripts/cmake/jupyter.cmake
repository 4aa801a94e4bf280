# SPDX-License-Identifier: MIT
# The Jupyter kernel (interp/jupyter*.c) goes into the mplua program when
# ZeroMQ, cJSON and OpenSSL's libcrypto are found (Debian: libzmq3-dev,
# libcjson-dev, libssl-dev); without them `mplua --jupyter` says so.
pkg_check_modules(MPLUA_ZMQ IMPORTED_TARGET libzmq)
pkg_check_modules(MPLUA_CJSON IMPORTED_TARGET libcjson)
pkg_check_modules(MPLUA_CRYPTO IMPORTED_TARGET libcrypto)
if(MPLUA_ZMQ_FOUND AND MPLUA_CJSON_FOUND AND MPLUA_CRYPTO_FOUND)
  file(GLOB _jupyter_src CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/interp/jupyter*.c)
  target_sources(mplua PRIVATE ${_jupyter_src})
  target_compile_definitions(mplua PRIVATE MPLUA_JUPYTER=1)
  target_link_libraries(mplua PRIVATE PkgConfig::MPLUA_ZMQ PkgConfig::MPLUA_CJSON
                        PkgConfig::MPLUA_CRYPTO Threads::Threads)
  set(MPLUA_JUPYTER ON)
  message(STATUS "mplua: the Jupyter kernel is built (mplua --jupyter)")
else()
  set(MPLUA_JUPYTER OFF)
  message(STATUS "mplua: no Jupyter kernel (needs libzmq, libcjson and libcrypto)")
endif()
