# SPDX-License-Identifier: MIT
# `cmake --install build --prefix P` lays out (GNUInstallDirs: LIBDIR is lib,
# or lib/<triplet> when P is /usr on Debian):
#   P/bin/mplua                          the program (run path $ORIGIN/../LIBDIR,
#                                        none under /usr)
#   P/LIBDIR/libmplua.so.0*, libmplua.so, libmplua.a
#   P/include/mplua/mplua.h              the one public header
#   P/LIBDIR/lua/5.4/{mp,ad}.so          links to libmplua.so.0: modules for stock lua5.4
#   P/LIBDIR/lua/5.4/mplua/fftw.so       mp.fft's FFTW plug-in (when FFTW was found)
#   P/share/lua/5.4/mplua/*.lua          the Lua library: require "mplua.hmc"
#   P/LIBDIR/pkgconfig/mplua.pc          P/LIBDIR/cmake/mplua/ (find_package(mplua))
#   P/share/man/man1/mplua.1, man3/mplua.3
#   P/share/doc/mplua/examples/
# Every file belongs to one component, which is one Debian package
# (scripts/cmake/package.cmake): lib, dev, lua, bin (and fftw).
include(CMakePackageConfigHelpers)
set(MPLUA_INSTALL_CMODDIR ${CMAKE_INSTALL_LIBDIR}/lua/5.4)
set(MPLUA_INSTALL_LUADIR ${CMAKE_INSTALL_DATADIR}/lua/5.4)
set(MPLUA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/mplua)

install(TARGETS mplua_shared EXPORT mplua-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev)
if(MPLUA_STATIC)
  install(TARGETS mplua_static EXPORT mplua-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
endif()
install(FILES ${MPLUA_GEN}/include/mplua.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mplua
  COMPONENT dev)

install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lib/lua/5.4/mp.so ${CMAKE_CURRENT_BINARY_DIR}/lib/lua/5.4/ad.so
  DESTINATION ${MPLUA_INSTALL_CMODDIR} COMPONENT lua)
file(GLOB MPLUA_LUA_LIB CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/lib/*.lua)
install(FILES ${MPLUA_LUA_LIB} DESTINATION ${MPLUA_INSTALL_LUADIR}/mplua COMPONENT lua)
if(MPLUA_HAVE_FFTW) # the plug-in beside mp.so, found through package.cpath (interp/libdir.c)
  install(TARGETS mplua_fftw LIBRARY DESTINATION ${MPLUA_INSTALL_CMODDIR}/mplua COMPONENT fftw)
endif()

install(TARGETS mplua RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT bin)
set_target_properties(mplua PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
# Under /usr (a distribution's package) the library is where the loader looks:
# no run path (Debian policy).
install(CODE "
  if(CMAKE_INSTALL_PREFIX MATCHES \"^/usr/?$\")
    file(RPATH_REMOVE FILE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/mplua\")
  endif()" COMPONENT bin)
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/scripts/examples/
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT bin)

# Man pages, compressed as Debian ships them when gzip is there.
find_program(MPLUA_GZIP gzip)
foreach(page mplua.1:bin mplua.3:dev)
  string(REPLACE ":" ";" page ${page})
  list(GET page 0 _name)
  list(GET page 1 _comp)
  string(REGEX REPLACE ".*\\." "" _sec ${_name})
  configure_file(scripts/man/${_name}.in ${MPLUA_GEN}/man/${_name} @ONLY)
  set(_page ${MPLUA_GEN}/man/${_name})
  if(MPLUA_GZIP)
    add_custom_command(OUTPUT ${_page}.gz
      COMMAND ${MPLUA_GZIP} -9nc ${_page} > ${_page}.gz DEPENDS ${_page} VERBATIM)
    set(_page ${_page}.gz)
  endif()
  list(APPEND MPLUA_MAN_PAGES ${_page})
  install(FILES ${_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${_sec} COMPONENT ${_comp})
endforeach()
add_custom_target(mplua_man ALL DEPENDS ${MPLUA_MAN_PAGES})

# pkg-config. The prefix is found from the file's own place (the tree may be
# moved); no run path: where the library is found at run time is the
# consumer's choice. MPI through its own .pc when it has one (Debian's
# mpich does); Lua's .pc is lua5.4.
pkg_check_modules(MPLUA_MPIPC QUIET mpich)
set(MPLUA_PC_REQUIRES "lua5.4")
set(MPLUA_PC_CFLAGS "")
set(MPLUA_PC_LIBS "")
if(MPLUA_MPIPC_FOUND)
  string(APPEND MPLUA_PC_REQUIRES " mpich")
else()
  list(JOIN MPI_C_INCLUDE_DIRS " -I" _inc)
  list(JOIN MPI_C_LIBRARIES " " _libs)
  set(MPLUA_PC_CFLAGS "-I${_inc}")
  set(MPLUA_PC_LIBS "${_libs}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(MPLUA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" _up "${_up}")
  set(MPLUA_PC_PREFIX "\${pcfiledir}/${_up}")
endif()
configure_file(scripts/cmake/mplua.pc.in ${MPLUA_GEN}/mplua.pc @ONLY)
install(FILES ${MPLUA_GEN}/mplua.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# find_package(mplua): mplua::mplua, mplua::mplua_static
install(EXPORT mplua-targets NAMESPACE mplua:: FILE mplua-targets.cmake
  DESTINATION ${MPLUA_INSTALL_CMAKEDIR} COMPONENT dev)
configure_package_config_file(scripts/cmake/mplua-config.cmake.in ${MPLUA_GEN}/mplua-config.cmake
  INSTALL_DESTINATION ${MPLUA_INSTALL_CMAKEDIR} PATH_VARS MPLUA_INSTALL_LUADIR MPLUA_INSTALL_CMODDIR)
write_basic_package_version_file(${MPLUA_GEN}/mplua-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${MPLUA_GEN}/mplua-config.cmake ${MPLUA_GEN}/mplua-config-version.cmake
  DESTINATION ${MPLUA_INSTALL_CMAKEDIR} COMPONENT dev)
