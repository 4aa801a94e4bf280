# SPDX-License-Identifier: MIT
# Lua 5.4 from its pkg-config file (Debian: lua5.4.pc).
#   PkgConfig::LUA      headers and library, for mplua's programs and tests
#   mplua::lua          the same, global: the interface of mplua::mplua names
#                       it (a host links Lua; the library itself does not)
#   mplua_lua_headers   the headers alone, for the library's objects
pkg_check_modules(LUA REQUIRED IMPORTED_TARGET lua5.4)
if(NOT TARGET mplua::lua)
  add_library(mplua::lua INTERFACE IMPORTED GLOBAL)
  set_target_properties(mplua::lua PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${LUA_INCLUDE_DIRS}"
    INTERFACE_LINK_LIBRARIES "${LUA_LINK_LIBRARIES}")
endif()
add_library(mplua_lua_headers INTERFACE)
target_include_directories(mplua_lua_headers INTERFACE ${LUA_INCLUDE_DIRS})
