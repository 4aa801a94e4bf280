# `cmake --install build --prefix P` lays out:
#   P/bin/mplua                      (RPATH $ORIGIN/../lib)
#   P/lib/libmplua.so*, libmplua.a   P/include/mplua/mplua.h (the one public header)
#   P/lib/lua/5.4/{mp,ad}.so         (links to libmplua.so: modules for stock lua5.4)
#   P/share/lua/5.4/mplua/*.lua      (the Lua library: require "mplua.hmc")   P/share/mplua/examples/
#   P/lib/pkgconfig/mplua.pc         P/lib/cmake/mplua/ (find_package(mplua))
include(CMakePackageConfigHelpers)
set(MPLUA_LIBDIR lib)
install(TARGETS mplua RUNTIME DESTINATION bin)
install(TARGETS mplualib LIBRARY DESTINATION ${MPLUA_LIBDIR})
if(MPLUA_STATIC)
  install(TARGETS mplua_static ARCHIVE DESTINATION ${MPLUA_LIBDIR})
endif()
install(FILES ${CMAKE_SOURCE_DIR}/interp/mplua.h DESTINATION include/mplua)
install(DIRECTORY ${CMAKE_BINARY_DIR}/lib/lua/5.4/ DESTINATION ${MPLUA_LIBDIR}/lua/5.4)
file(GLOB MPLUA_LUA_LIB CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/lib/*.lua)
install(FILES ${MPLUA_LUA_LIB} DESTINATION share/lua/5.4/mplua)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/scripts/examples/ DESTINATION share/mplua/examples)

# pkg-config: MPI through its own .pc when the MPI has one (Debian's mpich does)
pkg_check_modules(MPIPC QUIET mpich)
if(MPIPC_FOUND)
  set(MPLUA_PC_REQUIRES "lua5.4 mpich")
  set(MPLUA_PC_CFLAGS "")
else()
  set(MPLUA_PC_REQUIRES "lua5.4")
  list(JOIN MPI_C_INCLUDE_DIRS " -I" _inc)
  set(MPLUA_PC_CFLAGS "-I${_inc}")
endif()
configure_file(${CMAKE_SOURCE_DIR}/scripts/cmake/mplua.pc.in ${CMAKE_BINARY_DIR}/mplua.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/mplua.pc DESTINATION ${MPLUA_LIBDIR}/pkgconfig)

configure_file(${CMAKE_SOURCE_DIR}/scripts/cmake/mplua-config.cmake.in
  ${CMAKE_BINARY_DIR}/mplua-config.cmake @ONLY)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/mplua-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/mplua-config.cmake ${CMAKE_BINARY_DIR}/mplua-config-version.cmake
  DESTINATION ${MPLUA_LIBDIR}/cmake/mplua)

# cpack -G DEB (in the build directory) packages the same tree
set(CPACK_PACKAGE_NAME mplua)
set(CPACK_PACKAGE_CONTACT "mplua maintainers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr/local)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "lua5.4, liblua5.4-dev, mpich, libmpich-dev")
include(CPack)
