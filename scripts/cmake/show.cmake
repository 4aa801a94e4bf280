# SPDX-License-Identifier: MIT
# The prompt's and the notebook's Lua helpers (interp/show.c) are compiled in:
# pretty.lua, complete.lua, display.lua, hostlib.lua, and the rows of the
# reference tables that inspecting a name shows. MPLUA_SHOW_TARGET is the
# target that compiles show.c; the headers go to MPLUA_SHOW_GEN.
foreach(name pretty complete display hostlib)
  set(_h ${MPLUA_SHOW_GEN}/${name}_lua.h)
  add_custom_command(OUTPUT ${_h}
    COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_CURRENT_SOURCE_DIR}/interp/${name}.lua -DOUT=${_h}
            -DNAME=${name}_lua -P ${CMAKE_CURRENT_SOURCE_DIR}/scripts/cmake/embed_lua.cmake
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/interp/${name}.lua
            ${CMAKE_CURRENT_SOURCE_DIR}/scripts/cmake/embed_lua.cmake)
  target_sources(${MPLUA_SHOW_TARGET} PRIVATE ${_h})
endforeach()
set(_refs ${CMAKE_CURRENT_SOURCE_DIR}/mpbuiltins/README.md
    ${CMAKE_CURRENT_SOURCE_DIR}/mpbuiltins/array/README.md
    ${CMAKE_CURRENT_SOURCE_DIR}/mpbuiltins/layout/README.md
    ${CMAKE_CURRENT_SOURCE_DIR}/mpbuiltins/adlib/README.md)
string(REPLACE ";" "\\;" _refs_arg "${_refs}")
add_custom_command(OUTPUT ${MPLUA_SHOW_GEN}/mplua_refs.h
  COMMAND ${CMAKE_COMMAND} "-DIN=${_refs_arg}" -DOUT=${MPLUA_SHOW_GEN}/mplua_refs.h
          -DNAME=mplua_refs -P ${CMAKE_CURRENT_SOURCE_DIR}/scripts/cmake/embed_refs.cmake
  DEPENDS ${_refs} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/cmake/embed_refs.cmake)
target_sources(${MPLUA_SHOW_TARGET} PRIVATE ${MPLUA_SHOW_GEN}/mplua_refs.h)
