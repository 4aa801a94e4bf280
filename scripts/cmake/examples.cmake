# SPDX-License-Identifier: MIT
# The C examples (scripts/examples/README.md), built against the library in
# the tree (the tests also build heat_host against the installed tree).
# heat_host: a C solver that lends its field to mplua and steps mplua_serve.
add_executable(heat_host scripts/examples/heat_host.c)
target_link_libraries(heat_host PRIVATE mplua_shared mplua::lua mplua_flags m)

# The same solver stepped from Lua: its kernel as a C module (require
# "heat_kernel") in the build's lib/lua/5.4 beside mp.so, linking no mplua
# library (mplua.h's C API table), and the loop in scripts/examples/heat_lua.lua.
add_library(heat_kernel MODULE scripts/examples/heat_kernel.c)
target_include_directories(heat_kernel PRIVATE ${MPLUA_GEN}/include)
target_link_libraries(heat_kernel PRIVATE mplua_lua_headers MPI::MPI_C mplua_flags)
set_target_properties(heat_kernel PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
  ${CMAKE_CURRENT_BINARY_DIR}/lib/lua/5.4)

# mpi_jacobi: the C translation of scripts/examples/mpi_jacobi.lua (plain MPI).
add_executable(mpi_jacobi scripts/examples/mpi_jacobi.c)
target_link_libraries(mpi_jacobi PRIVATE MPI::MPI_C mplua_flags)

# mpi_read: plain C (stdio, no MPI) reading what scripts/examples/mpi_write.lua writes with MPI-IO.
add_executable(mpi_read scripts/examples/mpi_read.c)
target_link_libraries(mpi_read PRIVATE mplua_flags)
