# SPDX-License-Identifier: MIT
# The libFuzzer target of the message framing and the decoder
# (tests/fuzz/fuzz_message.c) and the program that writes its seed corpus;
# scripts/fuzz.sh builds them in build-fuzz/ and runs the fuzzer. clang only:
# the library's objects get libFuzzer's coverage instrumentation too.
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "MPLUA_BUILD_FUZZER needs clang (-DCMAKE_C_COMPILER=clang)")
endif()
target_compile_options(mplua_flags INTERFACE -fsanitize=fuzzer-no-link)
foreach(name fuzz_message make_corpus)
  add_executable(${name} tests/fuzz/${name}.c ${MPB}/chan/frame.c)
  target_include_directories(${name} PRIVATE ${MPI_C_INCLUDE_DIRS})
  target_link_libraries(${name} PRIVATE mplua_ad mplua_nompi mplua::lua mplua_flags m)
endforeach()
target_link_options(fuzz_message PRIVATE -fsanitize=fuzzer)
