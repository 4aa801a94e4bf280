# SPDX-License-Identifier: MIT
# Debian packages: in a build configured with -DCMAKE_INSTALL_PREFIX=/usr
# (so that GNUInstallDirs picks the multiarch lib/<triplet>), `cpack -G DEB`
# makes one package per install component, split as Debian splits a Lua
# library:
#   libmplua0     lib   the shared library (package name from its SONAME)
#   libmplua-dev  dev   mplua.h, libmplua.so, libmplua.a, mplua.pc, the CMake
#                       package, mplua(3)
#   lua-mplua     lua   mp.so and ad.so for stock lua5.4, the Lua library (mplua.*)
#   mplua         bin   the program, mplua(1), the examples
#   lua-mplua-fftw fftw mp.fft's FFTW plug-in (when FFTW was found): FFTW is
#                       GPL-2+, so the one file that links it is a package
#                       of its own that nothing else depends on
# Dependencies on other packages come from dpkg-shlibdeps (run-time
# libraries) plus the ones named below; between these packages, the same
# version exactly.
set(CPACK_PACKAGE_NAME mplua)
set(CPACK_PACKAGE_VENDOR "the mplua authors")
# a packager names the maintainer: -DCPACK_PACKAGE_CONTACT="Name <address>"
if(NOT CPACK_PACKAGE_CONTACT)
  set(CPACK_PACKAGE_CONTACT "the mplua authors")
endif()
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_CURRENT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lib dev lua bin)
if(MPLUA_HAVE_FFTW)
  list(APPEND CPACK_COMPONENTS_ALL fftw)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# stripped, with the debugging symbols in <package>-dbgsym (.ddeb), as Debian does
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
# libmplua.so.0 is found in the build (it is in no installed package yet)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_CURRENT_BINARY_DIR}/lib)
set(_same "(= ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE})")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME libmplua${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
# The shlibs file (which package provides a SONAME, for other packages'
# dpkg-shlibdeps) belongs to libmplua0 alone. CPack's GENERATE_SHLIBS applies
# to every package and wants a SONAME on each shared object, and mp.fft's
# plug-in, which only dlopen loads and nothing links, rightly has none.
set(_shlibs ${MPLUA_GEN}/debian/shlibs)
file(WRITE ${_shlibs} "libmplua ${PROJECT_VERSION_MAJOR} ${CPACK_DEBIAN_LIB_PACKAGE_NAME} \
(>= ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE})\n")
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_SOURCE_DIR}/scripts/debian/triggers ${_shlibs})
unset(_shlibs)
set(CPACK_COMPONENT_LIB_DESCRIPTION "Message Passing Lua: the shared library
mplua runs Lua 5.4 on every rank of an MPI job, with message passing (mp)
and automatic differentiation (ad). This package holds libmplua, the
embedding library a C host (or stock lua5.4 through lua-mplua) loads.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libmplua-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
  "${CPACK_DEBIAN_LIB_PACKAGE_NAME} ${_same}, liblua5.4-dev, libmpich-dev")
set(CPACK_COMPONENT_DEV_DESCRIPTION "Message Passing Lua: development files
The header mplua.h, the static library, pkg-config and CMake files for C
codes that embed mplua, and the manual page mplua(3).")

set(CPACK_DEBIAN_LUA_PACKAGE_NAME lua-mplua)
set(CPACK_DEBIAN_LUA_PACKAGE_SECTION interpreters)
set(CPACK_DEBIAN_LUA_PACKAGE_DEPENDS "${CPACK_DEBIAN_LIB_PACKAGE_NAME} ${_same}")
set(CPACK_DEBIAN_LUA_PACKAGE_RECOMMENDS "lua5.4, mpich")
set(CPACK_COMPONENT_LUA_DESCRIPTION "Message Passing Lua: the mp and ad modules for Lua 5.4
The modules mp and ad for a stock lua5.4 under mpiexec, and the Lua
library (mplua.optim, mplua.hmc, ...).")

set(CPACK_DEBIAN_BIN_PACKAGE_NAME mplua)
set(CPACK_DEBIAN_BIN_PACKAGE_SECTION interpreters)
set(CPACK_DEBIAN_BIN_PACKAGE_DEPENDS
  "${CPACK_DEBIAN_LIB_PACKAGE_NAME} ${_same}, lua-mplua ${_same}, mpich")
set(CPACK_COMPONENT_BIN_DESCRIPTION "Message Passing Lua: the mplua program
Lua 5.4 on every rank of an MPI job: rank 0 runs a script or a prompt
(mplua -n 4 starts the job and stays in front of it), the other ranks
run the parallel tasks rank 0 starts.")
set(CPACK_DEBIAN_FFTW_PACKAGE_NAME lua-mplua-fftw)
set(CPACK_DEBIAN_FFTW_PACKAGE_SECTION interpreters)
set(CPACK_DEBIAN_FFTW_PACKAGE_DEPENDS "lua-mplua ${_same}")
set(CPACK_COMPONENT_FFTW_DESCRIPTION "Message Passing Lua: local FFTs for mp.fft (FFTW)
The module mplua.fftw, which mp.fft loads for its local transforms. It
links FFTW 3, which is GPL-2+: this package as distributed is under the
GPL-2+ (the rest of mplua is MIT).")
unset(_same)

# Debian's copyright and changelog files in each package's documentation
# directory (dated SOURCE_DATE_EPOCH when set)
string(TIMESTAMP MPLUA_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
set(MPLUA_DEB_VERSION ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE})
configure_file(scripts/debian/changelog.in ${MPLUA_GEN}/debian/changelog.Debian @ONLY)
set(_changelog ${MPLUA_GEN}/debian/changelog.Debian)
if(MPLUA_GZIP)
  add_custom_command(OUTPUT ${_changelog}.gz
    COMMAND ${MPLUA_GZIP} -9nc ${_changelog} > ${_changelog}.gz DEPENDS ${_changelog} VERBATIM)
  add_custom_target(mplua_deb_changelog ALL DEPENDS ${_changelog}.gz)
  set(_changelog ${_changelog}.gz)
endif()
foreach(comp ${CPACK_COMPONENTS_ALL})
  string(TOUPPER ${comp} _c)
  install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/scripts/debian/copyright ${_changelog}
    DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${CPACK_DEBIAN_${_c}_PACKAGE_NAME}
    COMPONENT ${comp} EXCLUDE_FROM_ALL)
endforeach()
unset(_changelog)
# cpack refuses a build configured for another prefix (its libraries and
# modules would not be in the multiarch directories)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_SOURCE_DIR}/scripts/cmake/package_check.cmake)
set(CPACK_MPLUA_CONFIGURED_PREFIX ${CMAKE_INSTALL_PREFIX})
include(CPack)
