# SPDX-License-Identifier: MIT
# The benchmark programs (scripts/bench/README.md): raw-MPI and plain-C
# baselines that run beside mplua in one job. They are hosts of the embedding
# API (libmplua.so), except the autodiff core's (ad_*.c: the core's objects)
# and arraybench, which holds the array kernels to a C loop through the
# library's internals (its objects, linked in).
file(GLOB MPLUA_BENCH_SRC CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/scripts/bench/*.c)
foreach(src ${MPLUA_BENCH_SRC})
  get_filename_component(name ${src} NAME_WE)
  if(name STREQUAL "fftbench" AND NOT MPLUA_HAVE_FFTW)
    continue() # the FFT benchmark's C side is FFTW itself
  endif()
  add_executable(${name} ${src})
  if(name STREQUAL "fftbench")
    target_link_libraries(${name} PRIVATE PkgConfig::FFTW)
  endif()
  if(name MATCHES "^ad_")
    target_link_libraries(${name} PRIVATE mplua_ad)
  elseif(name STREQUAL "arraybench")
    target_link_libraries(${name} PRIVATE mplua_ad mplua_nompi mplua_mpi)
  else()
    target_link_libraries(${name} PRIVATE mplua_shared)
  endif()
  target_link_libraries(${name} PRIVATE mplua::lua mplua_flags m)
endforeach()
# the plain-C baselines of the densities built as the core is (CMakeLists.txt, mplua_ad)
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/scripts/bench/ad_dists.c PROPERTIES
  COMPILE_OPTIONS -fno-math-errno)
